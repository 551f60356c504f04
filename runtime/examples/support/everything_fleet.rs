//! `--redis URL`: what the instances of a fleet of `everything` servers share on one
//! Redis (with the `redis` feature): 2025-11-25 sessions and their streams' events (so
//! any instance serves any session's requests and resumes any stream), single-use state
//! and tasks. Beside `--state-key HEX`, which
//! they need to open each other's sealed state. And the tools a fleet's test calls.

use std::time::Duration;

use tern_mcp::ask;
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{McpServer, ToolContext, ToolError};
use tern_mcp::server::ServerEvent;
use tern_mcp::tasks::{TaskSupport, Tasks};
use tern_mcp::types::v2026_07_28::{CallToolOutcome, CallToolResult, ElicitValue, method};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The shared stores, connected.
#[cfg(feature = "redis")]
pub(crate) struct Fleet {
    redis: tern_mcp::fleet::RedisFleet,
}

/// Without the `redis` feature there is nothing to share through.
#[cfg(not(feature = "redis"))]
pub(crate) enum Fleet {}

/// Connects to the Redis at `url`, if one was named.
#[cfg(feature = "redis")]
pub(crate) async fn connect(url: Option<&str>) -> Result<Option<Fleet>, BoxError> {
    let Some(url) = url else {
        return Ok(None);
    };
    Ok(Some(Fleet {
        redis: tern_mcp::fleet::RedisFleet::connect(url).await?,
    }))
}

#[cfg(not(feature = "redis"))]
pub(crate) async fn connect(url: Option<&str>) -> Result<Option<Fleet>, BoxError> {
    match url {
        Some(_) => Err("--redis needs the example built with the `redis` feature".into()),
        None => Ok(None),
    }
}

/// The tasks extension: its tasks in Redis for a fleet, else in this process.
pub(crate) fn tasks(fleet: Option<&Fleet>) -> Tasks {
    match fleet {
        #[cfg(feature = "redis")]
        Some(fleet) => Tasks::new(fleet.redis.task_store()),
        _ => Tasks::default(),
    }
}

/// `mcp` with its single-use state recorded in Redis, for a fleet.
pub(crate) fn single_use(mcp: McpServer, fleet: Option<&Fleet>) -> McpServer {
    match fleet {
        #[cfg(feature = "redis")]
        Some(fleet) => mcp.replay_store(fleet.redis.replay_store()),
        _ => mcp,
    }
}

/// `http` with its sessions' records and events in Redis, for a fleet.
pub(crate) fn sessions(http: HttpServer, fleet: Option<&Fleet>) -> HttpServer {
    match fleet {
        #[cfg(feature = "redis")]
        Some(fleet) => http.fleet(&fleet.redis),
        _ => http,
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Touch {
    /// The resource whose subscribers are told it changed.
    uri: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pause {
    /// How long the call is silent between its two progress steps, in milliseconds.
    ms: u64,
}

/// The longest a fleet tool waits.
const MAX_MS: u64 = 60_000;

/// The tools a fleet's own test calls: `fleet_touch` (tells a resource's subscribers it
/// changed, from whichever instance serves the call), `fleet_pause` (a progress step, a
/// silence of `ms`, another: long enough for a proxy to drop the stream) and
/// `fleet_migrate` (a restartable task: asks for a region, works `ms`, and names the
/// process that finished it).
pub(crate) fn register(mcp: &McpServer) {
    let server = mcp.clone();
    mcp.tool("fleet_touch")
        .description("Tells the subscribers of `uri` that it changed")
        .run(move |args: Touch, _ctx: ToolContext| {
            server.publish(ServerEvent::ResourceUpdated(args.uri.into()));
            async { Ok("touched") }
        });
    mcp.tool("fleet_pause")
        .description("A progress step, `ms` of silence, another step")
        .run(|args: Pause, ctx: ToolContext| async move {
            ctx.progress(1.0, Some(2.0), Some("before the pause"));
            tokio::time::sleep(Duration::from_millis(args.ms.min(MAX_MS))).await;
            ctx.progress(2.0, Some(2.0), Some("after the pause"));
            Ok("paused")
        });
    mcp.tool("fleet_migrate")
        .description("Asks for a region, then works `ms`; run again by another instance if this one stops")
        .extension(TaskSupport::Required.restartable())
        .run(|args: Pause, ctx: ToolContext| async move {
            let region = ctx
                .input_responses()
                .and_then(|r| r.get::<method::Elicit>("region"))
                .and_then(Result::ok)
                .and_then(|answer| answer.content?.get("region").cloned());
            let Some(ElicitValue::String(region)) = region else {
                let form = ask::elicit_form(
                    "Which region?",
                    serde_json::json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}),
                )?;
                return Ok(ask::input_required([("region", form)], None).into());
            };
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(args.ms.min(MAX_MS))) => {}
                () = ctx.cancellation().cancelled() => return Err(ToolError::new("cancelled")),
            }
            let done = format!("migrated to {region} by process {}", std::process::id());
            Ok(CallToolOutcome::Complete(CallToolResult::new(vec![ask::text(done)])))
        });
}
