//! One instance of a fleet: an `McpServer` over Streamable HTTP whose `deploy` tool takes
//! two input rounds, so a flow carries sealed `requestState` from one round to the next.
//! tests/tests/it/http_instances.rs runs two of these as separate processes behind a
//! round-robin client to show which settings let a flow cross instances.
//!
//! ```sh
//! fleet_server --addr 127.0.0.1:0 [--name NAME] [--state-key HEX]... [--instance LABEL]
//! ```
//!
//! Without `--state-key` the instance seals under its own ephemeral key (the default).
//! Given several, the first seals and every one verifies: the phases of a key rotation
//! (tests/tests/it/fleet.rs) are `--state-key OLD --state-key NEW`, then NEW OLD, then
//! NEW alone.
//! Prints `listening on http://ADDR/mcp` once the socket is bound, then serves until
//! killed.

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::mcp::{McpServer, ToolContext, ToolError};
use tern_mcp::seal::{RequestStateSecurity, parse_secret};
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolResult, ElicitValue, InputRequest, method,
};

type Failure = Box<dyn std::error::Error>;

/// Command-line settings.
struct Settings {
    addr: String,
    name: String,
    keys: Vec<String>,
    instance: String,
}

fn settings() -> Result<Settings, Failure> {
    let mut out = Settings {
        addr: "127.0.0.1:0".into(),
        name: "fleet".into(),
        keys: Vec::new(),
        instance: "?".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--addr" => out.addr = value,
            "--name" => out.name = value,
            "--state-key" => out.keys.push(value),
            "--instance" => out.instance = value,
            other => {
                return Err(format!(
                    "unknown flag {other}; usage: fleet_server --addr ADDR \
                     [--name NAME] [--state-key HEX] [--instance LABEL]"
                )
                .into());
            }
        }
    }
    Ok(out)
}

/// The string value of the accepted form field `field` answering the request `key`.
fn answer(ctx: &ToolContext, key: &str, field: &str) -> Option<String> {
    let result = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    match result.content?.get(field)? {
        ElicitValue::String(s) => Some(s.clone()),
        ElicitValue::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn question(message: &str, field: &str, kind: &str) -> Result<InputRequest, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {field: {"type": kind}},
        "required": [field]
    });
    Ok(ask::elicit_form(message, schema)?)
}

/// Round 1 asks for a region; round 2 (state `region=R`) asks for confirmation; round 3
/// completes, naming the instance that finished the flow.
fn register_deploy(mcp: &McpServer, instance: String) {
    mcp.tool("deploy")
        .description("Deploy a service: asks for a region, then for confirmation.")
        .run(
            move |args: serde_json::Map<String, serde_json::Value>, ctx: ToolContext| {
                let instance = instance.clone();
                async move {
                    let service = args
                        .get("service")
                        .and_then(|s| s.as_str())
                        .unwrap_or("service")
                        .to_owned();
                    let state = ctx.request_state().map(str::to_owned);
                    let outcome: CallToolOutcome = match state.as_deref() {
                        None => match answer(&ctx, "region", "region") {
                            // The first round, or a retry without the answer: ask again.
                            None => ask::input_required(
                                [("region", question("Which region?", "region", "string")?)],
                                Some("asked=region"),
                            )
                            .into(),
                            Some(_) => return Err(ToolError::new("missing state")),
                        },
                        Some("asked=region") => match answer(&ctx, "region", "region") {
                            Some(region) => ask::input_required(
                                [(
                                    "confirm",
                                    question(
                                        &format!("Deploy to {region}?"),
                                        "confirm",
                                        "boolean",
                                    )?,
                                )],
                                Some(&format!("region={region}")),
                            )
                            .into(),
                            None => return Err(ToolError::new("the region was not answered")),
                        },
                        Some(other) => {
                            let region = other
                                .strip_prefix("region=")
                                .ok_or_else(|| ToolError::new("unexpected state"))?;
                            let confirmed = answer(&ctx, "confirm", "confirm");
                            let text = if confirmed.as_deref() == Some("true") {
                                format!(
                                    "Deployed '{service}' to {region} (finished on {instance})."
                                )
                            } else {
                                format!("Not deployed (finished on {instance}).")
                            };
                            CallToolOutcome::Complete(CallToolResult::new(vec![ask::text(text)]))
                        }
                    };
                    Ok(outcome)
                }
            },
        );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let settings = settings()?;
    let mut mcp = McpServer::new(settings.name, "1.0.0");
    if !settings.keys.is_empty() {
        // Shared keys: every sibling given the same secrets and name verifies what any
        // other sealed.
        let secrets = settings
            .keys
            .iter()
            .map(|hex| parse_secret(hex))
            .collect::<Result<Vec<_>, _>>()?;
        mcp = mcp.seal(RequestStateSecurity::keys(secrets)?);
    }
    register_deploy(&mcp, settings.instance);
    tern_tests::announce_and_serve(&settings.addr, mcp.server()?).await
}
