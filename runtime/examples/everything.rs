//! The conformance "everything" server: every fixture the official MCP conformance
//! suite's server scenarios call, at 2026-07-28 and at 2025-11-25, built with the
//! high-level [`McpServer`].
//!
//! ```sh
//! cargo run -p tern-mcp --example everything -- --port 3000          # http://127.0.0.1:3000/mcp
//! cargo run -p tern-mcp --example everything -- --port 0             # prints the port it got
//! cargo run -p tern-mcp --example everything -- --stdio               # JSON-RPC on stdin/stdout
//! cargo run -p tern-mcp --example everything -- --port 3000 \
//!     --state-key 000102...1f --state-key 202122...3f --state-ttl 600
//! ```
//!
//! `--state-key HEX` (repeatable) seals `requestState` under shared keys so several
//! instances or a restart accept each other's tokens: the first key seals, every key
//! opens. Without it the state is sealed under a key generated for this process.
//! `--redis URL` (with the `redis` feature) keeps 2025-11-25 sessions, single-use state
//! and tasks on that Redis, so a fleet of instances behind a load balancer serves any
//! request on any instance (beside a shared `--state-key`).
//! `--skills DIR` publishes the skills under `DIR` (default: the `release-notes` skill in
//! `examples/support/skills`) through the skills extension. The MCP Apps extension
//! serves one app: `app_greet`, shown with the page `ui://everything/greeter`.
//! `scripts/conformance` runs the suite against this server.

#[path = "support/everything_apps.rs"]
mod apps;
#[path = "support/everything_described.rs"]
mod described;
#[path = "support/everything_fleet.rs"]
mod fleet;
#[path = "support/everything_tasks.rs"]
mod tasks;
#[path = "support/everything_terminal.rs"]
mod terminal;

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tern_mcp::ask;
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{ListRoots, McpServer, NoArgs, Sample, SamplePrompt, ToolContext, ToolError};
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::server::SessionInput;
use tern_mcp::skills::Skills;
use tern_mcp::transport::stdio::stdio;
use tern_mcp::types::v2026_07_28::{
    AudioContent, BlobResourceContents, CallToolOutcome, CallToolResult, ContentBlock,
    CreateMessageRequestParams, ElicitValue, EmbeddedResource, GetPromptOutcome, GetPromptResult,
    ImageContent, InputRequest, LoggingLevel, Outcome, PromptMessage, ReadResourceResult, Role,
    SamplingMessage, SamplingMessageContent, SamplingMessageContentBlock, TextContent,
    TextResourceContents, method,
};

/// A 1x1 red PNG.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The command line.
struct Options {
    port: u16,
    name: String,
    state_keys: Vec<Vec<u8>>,
    state_ttl: Option<f64>,
    stdio: bool,
    skills: std::path::PathBuf,
    redis: Option<String>,
}

const USAGE: &str = "usage: everything [--port PORT] [--name NAME] [--state-key HEX]... [--state-ttl SECONDS] [--skills DIR] [--redis URL] [--stdio]";

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, BoxError> {
    let mut options = Options {
        port: 3000,
        name: "tern-everything".into(),
        state_keys: Vec::new(),
        state_ttl: None,
        stdio: false,
        skills: concat!(env!("CARGO_MANIFEST_DIR"), "/examples/support/skills").into(),
        redis: None,
    };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--port" => options.port = value("--port")?.parse()?,
            "--name" => options.name = value("--name")?,
            "--state-key" => options.state_keys.push(hex(&value("--state-key")?)?),
            "--state-ttl" => options.state_ttl = Some(value("--state-ttl")?.parse()?),
            "--stdio" => options.stdio = true,
            "--skills" => options.skills = value("--skills")?.into(),
            "--redis" => options.redis = Some(value("--redis")?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
        }
    }
    Ok(options)
}

fn hex(text: &str) -> Result<Vec<u8>, BoxError> {
    let digits = text.trim().as_bytes();
    if digits.len() % 2 != 0 {
        return Err("a --state-key must have an even number of hex digits".into());
    }
    digits
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair)?;
            Ok(u8::from_str_radix(pair, 16)?)
        })
        .collect()
}

fn image() -> ContentBlock {
    ImageContent::new(PNG_BASE64, "image/png").into()
}

/// An embedded text resource.
fn embedded(uri: &str, mime_type: &str, text: impl Into<String>) -> ContentBlock {
    let mut contents = TextResourceContents::new(text, uri);
    contents.mime_type = Some(mime_type.into());
    EmbeddedResource::new(contents.into()).into()
}

