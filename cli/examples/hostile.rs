//! A stdio MCP server whose every text is hostile to a terminal, for tern-cli's tests:
//! its name, its tools, prompts and resources, its results, questions, logs, progress,
//! errors and stderr all carry [`HOSTILE`] (an OSC 0 title, an OSC 52 clipboard write,
//! CSI colour and cursor moves, BEL, a C1 CSI, a bidi override, DEL and a lone carriage
//! return). The tests check that none of it reaches the terminal raw.
//!
//! ```sh
//! cargo run -p tern-mcp-cli --example hostile               # JSON-RPC on stdin/stdout
//! cargo run -p tern-mcp-cli --example hostile -- --port 0   # prints `listening on URL`
//! ```
//!
//! Over HTTP its log entries reach the client too: on stdio the SDK's client hands a
//! call only the notifications that name it (progress), and logs name none.
//!
//! Tools: `show` (every kind of content, structured content), `tool_error` (an
//! `isError` result), `rpc_error` (a JSON-RPC error), `noisy` (logs and progress),
//! `form`, `url`, `sample` (one question each) and `all` (the three at once).

use serde_json::{Value, json};
use tern_mcp::ask;
use tern_mcp::http::HttpServer;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::transport::stdio::stdio;
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolResult, ElicitValue, InputRequest, LoggingLevel, method,
};

/// What a terminal would run instead of show, between `<` and `>` so a test can find it.
const HOSTILE: &str = "<\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[31m\u{1b}[2A\u{1b}[2K\u{9b}2J\u{202e}\u{7f}\r>";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn hostile(prefix: &str) -> String {
    format!("{prefix}{HOSTILE}")
}

/// A result with every kind of content, each carrying the hostile text.
fn every_content() -> Result<CallToolOutcome, ToolError> {
    let result: CallToolResult = serde_json::from_value(json!({
        "resultType": "complete",
        "content": [
            {"type": "text", "text": hostile("text")},
            {"type": "resource_link", "name": hostile("link"), "uri": hostile("file:///link")},
            {"type": "image", "data": "AAEC", "mimeType": hostile("image/png")},
            {"type": "resource", "resource": {
                "uri": hostile("test://embedded"), "mimeType": hostile("text/plain"),
                "text": hostile("embedded")
            }}
        ],
        "structuredContent": {"note": hostile("structured")}
    }))
    .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(CallToolOutcome::Complete(result))
}

/// The form question: a hostile message, field titles, descriptions, choice labels, a
/// default and a field name.
fn form() -> Result<InputRequest, ToolError> {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "choice".into(),
        json!({"type": "string", "title": hostile("Pick"), "description": hostile("why"),
            "oneOf": [{"const": "a", "title": hostile("first")}, {"const": "b", "title": "second"}]}),
    );
    properties.insert(
        "note".into(),
        json!({"type": "string", "title": hostile("Note"), "description": hostile("about"),
            "default": hostile("default")}),
    );
    properties.insert(hostile("field"), json!({"type": "string"}));
    let schema = json!({"type": "object", "properties": properties, "required": ["choice"]});
    ask::elicit_form(hostile("message"), schema).map_err(|e| ToolError::new(e.to_string()))
}

fn url() -> InputRequest {
    ask::elicit_url(hostile("visit"), hostile("https://example.com/"))
}

fn sample() -> InputRequest {
    ask::sample(hostile("prompt"), 10)
}

/// What the form's answer was, once given: whether the note kept the server's default
/// byte for byte (the terminal showed it neutralized).
fn answered(ctx: &ToolContext) -> Option<String> {
    let answer = ctx
        .input_responses()?
        .get::<method::Elicit>(&hostile("form"));
    let note = answer
        .and_then(Result::ok)
        .and_then(|a| a.content)
        .and_then(|c| c.get("note").cloned());
    let kept = matches!(note, Some(ElicitValue::String(s)) if s == hostile("default"));
    Some(format!("answered; the note kept its default: {kept}"))
}

/// Asks `questions` under hostile keys until answered.
fn asking(
    ctx: &ToolContext,
    questions: Vec<(String, InputRequest)>,
) -> Result<CallToolOutcome, ToolError> {
    if let Some(text) = answered(ctx) {
        return Ok(CallToolOutcome::Complete(CallToolResult::new(vec![
            ask::text(text),
        ])));
    }
    Ok(ask::input_required(questions, None).into())
}

fn register_tools(mcp: &McpServer) {
    mcp.tool("show")
        .title(hostile("title"))
        .description(hostile("description"))
        .run(|_: NoArgs, _ctx: ToolContext| async { every_content() });
    mcp.tool(hostile("name"))
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("listed only") });
    mcp.tool("tool_error")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Err::<String, _>(ToolError::new(hostile("tool error")))
        });
    mcp.tool("rpc_error")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Err::<String, _>(ToolError::protocol(RpcError::internal(hostile(
                "rpc error",
            ))))
        });
    mcp.tool("noisy")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            ctx.log(LoggingLevel::Info, Value::String(hostile("log")));
            ctx.log(
                LoggingLevel::Warning,
                json!({"detail": hostile("log data")}),
            );
            ctx.progress(1.0, Some(2.0), Some(&hostile("progress")));
            Ok("noisy done")
        });
    mcp.tool("form")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            asking(&ctx, vec![(hostile("form"), form()?)])
        });
    mcp.tool("url")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            asking(&ctx, vec![(hostile("url"), url())])
        });
    mcp.tool("sample")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            asking(&ctx, vec![(hostile("sample"), sample())])
        });
    mcp.tool("all")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            asking(
                &ctx,
                vec![
                    (hostile("form"), form()?),
                    (hostile("url"), url()),
                    (hostile("sample"), sample()),
                ],
            )
        });
}

fn register_the_rest(mcp: &McpServer) {
    mcp.prompt("hostile")
        .title(hostile("title"))
        .description(hostile("description"))
        .run(|_: NoArgs, _ctx| async { Ok(hostile("prompt text")) });
    mcp.resource("test://hostile", hostile("resource"))
        .description(hostile("description"))
        .mime_type(hostile("text/plain"))
        .read(|| async { Ok(hostile("contents")) });
    mcp.resource_template(hostile("test://t/{id}"), hostile("template"))
        .mime_type(hostile("text/plain"))
        .read(
            |_: std::collections::BTreeMap<String, String>, _ctx| async {
                Ok(hostile("template contents"))
            },
        );
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // The server's stderr reaches the user too (tern -vv shows it).
    eprintln!("{}", hostile("stderr"));
    let mcp = McpServer::new(hostile("server"), "1.0.0");
    register_tools(&mcp);
    register_the_rest(&mcp);
    let mut args = std::env::args().skip(1);
    let port: u16 = match (args.next().as_deref(), args.next()) {
        (Some("--port"), Some(port)) => port.parse()?,
        (None, _) => {
            mcp.serve(stdio()).await?;
            return Ok(());
        }
        _ => return Err("usage: hostile [--port PORT]".into()),
    };
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    HttpServer::new(mcp.server()?)
        .serve(listener, shutdown)
        .await?;
    Ok(())
}
