//! Task leases have owners, and the task cap counts running tasks per caller. Two
//! instances share one store (a `MemoryTaskStore` cloned, or one redis-server): A runs
//! a restartable task and stalls past its lease (its store calls held, as a paused
//! process's would be, while its body waits to be told), B takes the task over, A
//! resumes. Exactly one body's result is kept (B's): A's renewal is refused, its body
//! cancelled, its writes refused. And a hundred quick tasks that finished lock out
//! neither their anonymous caller nor another (told apart by address), while running
//! tasks are still capped.
//!
//! The Redis test needs `redis-server`: `#[ignore]`d in a plain `cargo test`, run by
//! `scripts/fleet`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::tasks::{
    ClientTasks, MemoryTaskStore, TaskHandle, TaskState, TaskStore, TaskSupport, Tasks,
    ToolCallStart,
};
use tokio::sync::{mpsc, watch};

use crate::http_support::{self, mcp_headers};

pub(crate) mod stall;

use stall::{Stall, stallable};

/// What one instance's `work` body reports: it started, it saw its cancellation.
#[derive(Debug, PartialEq)]
enum Seen {
    Started,
    Cancelled,
}

/// One instance's `work` tool: a restartable task whose body says it started, then
/// waits until `go` says so (finishing "by NAME") or its cancellation.
struct Body {
    seen: mpsc::UnboundedReceiver<Seen>,
    go: watch::Sender<bool>,
}

fn instance(name: &'static str, tasks: Tasks) -> (McpServer, Body) {
    let mcp = McpServer::new(name, "1.0.0").extension(tasks);
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let (go, _) = watch::channel(false);
    let go_rx = go.clone();
    mcp.tool("work")
        .description("Works until told, then names the instance that finished it")
        .extension(TaskSupport::Required.restartable())
        .run(move |_: NoArgs, ctx: ToolContext| {
            let seen = seen_tx.clone();
            let mut go = go_rx.subscribe();
            async move {
                let _ = seen.send(Seen::Started);
                tokio::select! {
                    _ = go.wait_for(|g| *g) => Ok(format!("by {name}")),
                    () = ctx.cancellation().cancelled() => {
                        let _ = seen.send(Seen::Cancelled);
                        Err(ToolError::new("cancelled"))
                    }
                }
            }
        });
    (mcp, Body { seen, go })
}

/// Serves `mcp` on a loopback port of its own.
pub(crate) async fn serve(mcp: &McpServer) -> SocketAddr {
    http_support::serve(HttpServer::new(mcp.server().unwrap())).await
}