fn user(content: ContentBlock) -> PromptMessage {
    PromptMessage::new(content, Role::User)
}

/// The text a form answer under `key` carries in `field`, if the client accepted.
fn answered(ctx: &ToolContext, key: &str, field: &str) -> Option<String> {
    let answer = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    match answer.content?.get(field)? {
        ElicitValue::String(s) => Some(s.clone()),
        other => serde_json::to_value(other).ok().map(|v| v.to_string()),
    }
}

/// A form elicitation with one required property.
fn ask_form(message: &str, field: &str, kind: &str) -> Result<InputRequest, ToolError> {
    Ok(ask::elicit_form(
        message,
        json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]}),
    )?)
}

fn register_content_tools(mcp: &McpServer) {
    mcp.tool("test_simple_text")
        .description("Tests simple text content response")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Ok("This is a simple text response for testing.")
        });
    mcp.tool("test_image_content")
        .description("Tests image content response")
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok(image()) });
    mcp.tool("test_audio_content")
        .description("Tests audio content response")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Ok(ContentBlock::from(AudioContent::new(
                WAV_BASE64,
                "audio/wav",
            )))
        });
    mcp.tool("test_embedded_resource")
        .description("Tests embedded resource content response")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Ok(embedded(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            ))
        });
    mcp.tool("test_multiple_content_types")
        .description("Tests response with multiple content types (text, image, resource)")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Ok(vec![
                ask::text("Multiple content types test:"),
                image(),
                embedded(
                    "test://mixed-content-resource",
                    "application/json",
                    json!({"test": "data", "value": 123}).to_string(),
                ),
            ])
        });
    mcp.tool("test_tool_with_logging")
        .description("Tests tool that emits log messages during execution")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            ctx.log(LoggingLevel::Info, json!("Tool execution started"));
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.log(LoggingLevel::Info, json!("Tool processing data"));
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.log(LoggingLevel::Info, json!("Tool execution completed"));
            Ok("Tool with logging executed successfully")
        });
    mcp.tool("test_tool_with_progress")
        .description("Tests tool that reports progress notifications")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            for step in [0.0, 50.0, 100.0] {
                if step > 0.0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                let message = format!("Completed step {step} of 100");
                ctx.progress(step, Some(100.0), Some(&message));
            }
            Ok("Progress test completed")
        });
    mcp.tool("test_error_handling")
        .description("Tests error response handling")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            Err::<String, _>(ToolError::new(
                "This tool intentionally returns an error for testing",
            ))
        });
}

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

/// The `test_sampling` question: the caller's prompt, for the client's model.
struct CallerPrompt;

impl SamplePrompt<SamplingArgs> for CallerPrompt {
    const KEY: &'static str = "completion";
    fn request(args: &SamplingArgs) -> CreateMessageRequestParams {
        let text = SamplingMessageContentBlock::Text(TextContent::new(args.prompt.clone()));
        CreateMessageRequestParams::new(
            100,
            vec![SamplingMessage::new(
                SamplingMessageContent::One(text),
                Role::User,
            )],
        )
    }
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

fn register_asking_tools(mcp: &McpServer) {
    // The classic tools that ask the client mid-call, in the 2026-07-28 form: an
    // InputRequiredResult and a retry.
    mcp.tool("test_sampling")
        .description("Tests server-initiated sampling (LLM completion request)")
        .resolve(
            |_args: SamplingArgs, answer: Sample<CallerPrompt>| async move {
                Ok(format!("LLM response: {}", answer.text()))
            },
        );
    mcp.tool("test_elicitation")
        .description("Tests server-initiated elicitation (user input request)")
        .run(|args: ElicitationArgs, ctx: ToolContext| async move {
            let Some(answer) = ctx
                .input_responses()
                .and_then(|r| r.get::<method::Elicit>("user_input"))
                .and_then(Result::ok)
            else {
                let form = ask::elicit_form(
                    args.message,
                    json!({
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"}
                        },
                        "required": ["username", "email"]
                    }),
                )?;
                return Ok(ask::input_required([("user_input", form)], None).into());
            };
            let text = format!(
                "User response: action={}, content={}",
                json!(answer.action).as_str().unwrap_or_default(),
                json!(answer.content.unwrap_or_default())
            );
            Ok(CallToolOutcome::Complete(CallToolResult::new(vec![
                ask::text(text),
            ])))
        });
    mcp.tool("test_missing_capability")
        .description(
            "Asks the client's model for a completion; a client that did not declare sampling gets MissingRequiredClientCapabilityError",
        )
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if ctx.input_responses().is_some_and(|r| r.contains_key("model")) {
                return Ok(ask::text("the model answered").into_outcome());
            }
            // tern checks the declared capabilities before this result leaves: a
            // client without `sampling` gets -32021 naming it.
            Ok(ask::input_required([("model", ask::sample("Say hello", 20))], None).into())
        });
}

