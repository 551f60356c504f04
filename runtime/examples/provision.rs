//! The provisioning server of the feature's original description (a tool that asks which
//! region a database should live in) and the automatic client, in one process.
//!
//! The low-level server's `tools/call` handler asks which region the database should
//! live in by returning an `InputRequiredResult`; the client's elicitation callback
//! answers, the client retries with the answer and the echoed state, and the tool
//! completes. On a 2025-11-25 session (a legacy client) the same handler asks with an
//! `elicitation/create` request instead, since that era has no `InputRequiredResult`.
//!
//! ```sh
//! cargo run -p tern-mcp --example provision
//! ```
//!
//! The same server and client over real transports:
//!
//! ```sh
//! cargo run -p tern-mcp --example provision -- serve --http 127.0.0.1:8080
//! cargo run -p tern-mcp --example provision -- call http://127.0.0.1:8080/mcp
//! cargo run -p tern-mcp --example provision -- serve --stdio     # JSON-RPC on stdin/stdout
//! cargo run -p tern-mcp --example provision -- call "target/debug/examples/provision serve --stdio"
//! ```
//!
//! `call` discovers the server's era; `call --legacy TARGET` opens a 2025-11-25 session
//! instead, as an older client would.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use tern_mcp::client::{Client, ClientBuilder, EraMode, InputContext};
use tern_mcp::http::HttpServer;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::memory;
use tern_mcp::transport::stdio::{ChildProcessTransport, stdio};
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestFormParams,
    ElicitRequestFormParamsRequestedSchema, ElicitRequestParams, ElicitResult, ElicitResultAction,
    ElicitValue, InputRequest, InputRequests, InputRequiredResult, InputResponse, ListToolsResult,
    PaginatedRequestParams, TextContent, Tool, method,
};

/// Set when stdout carries the protocol (`serve --stdio`): the server's narration then
/// goes to stderr.
static NARRATE_TO_STDERR: AtomicBool = AtomicBool::new(false);

fn narrate(line: &str) {
    if NARRATE_TO_STDERR.load(Ordering::Relaxed) {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// The question the server asks: which region should the database live in?
fn ask_region() -> Result<InputRequest, RpcError> {
    let schema: ElicitRequestFormParamsRequestedSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"region": {"type": "string"}},
        "required": ["region"]
    }))
    .map_err(|e| RpcError::internal(e.to_string()))?;
    let params = ElicitRequestFormParams::new("Which region should the database live in?", schema);
    Ok(InputRequest::Elicit(ElicitRequest::new(
        ElicitRequestParams::Form(params),
    )))
}

async fn list_tools(
    _ctx: RequestContext,
    _params: PaginatedRequestParams,
) -> Result<ListToolsResult, RpcError> {
    let schema =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let mut tool = Tool::new(
        serde_json::from_value(schema).map_err(|e| RpcError::internal(e.to_string()))?,
        "provision",
    );
    tool.description = Some("Provision a database. Asks which region to put it in.".into());
    Ok(ListToolsResult::new(vec![tool]))
}

async fn call_tool(
    ctx: RequestContext,
    params: CallToolRequestParams,
) -> Result<tern_mcp::types::v2026_07_28::CallToolOutcome, RpcError> {
    // A careful server checks what it can before it asks the user anything.
    if params.name != "provision" {
        return Err(RpcError::invalid_params(format!(
            "unknown tool {:?}: this server has one tool, provision",
            params.name
        )));
    }
    let name = params
        .arguments
        .as_ref()
        .and_then(|a| a.get("name"))
        .and_then(|n| n.as_str().map(str::to_owned))
        .ok_or_else(|| RpcError::invalid_params("`name` is required"))?;
    let legacy = ctx.era() == tern_mcp::Era::Session;
    let answer = if legacy {
        // A 2025-11-25 session cannot receive an InputRequiredResult: ask the way that
        // era's servers do, with an elicitation/create request, and wait for the answer.
        narrate("server: 2025-11-25 session, asking the client with elicitation/create");
        match ctx.request_input(&ask_region()?).await? {
            InputResponse::Elicit(answer) => Some(answer),
            _ => None,
        }
    } else {
        params
            .input_responses
            .as_ref()
            .and_then(|r| r.get::<method::Elicit>("region"))
            .and_then(Result::ok)
    };
    let region = answer
        .as_ref()
        .and_then(|a| a.content.as_ref())
        .and_then(|c| c.get("region"));
    let Some(ElicitValue::String(region)) = region else {
        if answer.is_some() || legacy {
            // Declined, cancelled, or no region: asking again would only repeat it.
            return Err(RpcError::invalid_params(
                "no region was given: nothing provisioned",
            ));
        }
        narrate("server: no region yet, asking the client (state \"provision-v1\")");
        let requests = InputRequests([("region".to_owned(), ask_region()?)].into());
        let mut result = InputRequiredResult::new();
        result.input_requests = Some(requests);
        result.request_state = Some("provision-v1".into());
        return Ok(result.into());
    };
    narrate(&format!(
        "server: got region {region:?} with state {:?}",
        params.request_state
    ));
    let text = format!("Provisioned '{name}' in {region}.");
    Ok(CallToolResult::new(vec![ContentBlock::Text(TextContent::new(text))]).into())
}

