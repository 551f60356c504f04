//! The `everything` server's task tools: the fixtures the conformance suite's `tasks-*`
//! scenarios call (`greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input`, `test_tool_with_task`).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tern_mcp::ask;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::tasks::TaskSupport;
use tern_mcp::types::v2026_07_28::{ElicitResult, ElicitResultAction, ElicitValue, method};

use super::IntoOutcome as _;

/// The longest `slow_compute` sleeps.
const MAX_SECONDS: u64 = 600;

#[derive(Deserialize, JsonSchema)]
struct Greet {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Compute {
    /// How long to work, in seconds.
    seconds: Option<u64>,
    /// A name for the computation.
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Delete {
    filename: Option<String>,
}

/// Sleeps `d` unless the call is cancelled first.
async fn work(ctx: &ToolContext, d: Duration) -> Result<(), ToolError> {
    tokio::select! {
        () = tokio::time::sleep(d) => Ok(()),
        () = ctx.cancellation().cancelled() => Err(ToolError::new("cancelled")),
    }
}

/// The user's answer under `key`, whatever it was (accepted, declined, cancelled), if
/// the retry carries one: a declined question is answered, not asked again.
fn answer(ctx: &ToolContext, key: &str) -> Option<ElicitResult> {
    ctx.input_responses()?.get::<method::Elicit>(key)?.ok()
}

/// The value of `field` in an answer the user accepted.
fn accepted(answer: &ElicitResult, field: &str) -> Option<ElicitValue> {
    match answer.action {
        ElicitResultAction::Accept => answer.content.as_ref()?.get(field).cloned(),
        _ => None,
    }
}

/// The value of `field` in the form answer under `key`, if the user accepted.
fn field(ctx: &ToolContext, key: &str, field: &str) -> Option<ElicitValue> {
    accepted(&answer(ctx, key)?, field)
}

fn form(
    message: &str,
    name: &str,
    kind: &str,
) -> Result<tern_mcp::types::v2026_07_28::InputRequest, ToolError> {
    Ok(ask::elicit_form(
        message,
        serde_json::json!({"type": "object", "properties": {name: {"type": kind}}, "required": [name]}),
    )?)
}

pub(crate) fn register(mcp: &McpServer) {
    mcp.tool("greet")
        .description("Greets someone, never as a task")
        .run(|args: Greet, _ctx: ToolContext| async move { Ok(format!("Hello, {}!", args.name)) });
    mcp.tool("slow_compute")
        .description("Works for `seconds`: a task when the client supports tasks")
        .extension(TaskSupport::Optional)
        .run(|args: Compute, ctx: ToolContext| async move {
            let seconds = args.seconds.unwrap_or(3).min(MAX_SECONDS);
            let label = args.label.unwrap_or_else(|| "default".into());
            work(&ctx, Duration::from_secs(seconds)).await?;
            Ok(format!(
                "Computation \"{label}\" completed after {seconds} seconds. Result: 42."
            ))
        });
    mcp.tool("failing_job")
        .description("A task that ends with a tool error")
        .extension(TaskSupport::Required)
        .run(|_: NoArgs, ctx: ToolContext| async move {
            work(&ctx, Duration::from_millis(200)).await?;
            Err::<String, _>(ToolError::new("The job failed: the disk is full"))
        });
    mcp.tool("protocol_error_job")
        .description("A task that fails with a JSON-RPC error")
        .extension(TaskSupport::Required)
        .run(|_: NoArgs, ctx: ToolContext| async move {
            work(&ctx, Duration::from_millis(200)).await?;
            Err::<String, _>(ToolError::protocol(RpcError::internal(
                "The job's backend is unreachable",
            )))
        });
    mcp.tool("confirm_delete")
        .description("Deletes a file once the user confirms, as a task")
        .extension(TaskSupport::Required)
        .run(|args: Delete, ctx: ToolContext| async move {
            let file = args.filename.unwrap_or_else(|| "important.txt".into());
            match answer(&ctx, "confirm").map(|a| accepted(&a, "confirm")) {
                Some(Some(ElicitValue::Boolean(true))) => {
                    Ok(ask::text(format!("deleted '{file}'")).into_outcome())
                }
                // Declined, cancelled or "no": the file stays, and nobody is asked twice.
                Some(_) => Ok(ask::text(format!("kept '{file}'")).into_outcome()),
                None => Ok(ask::input_required(
                    [(
                        "confirm",
                        form(&format!("Delete '{file}'?"), "confirm", "boolean")?,
                    )],
                    None,
                )
                .into()),
            }
        });
    mcp.tool("multi_input")
        .description("Asks for a name and a confirmation at once, as a task")
        .extension(TaskSupport::Required)
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let (Some(name), Some(confirmed)) = (answer(&ctx, "name"), answer(&ctx, "confirm"))
            else {
                return Ok(ask::input_required(
                    [
                        ("name", form("Your name?", "name", "string")?),
                        ("confirm", form("Go ahead?", "confirm", "boolean")?),
                    ],
                    None,
                )
                .into());
            };
            match (accepted(&name, "name"), accepted(&confirmed, "confirm")) {
                (Some(ElicitValue::String(name)), Some(ElicitValue::Boolean(c))) => {
                    Ok(ask::text(format!("name=\"{name}\" confirmed={c}")).into_outcome())
                }
                // A question declined or cancelled ends the call: it is not asked again.
                _ => Ok(ask::text("nothing done: a question was declined").into_outcome()),
            }
        });
    mcp.tool("test_tool_with_task")
        .description("Asks the user's name inline, then goes on as a task")
        .extension(TaskSupport::Required.on_request())
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let Some(ElicitValue::String(name)) = field(&ctx, "user_name", "name") else {
                return Ok(ask::input_required(
                    [("user_name", form("What is your name?", "name", "string")?)],
                    None,
                )
                .into());
            };
            ctx.continue_as_task().await.map_err(ToolError::protocol)?;
            work(&ctx, Duration::from_millis(100)).await?;
            Ok(ask::text(format!("Hello, {name}! (computed in task)")).into_outcome())
        });
}