/// "Elicitation completed: action=..., content={...}", as the SEP-1034 and SEP-1330
/// scenarios ask.
fn elicitation_completed(ctx: &ToolContext, key: &str) -> Option<String> {
    let answer = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    Some(format!(
        "Elicitation completed: action={}, content={}",
        json!(answer.action).as_str().unwrap_or_default(),
        json!(answer.content.unwrap_or_default())
    ))
}

/// The question `question` builds, asked under `key` until answered: the direct form, which
/// 2025-11-25 sessions get as `elicitation/create` (fulfil_input_on_sessions).
fn ask_until_answered(
    ctx: &ToolContext,
    key: &'static str,
    question: impl FnOnce() -> Result<InputRequest, ToolError>,
) -> Result<CallToolOutcome, ToolError> {
    if let Some(text) = elicitation_completed(ctx, key) {
        return Ok(ask::text(text).into_outcome());
    }
    Ok(ask::input_required([(key, question()?)], None).into())
}

/// One form question under `key`, asked until answered.
async fn ask_once(
    ctx: ToolContext,
    key: &'static str,
    message: &str,
    schema: serde_json::Value,
) -> Result<CallToolOutcome, ToolError> {
    ask_until_answered(&ctx, key, || Ok(ask::elicit_form(message, schema)?))
}

/// The SEP-1034 (defaults) and SEP-1330 (enums) elicitation fixtures.
fn register_schema_tools(mcp: &McpServer) {
    mcp.tool("test_elicitation_sep1034_defaults")
        .description("Asks with a default for every primitive type (SEP-1034)")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": true}
                }
            });
            ask_once(ctx, "defaults", "Please review your details", schema).await
        });
    mcp.tool("test_elicitation_sep1330_enums")
        .description("Asks with every enum form (SEP-1330)")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let titled = |pairs: [(&str, &str); 3]| {
                pairs
                    .iter()
                    .map(|(value, title)| json!({"const": value, "title": title}))
                    .collect::<Vec<_>>()
            };
            let schema = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])}}
                }
            });
            ask_once(ctx, "enums", "Choose your options", schema).await
        });
    mcp.tool("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .input_schema(json_schema_2020_12())
        .run(|_: serde_json::Map<String, serde_json::Value>, _ctx: ToolContext| async { Ok("ok") });
}

#[derive(Deserialize, JsonSchema)]
struct RegionArgs {
    /// Where to run: mirrored into the `Mcp-Param-Region` header.
    region: String,
}

/// The tool the http-custom-header-server-validation scenario calls: its `region`
/// argument travels in `Mcp-Param-Region` too, and the endpoint checks the two agree.
fn register_header_tool(mcp: &McpServer) {
    let schema = json!({
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region", "description": "Where to run"}},
        "required": ["region"]
    });
    let serde_json::Value::Object(schema) = schema else {
        return;
    };
    mcp.tool("test_custom_header")
        .description("Echoes its region, which also travels in the Mcp-Param-Region header")
        .input_schema(schema)
        .run(|args: RegionArgs, _ctx: ToolContext| async move {
            Ok(format!("region: {}", args.region))
        });
}

/// The `inputSchema` the json-schema-2020-12 scenario looks for, keyword for keyword.
fn json_schema_2020_12() -> serde_json::Map<String, serde_json::Value> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    match schema {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The diagnostic tools `server-stateless` calls.
fn register_diagnostic_tools(mcp: &McpServer) {
    mcp.tool("test_logging_tool")
        .description("Logs at info level: the client sees it only if it asked for a log level")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            ctx.log(LoggingLevel::Info, json!("test_logging_tool ran"));
            Ok("logged")
        });
    mcp.tool("test_streaming_elicitation")
        .description("Asks the user a question the 2026-07-28 way: in the result, not as a request on the stream")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if let Some(answer) = answered(&ctx, "confirm", "ok") {
                return Ok(ask::text(format!("confirmed: {answer}")).into_outcome());
            }
            Ok(ask::input_required(
                [("confirm", ask_form("Continue?", "ok", "boolean")?)],
                None,
            )
            .into())
        });
}