/// The provisioning server, on the low-level layer. The low-level layer seals `requestState` only when asked
/// (`McpServer` does by default): here with a key made at start, so the handler writes
/// and reads "provision-v1" and the wire carries an opaque, authenticated token.
fn provision_server() -> Result<Server, tern_mcp::ConfigError> {
    Server::builder("Provisioner", "1.0.0")
        .handle::<method::ListTools, _, _>(list_tools)
        .handle::<method::CallTool, _, _>(call_tool)
        .seal(RequestStateSecurity::ephemeral())
        .build()
}

async fn handle_elicitation(
    ctx: InputContext,
    params: ElicitRequestParams,
) -> Result<ElicitResult, RpcError> {
    let message = match &params {
        ElicitRequestParams::Form(f) => f.message.clone(),
        ElicitRequestParams::Url(u) => u.message.clone(),
    };
    match ctx.key {
        Some(key) => println!("client: round asks {key:?}: {message:?} -> answering eu-west-1"),
        None => println!("client: the server asks {message:?} -> answering eu-west-1"),
    }
    let mut result = ElicitResult::new(ElicitResultAction::Accept);
    result.content = Some(
        [("region".to_owned(), ElicitValue::from("eu-west-1"))]
            .into_iter()
            .collect(),
    );
    Ok(result)
}

fn provision_client() -> ClientBuilder {
    Client::builder("provision-example", "1.0.0").on_elicitation(handle_elicitation)
}

/// Calls the tool through `client` and prints the result's text.
async fn provision(client: &Client) -> Result<(), Box<dyn std::error::Error>> {
    println!("client: protocol {}", client.protocol_version());
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await?;
    for block in &result.content {
        if let ContentBlock::Text(t) = block {
            println!("{}", t.text);
        }
    }
    Ok(())
}

/// `provision`, `provision serve --stdio`, `provision serve --http ADDR`,
/// `provision call [--legacy] URL_OR_COMMAND`.
#[tokio::main(flavor = "current_thread")]
pub(crate) async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => in_process().await,
        ["serve", "--stdio"] => {
            NARRATE_TO_STDERR.store(true, Ordering::Relaxed);
            Ok(provision_server()?.serve(stdio()).await?)
        }
        ["serve", "--http", addr] => {
            let shutdown = tern_mcp::server::shutdown_signal();
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!("serving on http://{}/mcp", listener.local_addr()?);
            HttpServer::new(provision_server()?)
                .serve(listener, shutdown)
                .await?;
            Ok(())
        }
        ["call", target] => call(target, EraMode::Auto).await,
        ["call", "--legacy", target] => call(target, EraMode::Session).await,
        _ => Err(
            "usage: provision [serve --stdio | serve --http ADDR | call [--legacy] URL_OR_COMMAND]"
                .into(),
        ),
    }
}

/// Runs the automatic client against a URL or a command (a child process on stdio).
async fn call(target: &str, mode: EraMode) -> Result<(), Box<dyn std::error::Error>> {
    let client = provision_client().era(mode);
    let client = if target.starts_with("http://") || target.starts_with("https://") {
        let transport = HttpClientTransport::builder(target).build()?;
        client.connect(Arc::new(transport)).await?
    } else {
        let mut words = target.split_whitespace();
        let program = words.next().ok_or("call needs a URL or a command")?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(words);
        client.connect(ChildProcessTransport::spawn(cmd)?).await?
    };
    provision(&client).await
}

/// The README's demo: server and client in one process over the in-memory transport.
async fn in_process() -> Result<(), Box<dyn std::error::Error>> {
    let (client_end, server_end) = memory::pair();
    let server = provision_server()?;
    tokio::spawn(async move { server.serve(server_end).await });
    provision(
        &provision_client()
            .era(tern_mcp::client::EraMode::Stateless)
            .connect(client_end)
            .await?,
    )
    .await
}