/// An anonymous client of the server at `addr` that declares tasks.
async fn client(addr: SocketAddr) -> Client {
    let transport =
        tern_mcp::transport::http::client::HttpClientTransport::builder(http_support::url(addr))
            .build()
            .unwrap();
    Client::builder("task-leases", "1")
        .extension(ClientTasks)
        .era(EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

async fn started_task(client: &Client, tool: &str) -> TaskHandle {
    match client.start_tool_call(tool, json!({})).await.unwrap() {
        ToolCallStart::Task(t) => t,
        ToolCallStart::Done(r) => panic!("{tool} did not become a task: {r:?}"),
    }
}

/// The next thing body `body` reports, within ten seconds.
async fn next_seen(body: &mut Body, who: &str) -> Seen {
    tokio::time::timeout(Duration::from_secs(10), body.seen.recv())
        .await
        .unwrap_or_else(|_| panic!("{who}'s body reported nothing in 10 s"))
        .expect("the body's tool is served")
}

/// Polls `task` until `done`, for at most ten seconds.
pub(crate) async fn until(task: &TaskHandle, done: impl Fn(&TaskState) -> bool) -> TaskState {
    let start = Instant::now();
    loop {
        let state = task.get().await.unwrap();
        if done(&state) {
            return state;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "task {} still {state:?}",
            task.id()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until A's store has refused `what` for a lost lease, for at most ten seconds.
async fn refused(stall: &Stall, what: &str) {
    let start = Instant::now();
    while !stall.refused().iter().any(|r| r == what) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "A's {what} was not refused: {:?}",
            stall.refused()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A's task taken over by B while A stalls; A resumes while B's body still runs.
/// `a_finishes` releases A's body during the stall (its result written once A
/// resumes); else A's body waits and can only be cancelled. Returns the text of the
/// stored result.
async fn a_stalls_and_b_takes_over(a: Tasks, stall: Stall, b: Tasks, a_finishes: bool) -> String {
    let (a_mcp, mut a_body) = instance("A", a);
    let (b_mcp, mut b_body) = instance("B", b);
    let (on_a, on_b) = (
        client(serve(&a_mcp).await).await,
        client(serve(&b_mcp).await).await,
    );
    let task = started_task(&on_a, "work").await;
    assert_eq!(next_seen(&mut a_body, "A").await, Seen::Started);
    stall.pause();
    // B reads the task until A's lease has lapsed: then it takes it over and runs the
    // body again.
    let on_b = on_b.task(task.id());
    until(&on_b, |s| matches!(s, TaskState::Working)).await;
    let start = Instant::now();
    loop {
        assert!(matches!(on_b.get().await.unwrap(), TaskState::Working));
        if let Ok(Some(seen)) =
            tokio::time::timeout(Duration::from_millis(50), b_body.seen.recv()).await
        {
            assert_eq!(seen, Seen::Started);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "B never took the task over"
        );
    }
    if a_finishes {
        a_body.go.send_replace(true);
    }
    stall.resume();
    if a_finishes {
        refused(&stall, "transition to Completed").await;
    } else {
        assert_eq!(next_seen(&mut a_body, "A").await, Seen::Cancelled);
        refused(&stall, "renew").await;
        refused(&stall, "transition to Cancelled").await;
    }
    // A's write changed nothing: the task still runs on B, which finishes it.
    assert!(matches!(on_b.get().await.unwrap(), TaskState::Working));
    b_body.go.send_replace(true);
    let TaskState::Completed(result) = until(&on_b, |s| !matches!(s, TaskState::Working)).await
    else {
        panic!("B's body finished the task")
    };
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // And the client that started it on A reads the same.
    let TaskState::Completed(seen_on_a) = on_a.task(task.id()).get().await.unwrap() else {
        panic!("completed on A too")
    };
    assert_eq!(seen_on_a, result);
    text
}

/// Both instances' tasks on one lease short enough for a test.
pub(crate) fn tasks_on(store: impl TaskStore) -> Tasks {
    Tasks::new(store)
        .lease(Duration::from_millis(300))
        .poll_interval(Duration::from_millis(20))
}

#[tokio::test]
async fn a_stalled_instance_taken_over_loses_its_lease_its_body_is_cancelled_and_b_result_kept() {
    let shared = MemoryTaskStore::default();
    let (a_store, stall) = stallable(shared.clone());
    let text = a_stalls_and_b_takes_over(tasks_on(a_store), stall, tasks_on(shared), false).await;
    println!(
        "a stalled instance taken over (memory store): one body's result ({text}), the other cancelled"
    );
    assert_eq!(text, "by B");
}

#[tokio::test]
async fn a_stalled_instance_whose_body_finished_meanwhile_has_its_result_refused() {
    let shared = MemoryTaskStore::default();
    let (a_store, stall) = stallable(shared.clone());
    let text = a_stalls_and_b_takes_over(tasks_on(a_store), stall, tasks_on(shared), true).await;
    assert_eq!(text, "by B");
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn on_redis_a_stalled_instance_taken_over_is_fenced_off_in_the_scripts() {
    let redis = crate::redis_support::redis("leases").await;
    let connect = || tern_mcp::fleet::RedisTaskStore::connect(&redis.url);
    let (a_store, stall) = stallable(connect().await.unwrap());
    let b = tasks_on(connect().await.unwrap());
    let text = a_stalls_and_b_takes_over(tasks_on(a_store), stall, b, false).await;
    println!(
        "a stalled instance taken over (Redis store): one body's result ({text}), the other cancelled"
    );
    assert_eq!(text, "by B");
    // A result written by a stale body after the take-over is refused there too.
    let (a_store, stall) = stallable(connect().await.unwrap());
    let b = tasks_on(connect().await.unwrap());
    let text = a_stalls_and_b_takes_over(tasks_on(a_store), stall, b, true).await;
    assert_eq!(text, "by B");
}

/// A server whose `quick` task ends at once and whose `hold` task runs until
/// cancelled, for callers without credentials.
async fn anonymous_server(store: impl TaskStore) -> SocketAddr {
    let mcp = McpServer::new("caps", "1.0.0")
        .extension(Tasks::new(store).poll_interval(Duration::from_millis(5)));
    mcp.tool("quick")
        .extension(TaskSupport::Required)
        .run(|_: NoArgs, _ctx: ToolContext| async { Ok("done") });
    mcp.tool("hold").extension(TaskSupport::Required).run(
        |_: NoArgs, ctx: ToolContext| async move {
            ctx.cancellation().cancelled().await;
            Ok("held")
        },
    );
    serve(&mcp).await
}

/// `tools/call` of `tool` from address `from` (a loopback address of its own, so the
/// server sees another caller), as raw HTTP: the JSON-RPC answer.
async fn call_from(from: IpAddr, addr: SocketAddr, tool: &str) -> Value {
    let meta = tern_tests::wire::meta(
        json!({"extensions": {tern_mcp::types::ext_tasks::EXTENSION_ID: {}}}),
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta}})
    .to_string();
    let mut headers = mcp_headers("tools/call", Some(tool));
    http_support::set(&mut headers, "Accept", Some("application/json"));
    http_support::post_from(from, addr, &headers, &body)
        .await
        .json()
}

fn made_a_task(answer: &Value) -> bool {
    answer["result"]["resultType"] == "task"
}

#[tokio::test]
async fn finished_tasks_lock_out_no_anonymous_caller_and_running_ones_are_capped_per_address() {
    finished_tasks_do_not_hold_the_cap(anonymous_server(MemoryTaskStore::default()).await).await;
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn on_redis_finished_tasks_lock_out_no_anonymous_caller_either() {
    let redis = crate::redis_support::redis("anonymous-cap").await;
    let store = redis.task_store().await;
    finished_tasks_do_not_hold_the_cap(anonymous_server(store).await).await;
}

/// A hundred quick tasks, finished, then a hundred held: see the test names.
async fn finished_tasks_do_not_hold_the_cap(addr: SocketAddr) {
    let first: IpAddr = [127, 0, 0, 1].into();
    let second: IpAddr = [127, 0, 0, 2].into();
    // One anonymous caller runs a hundred quick tasks, each to its end.
    let one = client(addr).await;
    let mut quick = Vec::new();
    for _ in 0..100 {
        let task = started_task(&one, "quick").await;
        until(&task, |s| matches!(s, TaskState::Completed(_))).await;
        quick.push(task);
    }
    // Its next task is taken, and so is another anonymous caller's.
    until(&started_task(&one, "quick").await, |s| {
        matches!(s, TaskState::Completed(_))
    })
    .await;
    let other = call_from(second, addr, "quick").await;
    assert!(made_a_task(&other), "{other}");
    // Running tasks are still capped: a hundred held, the next refused by name.
    let mut held = 0;
    let refusal = loop {
        let answer = call_from(first, addr, "hold").await;
        if !made_a_task(&answer) {
            break answer;
        }
        held += 1;
        assert!(held <= 100, "no cap stopped the caller");
    };
    assert_eq!(held, 100, "{refusal}");
    assert_eq!(refusal["error"]["code"], -32000, "{refusal}");
    let message = refusal["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("you hold 100 live tasks"), "{message}");
    // The other address is its own caller: still served.
    let other = call_from(second, addr, "hold").await;
    assert!(made_a_task(&other), "{other}");
    // A caller keeps at most a hundred finished tasks: its oldest went to make room for
    // its newest (101 finished when its first held task came).
    assert!(matches!(quick[1].get().await, Ok(TaskState::Completed(_))));
    let gone = quick[0].get().await.unwrap_err();
    assert!(gone.to_string().contains("Unknown task"), "{gone}");
}

/// Sends `signal` (`-STOP`, `-CONT`) to process `pid`.
async fn signal(pid: u32, signal: &str) {
    let sent = tokio::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .await
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_process_paused_past_its_lease_and_taken_over_does_not_finish_the_task() {
    use crate::tasks::{answer, client, start, started_task, until};
    use tern_mcp::types::v2026_07_28::ElicitValue;
    let redis = crate::redis_support::redis("sigstop").await;
    let lease = Duration::from_millis(600);
    let args = [
        "--redis",
        &redis.url,
        "--lease-ms",
        "600",
        "--poll-ms",
        "50",
    ];
    let a = start(&args).await;
    let b = start(&args).await;
    let (a_pid, b_pid) = (a.child.id().unwrap(), b.child.id().unwrap());
    // A restartable task on A, answered, its body working three seconds.
    let task = started_task(&client(&a, "ada").await, "migrate", json!({"ms": 3_000})).await;
    let on_b = client(&b, "ada").await.task(task.id());
    until(&on_b, Duration::from_secs(5), |s| {
        matches!(s, TaskState::InputRequired(_))
    })
    .await;
    on_b.update(answer("region", "region", ElicitValue::String("eu".into())))
        .await
        .unwrap();
    // A's body takes the answer and works on from it (its restart point moved on).
    tokio::time::sleep(lease).await;
    assert!(matches!(on_b.get().await.unwrap(), TaskState::Working));
    // A stops past its lease; B's reads take the task over and run its body again.
    signal(a_pid, "-STOP").await;
    let stopped = Instant::now();
    while stopped.elapsed() < lease * 3 {
        let state = on_b.get().await.unwrap();
        assert!(matches!(state, TaskState::Working), "{state:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A resumes; its body, started first, would finish first.
    signal(a_pid, "-CONT").await;
    let TaskState::Completed(result) = until(&on_b, Duration::from_secs(15), |s| {
        !matches!(s, TaskState::Working)
    })
    .await
    else {
        panic!("the task was run to its end")
    };
    assert_eq!(
        result["content"][0]["text"],
        format!("migrated to eu by process {b_pid}"),
        "A is {a_pid}"
    );
}