/// The MRTR fixtures of the `input-required-result-*` scenarios.
fn register_mrtr_tools(mcp: &McpServer) {
    mcp.tool("test_input_required_result_elicitation")
        .description("Asks the user's name, then greets them")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            // A missing, misnamed or malformed answer is asked again, not an error.
            match answered(&ctx, "user_name", "name") {
                Some(name) => Ok(ask::text(format!("Hello, {name}!")).into_outcome()),
                None => Ok(ask::input_required(
                    [(
                        "user_name",
                        ask_form("What is your name?", "name", "string")?,
                    )],
                    None,
                )
                .into()),
            }
        });
    mcp.tool("test_input_required_result_sampling")
        .description("Asks the client's model for the capital of France")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let answer = ctx
                .input_responses()
                .and_then(|r| r.get::<method::CreateMessage>("capital_question"))
                .and_then(Result::ok);
            match answer {
                Some(message) => Ok(ask::text(format!(
                    "The model said: {}",
                    json!(message.content)
                ))
                .into_outcome()),
                None => Ok(ask::input_required(
                    [(
                        "capital_question",
                        ask::sample("What is the capital of France?", 100),
                    )],
                    None,
                )
                .into()),
            }
        });
    mcp.tool("test_input_required_result_list_roots")
        .description("Asks the client for its roots and lists them")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let answer = ctx
                .input_responses()
                .and_then(|r| r.get::<method::ListRoots>("client_roots"))
                .and_then(Result::ok);
            match answer {
                Some(roots) => {
                    let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
                    Ok(ask::text(format!("Client roots: {}", uris.join(", "))).into_outcome())
                }
                None => Ok(ask::input_required([("client_roots", ask::list_roots())], None).into()),
            }
        });
    mcp.tool("test_input_required_result_request_state")
        .description("Asks for a confirmation and checks its own state on the retry")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let confirmed = ctx
                .input_responses()
                .is_some_and(|r| r.contains_key("confirm"));
            // tern hands back the plaintext only if the sealed token verified.
            if confirmed && ctx.request_state() == Some("awaiting-confirmation") {
                return Ok(ask::text("state-ok: confirmed").into_outcome());
            }
            Ok(ask::input_required(
                [("confirm", ask_form("Please confirm", "ok", "boolean")?)],
                Some("awaiting-confirmation"),
            )
            .into())
        });
    mcp.tool("test_input_required_result_multiple_inputs")
        .description("Asks for a name, a model's greeting and the client's roots at once")
        .resolve(
            |_: NoArgs,
             name: tern_mcp::mcp::Elicit<UserName>,
             greeting: Sample<Greeting>,
             roots: ListRoots| async move {
                let name = name
                    .accepted()
                    .map(|n| n.name)
                    .unwrap_or_else(|| "nobody".into());
                Ok(format!(
                    "{name}: {} ({} roots)",
                    greeting.text(),
                    roots.0.len()
                ))
            },
        );
    mcp.tool("test_input_required_result_multi_round")
        .description("Asks two questions, one round each")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let state = ctx.request_state().unwrap_or_default().to_owned();
            if let Some(name) = state.strip_prefix("round-2:") {
                if let Some(color) = answered(&ctx, "step2", "color") {
                    return Ok(ask::text(format!("{name} likes {color}.")).into_outcome());
                }
                return step2(name);
            }
            if state == "round-1" {
                if let Some(name) = answered(&ctx, "step1", "name") {
                    return step2(&name);
                }
            }
            Ok(ask::input_required(
                [(
                    "step1",
                    ask_form("Step 1: What is your name?", "name", "string")?,
                )],
                Some("round-1"),
            )
            .into())
        });
    mcp.tool("test_input_required_result_tampered_state")
        .description("Keeps integrity-protected state between rounds")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            // A tampered token never reaches this function: tern rejects it with -32602.
            if ctx.request_state() == Some("tamper-check") {
                return Ok(ask::text("state verified").into_outcome());
            }
            Ok(ask::input_required(
                [("confirm", ask_form("Please confirm", "ok", "boolean")?)],
                Some("tamper-check"),
            )
            .into())
        });
    mcp.tool("test_input_required_result_capabilities")
        .description("Asks only what the client declared it can answer")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            if ctx.request_state() == Some("asked") {
                return Ok(ask::text("answered").into_outcome());
            }
            let declared = &ctx.meta().client_capabilities;
            let mut requests = Vec::new();
            if declared.elicitation.is_some() {
                requests.push((
                    "user_name",
                    ask_form("What is your name?", "name", "string")?,
                ));
            }
            if declared.sampling.is_some() {
                requests.push(("greeting", ask::sample("Generate a greeting", 50)));
            }
            if declared.roots.is_some() {
                requests.push(("client_roots", ask::list_roots()));
            }
            if requests.is_empty() {
                return Ok(ask::text("the client declared nothing to ask").into_outcome());
            }
            Ok(ask::input_required(requests, Some("asked")).into())
        });
}

