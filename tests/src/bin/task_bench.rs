//! Tasks per second: 16 concurrent clients (by default) each creating a task, polling
//! it and reading its result, over loopback HTTP against one in-process server whose
//! tasks live in memory or in Redis. Run by `scripts/bench-tasks`, which starts the
//! Redis.
//!
//! ```sh
//! task_bench [--redis URL] [--clients N] [--seconds S]
//! ```
//!
//! Prints one line: the store, the clients, tasks completed per second and the
//! `tasks/get` polls each task took.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::fleet::RedisTaskStore;
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::tasks::{ClientTasks, MemoryTaskStore, TaskState, TaskSupport, Tasks, ToolCallStart};

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut redis = None;
    let mut clients = 16usize;
    let mut seconds = 5u64;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--redis" => redis = Some(value),
            "--clients" => clients = value.parse()?,
            "--seconds" => seconds = value.parse()?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let (store, tasks) = match &redis {
        Some(url) => ("redis", Tasks::new(RedisTaskStore::connect(url).await?)),
        // Finished tasks are kept 2 s: the store holds a few seconds of them at this rate.
        None => (
            "memory",
            Tasks::new(MemoryTaskStore::with_capacity(200_000)),
        ),
    };
    let mcp = McpServer::new("bench", "1").extension(
        tasks
            .poll_interval(Duration::from_millis(1))
            .ttl(Duration::from_secs(2)),
    );
    mcp.tool("instant")
        .extension(TaskSupport::Optional)
        .run(|_: NoArgs, _ctx: ToolContext| async move { Ok("done") });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let server = HttpServer::new(mcp.server()?);
    tokio::spawn(server.serve(listener, std::future::pending()));

    let done = Arc::new(AtomicU64::new(0));
    let polls = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for _ in 0..clients {
        let transport =
            tern_mcp::transport::http::client::HttpClientTransport::builder(&url).build()?;
        let client = Client::builder("bench", "1")
            .extension(ClientTasks)
            .era(EraMode::Stateless)
            .connect(Arc::new(transport))
            .await
            .unwrap();
        let (done, polls, stop) = (done.clone(), polls.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let ToolCallStart::Task(task) =
                    client.start_tool_call("instant", json!({})).await?
                else {
                    return Err::<(), Failure>("the call did not become a task".into());
                };
                loop {
                    polls.fetch_add(1, Ordering::Relaxed);
                    match task.get().await? {
                        TaskState::Completed(_) => break,
                        TaskState::Working => tokio::task::yield_now().await,
                        other => return Err(format!("unexpected {other:?}").into()),
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }));
    }
    // A second to warm up, then the measured window.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (d0, p0, t0) = (
        done.load(Ordering::Relaxed),
        polls.load(Ordering::Relaxed),
        Instant::now(),
    );
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let (d1, p1, elapsed) = (
        done.load(Ordering::Relaxed),
        polls.load(Ordering::Relaxed),
        t0.elapsed(),
    );
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await??;
    }
    let completed = d1 - d0;
    println!(
        "tasks: {store:6} store, {clients} clients: {:.0} tasks/s (created, polled, completed), {:.2} tasks/get per task",
        completed as f64 / elapsed.as_secs_f64(),
        (p1 - p0) as f64 / completed.max(1) as f64
    );
    Ok(())
}
