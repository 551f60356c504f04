//! The server the session tests run: what a 2025-11-25 session hears besides results
//! (progress, logs at three levels, updates of subscribed resources) and a direct-form
//! tool that asks twice. `tests/src/bin/session_server.rs` serves it in a child process.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tern_mcp::ask;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::server::{ServerEvent, SessionInput};
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolResult, ElicitValue, InputRequest, LoggingLevel, method,
};

/// The URIs of the two resources a client may subscribe to.
pub const RESOURCES: [&str; 2] = ["note://a", "note://b"];

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// What to answer.
    text: String,
}

/// Arguments of `touch`.
#[derive(Deserialize, JsonSchema)]
struct Touch {
    /// The resource that changed.
    uri: String,
}

/// The notifier: `report` (progress 1..3 of 3, then logs at debug, info and warning),
/// `wait` (logs, then answers 300 ms later), `echo` (logs, then answers its `text`),
/// `touch` (says the resource at `uri` changed), `two_questions` (asks a name, then a
/// colour, each in a round of its own, in the direct form), and the resources
/// [`RESOURCES`]. With `fulfil`, the direct form reaches 2025-11-25 sessions too.
pub fn notifier(fulfil: bool) -> McpServer {
    let mut mcp = McpServer::new("notifier", "1.0");
    if fulfil {
        mcp = mcp.fulfil_input_on_sessions(SessionInput::default());
    }
    mcp.tool("report")
        .description("Reports progress, then logs at debug, info and warning")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
            }
            ctx.log(LoggingLevel::Debug, json!("debug detail"));
            ctx.log(LoggingLevel::Info, json!("info line"));
            ctx.log(LoggingLevel::Warning, json!("warning line"));
            Ok("reported")
        });
    mcp.tool("wait")
        .description("Logs that it started, then answers after 300 ms")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            ctx.log(LoggingLevel::Info, json!("started"));
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            Ok("waited")
        });
    let me = mcp.clone();
    mcp.tool("touch")
        .description("Says the resource at `uri` changed")
        .run(move |args: Touch, _ctx: ToolContext| {
            let me = me.clone();
            async move {
                me.publish(ServerEvent::ResourceUpdated(args.uri.as_str().into()));
                Ok(format!("touched {}", args.uri))
            }
        });
    mcp.tool("echo")
        .description("Logs, then answers with its `text`: a call answered on an SSE stream")
        .run(|args: Echo, ctx: ToolContext| async move {
            ctx.log(LoggingLevel::Info, json!("echoing"));
            Ok(args.text)
        });
    mcp.tool("two_questions")
        .description("Asks a name, then a colour, one round each")
        .run(|_: NoArgs, ctx: ToolContext| async move { two_questions(&ctx) });
    for uri in RESOURCES {
        mcp.resource(uri, uri)
            .mime_type("text/plain")
            .read(move || async move { Ok(format!("the text of {uri}")) });
    }
    mcp
}

fn two_questions(ctx: &ToolContext) -> Result<CallToolOutcome, ToolError> {
    let answer = |key: &str, field: &str| -> Option<String> {
        let result = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
        match result.content?.get(field)? {
            ElicitValue::String(s) => Some(s.clone()),
            _ => None,
        }
    };
    let state = ctx.request_state().unwrap_or_default().to_owned();
    if let Some(name) = state.strip_prefix("name:") {
        if let Some(colour) = answer("colour", "colour") {
            let done = CallToolResult::new(vec![ask::text(format!("{name} likes {colour}"))]);
            return Ok(CallToolOutcome::Complete(done));
        }
        return ask_for("colour", "Favourite colour?", Some(&state));
    }
    match answer("name", "name") {
        Some(name) => ask_for("colour", "Favourite colour?", Some(&format!("name:{name}"))),
        None => ask_for("name", "Your name?", None),
    }
}

fn ask_for(
    field: &'static str,
    message: &str,
    state: Option<&str>,
) -> Result<CallToolOutcome, ToolError> {
    let form: InputRequest = ask::elicit_form(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )?;
    Ok(ask::input_required([(field, form)], state).into())
}