fn step2(name: &str) -> Result<CallToolOutcome, ToolError> {
    Ok(ask::input_required(
        [(
            "step2",
            ask_form("Step 2: What is your favorite color?", "color", "string")?,
        )],
        Some(&format!("round-2:{name}")),
    )
    .into())
}

/// What is your name?
#[derive(Clone, Deserialize, JsonSchema)]
struct UserName {
    name: String,
}

/// The greeting asked of the client's model.
struct Greeting;

impl SamplePrompt<NoArgs> for Greeting {
    const KEY: &'static str = "greeting";
    fn request(_args: &NoArgs) -> CreateMessageRequestParams {
        let text = SamplingMessageContentBlock::Text(TextContent::new("Generate a greeting"));
        CreateMessageRequestParams::new(
            50,
            vec![SamplingMessage::new(
                SamplingMessageContent::One(text),
                Role::User,
            )],
        )
    }
}

/// Completes a tool result into the direct form's outcome.
pub(crate) trait IntoOutcome {
    fn into_outcome(self) -> CallToolOutcome;
}

impl IntoOutcome for ContentBlock {
    fn into_outcome(self) -> CallToolOutcome {
        CallToolOutcome::Complete(CallToolResult::new(vec![self]))
    }
}

/// Tools that change the server's lists, so `subscriptions/listen` streams hear of it.
fn register_list_changers(mcp: &McpServer) {
    let server = mcp.clone();
    mcp.tool("test_trigger_tool_change")
        .description("Adds or removes a tool, so list subscribers are told")
        .run(move |_: NoArgs, _ctx: ToolContext| {
            let server = server.clone();
            async move {
                if !server.remove_tool("test_dynamic_tool") {
                    server
                        .tool("test_dynamic_tool")
                        .description("A tool that comes and goes")
                        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("dynamic") });
                }
                Ok("tool list changed")
            }
        });
    let server = mcp.clone();
    mcp.tool("test_trigger_prompt_change")
        .description("Re-registers a prompt, so list subscribers are told")
        .run(move |_: NoArgs, _ctx: ToolContext| {
            let server = server.clone();
            async move {
                server
                    .prompt("test_dynamic_prompt")
                    .description("A prompt that is re-registered on demand")
                    .run(|_: NoArgs, _ctx| async { Ok("dynamic".to_owned()) });
                Ok("prompt list changed")
            }
        });
}

#[derive(Deserialize, JsonSchema)]
struct PromptArgs {
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct EmbedArgs {
    /// URI of the resource to embed.
    resource_uri: String,
}

fn register_prompts(mcp: &McpServer) {
    mcp.prompt("test_simple_prompt")
        .description("A simple prompt without arguments")
        .run(|_: NoArgs, _ctx| async { Ok("This is a simple prompt for testing.".to_owned()) });
    mcp.prompt("test_prompt_with_arguments")
        .description("A prompt with required arguments")
        .complete("arg1", |typed: String| async move {
            ["paris", "park", "parse"]
                .into_iter()
                .filter(|v| v.starts_with(&typed))
                .map(str::to_owned)
                .collect()
        })
        .run(|args: PromptArgs, _ctx| async move {
            Ok(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                args.arg1, args.arg2
            ))
        });
    mcp.prompt("test_prompt_with_embedded_resource")
        .description("A prompt that includes an embedded resource")
        .run(|args: EmbedArgs, _ctx| async move {
            Ok(vec![
                user(embedded(
                    &args.resource_uri,
                    "text/plain",
                    "Embedded resource content for testing.",
                )),
                user(ask::text("Please process the embedded resource above.")),
            ])
        });
    mcp.prompt("test_prompt_with_image")
        .description("A prompt that includes an image")
        .run(|_: NoArgs, _ctx| async {
            Ok(vec![
                user(image()),
                user(ask::text("Please analyze the image above.")),
            ])
        });
    mcp.prompt("test_input_required_result_prompt")
        .description("A prompt that asks the user for context first")
        .run(|_: NoArgs, ctx| async move {
            let outcome: GetPromptOutcome = match answered(&ctx, "user_context", "context") {
                Some(context) => Outcome::Complete(GetPromptResult::new(vec![user(ask::text(
                    format!("Use this context: {context}"),
                ))])),
                None => Outcome::InputRequired(ask::input_required(
                    [(
                        "user_context",
                        ask_form("What context should the prompt use?", "context", "string")?,
                    )],
                    None,
                )),
            };
            Ok(outcome)
        });
}

