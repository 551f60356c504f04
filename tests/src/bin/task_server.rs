//! One instance of a fleet that shares its tasks: an `McpServer` over Streamable HTTP
//! whose tools run as tasks, kept in memory or in one Redis shared by every instance.
//! tests/tests/it/tasks.rs runs two of these as separate processes.
//!
//! ```sh
//! task_server [--addr 127.0.0.1:0] [--redis URL] [--prefix P] [--lease-ms N] [--ttl-ms N] [--poll-ms N]
//! ```
//!
//! Bearer tokens are `user:NAME` (any NAME): the caller is NAME. Prints
//! `listening on http://ADDR/mcp` once the socket is bound, then serves until killed.
//!
//! Tools: `slow` (`{"ms": N}`: works N ms, a task when the client supports tasks),
//! `cancelled` (how many `slow` calls saw their cancellation on this instance),
//! `deploy` (a task only: asks for a region and a confirmation at once, in the direct
//! form), `migrate` (`{"ms": N}`: a restartable task that asks for a region, then works
//! N ms and names the process that finished it) and `plan` (a resolver tool with two questions, a task when the client
//! supports tasks, inline MRTR otherwise, and over a 2025-11-25 session's back channel).

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tern_mcp::ask;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::fleet::RedisTaskStore;
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{Elicit, McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::tasks::{MemoryTaskStore, TaskSupport, Tasks};
use tern_mcp::transport::BoxFuture;
use tern_mcp::types::v2026_07_28::{ElicitValue, method};

type Failure = Box<dyn std::error::Error>;

struct Settings {
    addr: String,
    redis: Option<String>,
    prefix: String,
    lease: Duration,
    ttl: Duration,
    poll: Duration,
}

fn settings() -> Result<Settings, Failure> {
    let mut out = Settings {
        addr: "127.0.0.1:0".into(),
        redis: None,
        prefix: "tern:task:".into(),
        lease: Duration::from_secs(10),
        ttl: Duration::from_secs(3600),
        poll: Duration::from_millis(50),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let ms = || value.parse::<u64>().map(Duration::from_millis);
        match flag.as_str() {
            "--addr" => out.addr = value.clone(),
            "--redis" => out.redis = Some(value.clone()),
            "--prefix" => out.prefix = value.clone(),
            "--lease-ms" => out.lease = ms()?,
            "--ttl-ms" => out.ttl = ms()?,
            "--poll-ms" => out.poll = ms()?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    Ok(out)
}

/// `user:NAME` is the caller NAME.
struct Users;

impl TokenVerifier for Users {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let user = token.strip_prefix("user:").map(str::to_owned);
        Box::pin(async move {
            user.map(|u| AuthInfo::new("task-tests").with_subject(u))
                .ok_or_else(|| AuthError::InvalidToken("not user:NAME".into()))
        })
    }
}

#[derive(Deserialize, JsonSchema)]
struct Slow {
    ms: u64,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
/// Which region?
struct Region {
    region: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
/// Go ahead?
struct Confirm {
    confirm: bool,
}

fn field(ctx: &ToolContext, key: &str, name: &str) -> Option<ElicitValue> {
    let answer = ctx.input_responses()?.get::<method::Elicit>(key)?.ok()?;
    answer.content?.get(name).cloned()
}

/// How many `slow` calls saw their cancellation.
static CANCELLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn register(mcp: &McpServer) {
    mcp.tool("cancelled")
        .description("How many slow calls were cancelled on this instance")
        .run(|_: NoArgs, _ctx: ToolContext| async move {
            Ok(CANCELLED
                .load(std::sync::atomic::Ordering::SeqCst)
                .to_string())
        });
    mcp.tool("slow")
        .description("Works for `ms` milliseconds")
        .extension(TaskSupport::Optional)
        .run(|args: Slow, ctx: ToolContext| async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(args.ms.min(600_000))) => {}
                () = ctx.cancellation().cancelled() => {
                    CANCELLED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    return Err(ToolError::new("cancelled"));
                }
            }
            Ok(format!("worked {} ms", args.ms))
        });
    mcp.tool("migrate")
        .description("Asks for a region, then works `ms` milliseconds; run again elsewhere if this instance stops")
        .extension(TaskSupport::Required.restartable())
        .run(|args: Slow, ctx: ToolContext| async move {
            let Some(ElicitValue::String(region)) = field(&ctx, "region", "region") else {
                return Ok(ask::input_required(
                    [("region", ask::elicit_form("Which region?", json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}))?)],
                    None,
                )
                .into());
            };
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(args.ms.min(600_000))) => {}
                () = ctx.cancellation().cancelled() => return Err(ToolError::new("cancelled")),
            }
            Ok(tern_mcp::types::v2026_07_28::CallToolOutcome::Complete(
                tern_mcp::types::v2026_07_28::CallToolResult::new(vec![ask::text(format!(
                    "migrated to {region} by process {}",
                    std::process::id()
                ))]),
            ))
        });
    mcp.tool("deploy")
        .description("Asks for a region and a confirmation at once, then deploys")
        .extension(TaskSupport::Required)
        .run(|_: NoArgs, ctx: ToolContext| async move {
            match (field(&ctx, "region", "region"), field(&ctx, "confirm", "confirm")) {
                (Some(ElicitValue::String(region)), Some(ElicitValue::Boolean(yes))) => {
                    let text = if yes { format!("deployed to {region}") } else { "not deployed".into() };
                    Ok(tern_mcp::types::v2026_07_28::CallToolOutcome::Complete(
                        tern_mcp::types::v2026_07_28::CallToolResult::new(vec![ask::text(text)]),
                    ))
                }
                _ => Ok(ask::input_required(
                    [
                        ("region", ask::elicit_form("Which region?", json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}))?),
                        ("confirm", ask::elicit_form("Go ahead?", json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}))?),
                    ],
                    None,
                )
                .into()),
            }
        });
    mcp.tool("plan")
        .description("Asks for a region, then a confirmation (resolvers)")
        .extension(TaskSupport::Optional)
        .resolve(
            |_: NoArgs, region: Elicit<Region>, confirm: Elicit<Confirm>| async move {
                let region = region.accepted().map(|r| r.region).unwrap_or_default();
                let yes = confirm.accepted().is_some_and(|c| c.confirm);
                Ok(format!("planned {region}: {yes}"))
            },
        );
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let s = settings()?;
    let tasks = match &s.redis {
        Some(url) => Tasks::new(RedisTaskStore::connect(url).await?.prefix(s.prefix.clone())),
        None => Tasks::new(MemoryTaskStore::default()),
    }
    .lease(s.lease)
    .ttl(s.ttl)
    .poll_interval(s.poll);
    let mcp = McpServer::new("tasks", "1.0.0").extension(tasks);
    register(&mcp);
    let server = HttpServer::new(mcp.server()?).token_verifier(Arc::new(Users));
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind(&s.addr).await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}/mcp");
    std::io::stdout().flush()?;
    server.serve(listener, shutdown).await?;
    Ok(())
}
