//! The seed's provisioning server and the automatic client, in one process.
//!
//! The low-level server's `tools/call` handler asks which region the database should
//! live in by returning an `InputRequiredResult`; the client's elicitation callback
//! answers, the client retries with the answer and the echoed state, and the tool
//! completes.
//!
//! ```sh
//! cargo run -p tern --example provision
//! ```

use serde_json::json;
use tern::client::{Client, InputContext};
use tern::jsonrpc::RpcError;
use tern::server::{RequestContext, Server};
use tern::transport::memory;
use tern::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestFormParams,
    ElicitRequestFormParamsRequestedSchema, ElicitRequestParams, ElicitResult, ElicitResultAction,
    ElicitValue, InputRequest, InputRequests, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, TextContent, Tool, method,
};

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
    _ctx: RequestContext,
    params: CallToolRequestParams,
) -> Result<tern::types::v2026_07_28::CallToolOutcome, RpcError> {
    let answer = params
        .input_responses
        .as_ref()
        .and_then(|r| r.get::<method::Elicit>("region"))
        .and_then(Result::ok);
    let region = answer
        .as_ref()
        .and_then(|a| a.content.as_ref())
        .and_then(|c| c.get("region"));
    let Some(ElicitValue::String(region)) = region else {
        println!("server: no region yet, asking the client (state \"provision-v1\")");
        let requests = InputRequests([("region".to_owned(), ask_region()?)].into());
        let mut result = InputRequiredResult::new();
        result.input_requests = Some(requests);
        result.request_state = Some("provision-v1".into());
        return Ok(result.into());
    };
    let name = params
        .arguments
        .as_ref()
        .and_then(|a| a.get("name"))
        .and_then(|n| n.as_str())
        .ok_or_else(|| RpcError::invalid_params("`name` is required"))?;
    println!(
        "server: got region {region:?} with state {:?}",
        params.request_state
    );
    let text = format!("Provisioned '{name}' in {region}.");
    Ok(CallToolResult::new(vec![ContentBlock::Text(TextContent::new(text))]).into())
}

/// The seed's low-level server.
fn provision_server() -> tern::Result<Server> {
    Server::builder("Provisioner", "1.0.0")
        .handle::<method::ListTools, _, _>(list_tools)
        .handle::<method::CallTool, _, _>(call_tool)
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
    println!(
        "client: round asks {:?}: {message:?} -> answering eu-west-1",
        ctx.key.unwrap_or_default()
    );
    let mut result = ElicitResult::new(ElicitResultAction::Accept);
    result.content = Some(
        [("region".to_owned(), ElicitValue::from("eu-west-1"))]
            .into_iter()
            .collect(),
    );
    Ok(result)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (client_end, server_end) = memory::pair();
    let server = provision_server()?;
    tokio::spawn(async move { server.serve(server_end).await });

    let client = Client::builder("provision-example", "1.0.0")
        .on_elicitation(handle_elicitation)
        .connect(client_end);
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