fn register_resources(mcp: &McpServer) {
    mcp.resource("test://static-text", "Static text resource")
        .description("A static text resource for testing")
        .mime_type("text/plain")
        .read(|| async { Ok("This is the content of the static text resource.") });
    mcp.resource("test://static-binary", "Static binary resource")
        .description("A static binary resource (image) for testing")
        .mime_type("image/png")
        .read(|| async {
            let mut blob = BlobResourceContents::new(PNG_BASE64, "test://static-binary");
            blob.mime_type = Some("image/png".into());
            Ok(ReadResourceResult::new(vec![blob.into()]))
        });
    mcp.resource("test://watched-resource", "Watched resource")
        .description("A resource that can be subscribed to")
        .mime_type("text/plain")
        .read(|| async { Ok("Watched resource content") });
    mcp.resource_template("test://template/{id}/data", "Template resource")
        .description("A resource template with parameter substitution")
        .mime_type("application/json")
        .complete("id", |typed: String| async move {
            ["123", "456"]
                .into_iter()
                .filter(|v| v.starts_with(&typed))
                .map(str::to_owned)
                .collect()
        })
        .read(|variables: BTreeMap<String, String>, _ctx| async move {
            let id = variables.get("id").cloned().unwrap_or_default();
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(data.to_string())
        });
}

fn build(options: &Options, fleet: Option<&fleet::Fleet>) -> Result<McpServer, BoxError> {
    // Direct-form tools serve 2025-11-25 sessions too, each round over the session.
    // Tools that run as tasks (the tasks extension), kept in this process's memory.
    let mut mcp = McpServer::new(options.name.clone(), env!("CARGO_PKG_VERSION"))
        .cache(60_000, false)
        .fulfil_input_on_sessions(SessionInput::default())
        .extension(fleet::tasks(fleet))
        .extension(Skills::from_dir(&options.skills)?)
        .extension(apps::apps()?);
    if !options.state_keys.is_empty() || options.state_ttl.is_some() {
        let mut security = if options.state_keys.is_empty() {
            RequestStateSecurity::ephemeral()
        } else {
            RequestStateSecurity::keys(options.state_keys.iter())?
        };
        if let Some(ttl) = options.state_ttl {
            security = security.ttl(std::time::Duration::try_from_secs_f64(ttl)?)?;
        }
        mcp = mcp.seal(security);
    }
    let mcp = fleet::single_use(mcp, fleet);
    register_content_tools(&mcp);
    register_asking_tools(&mcp);
    register_schema_tools(&mcp);
    register_header_tool(&mcp);
    register_mrtr_tools(&mcp);
    register_diagnostic_tools(&mcp);
    register_list_changers(&mcp);
    register_prompts(&mcp);
    register_resources(&mcp);
    described::register(&mcp);
    apps::register(&mcp);
    tasks::register(&mcp);
    fleet::register(&mcp);
    terminal::register(&mcp);
    Ok(mcp)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // stdout may carry the protocol (--stdio): logs go to stderr.
    // Colour only for a person at a terminal who has not asked for none (NO_COLOR).
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_max_level(tracing::Level::INFO)
        .init();
    let options = parse_options(std::env::args().skip(1))?;
    let fleet = fleet::connect(options.redis.as_deref()).await?;
    let mcp = build(&options, fleet.as_ref())?;
    if options.stdio {
        mcp.serve(stdio()).await?;
        return Ok(());
    }
    // Watched from here, so a SIGTERM sent once the endpoint is announced drains it.
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await?;
    // One line on stdout names the endpoint, so `--port 0` works for scripts.
    println!("listening on http://{}/mcp", listener.local_addr()?);
    // `tools/call` requests have their Mcp-Param-* headers checked against the arguments
    // (the McpServer's server brings its tools' annotations to the endpoint).
    fleet::sessions(HttpServer::new(mcp.server()?), fleet.as_ref())
        .serve(listener, shutdown)
        .await?;
    Ok(())
}
