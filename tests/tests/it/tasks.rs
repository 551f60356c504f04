//! Tasks (SEP-2663) across processes: `task_server` instances, each its own process,
//! sharing one redis-server (on a Unix socket of its own), reached by clients that hold
//! a bearer token each (`user:NAME`). A task created on A is polled, answered and
//! finished through B; cancelled through B while A runs it; failed once A is killed and
//! its lease lapses; still readable after both restart; invisible to another user.
//! And one resolver tool runs three ways: inline MRTR, as a task, on a 2025-11-25 session.
//!
//! The Redis tests need `redis-server`: `#[ignore]`d in a plain `cargo test`, run by
//! `scripts/fleet` (which `scripts/test` runs; `.ci/run` installs it).

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::Error;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::tasks::{ClientTasks, TaskHandle, TaskState, ToolCallStart};
use tern_mcp::types::v2026_07_28::{
    ElicitRequestParams, ElicitValue, InputResponse, InputResponses,
};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use crate::redis_support::redis;

/// One `task_server` process.
pub(crate) struct Instance {
    pub(crate) child: Child,
    url: String,
}

pub(crate) async fn start(args: &[&str]) -> Instance {
    let mut child = Command::new(env!("CARGO_BIN_EXE_task_server"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("task_server starts");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("task_server reports its address")
        .unwrap()
        .expect("task_server exited before listening");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("a listening line")
        .to_owned();
    let instance = Instance { child, url };
    // Ready when it answers a protocol request, not when its port is bound.
    let probe = client(&instance, "probe").await;
    for _ in 0..200 {
        if probe
            .task("nothing")
            .get()
            .await
            .is_err_and(|e| rpc_code(&e) == Some(-32602))
        {
            return instance;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let last = probe.task("nothing").get().await;
    panic!("task_server at {} did not answer: {last:?}", instance.url);
}

/// A client of `instance` for `user`, answering every form: a region `eu`, a
/// confirmation `true`.
pub(crate) async fn client(instance: &Instance, user: &str) -> Client {
    client_with(instance, user, true).await
}

async fn client_with(instance: &Instance, user: &str, tasks: bool) -> Client {
    let transport = tern_mcp::transport::http::client::HttpClientTransport::builder(&instance.url)
        .bearer_token(format!("user:{user}"))
        .build()
        .unwrap();
    let builder = Client::builder("task-tests", "1").on_elicitation(answer_form);
    let builder = if tasks {
        builder.extension(ClientTasks)
    } else {
        builder
    };
    builder
        .era(EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

async fn answer_form(
    _ctx: tern_mcp::client::InputContext,
    params: ElicitRequestParams,
) -> Result<tern_mcp::types::v2026_07_28::ElicitResult, tern_mcp::jsonrpc::RpcError> {
    let ElicitRequestParams::Form(form) = params else {
        panic!("a form was expected");
    };
    let field = serde_json::to_value(&form.requested_schema).unwrap()["properties"]
        .as_object()
        .and_then(|p| p.keys().next().cloned())
        .unwrap_or_default();
    Ok(match field.as_str() {
        "confirm" => tern_mcp::ask::accept([("confirm", ElicitValue::Boolean(true))]),
        _ => tern_mcp::ask::accept([(field.as_str(), ElicitValue::String("eu".into()))]),
    })
}

/// The JSON-RPC error code of a failure, whether it came in a result or as a refusal
/// (HTTP 400).
fn rpc_code(e: &Error) -> Option<i64> {
    match e {
        Error::Rpc(e) => Some(e.code),
        Error::Transport(t) => t.rpc_error().map(|r| r.code),
        _ => None,
    }
}

fn text(result: &tern_mcp::types::v2026_07_28::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub(crate) async fn started_task(
    client: &Client,
    tool: &str,
    args: serde_json::Value,
) -> TaskHandle {
    match client.start_tool_call(tool, args).await.unwrap() {
        ToolCallStart::Task(t) => t,
        ToolCallStart::Done(r) => panic!("{tool} did not become a task: {r:?}"),
    }
}

/// Polls `task` until `done` says its state is the one awaited, for at most `within`.
pub(crate) async fn until(
    task: &TaskHandle,
    within: Duration,
    done: impl Fn(&TaskState) -> bool,
) -> TaskState {
    let start = Instant::now();
    loop {
        let state = task.get().await.unwrap();
        if done(&state) {
            return state;
        }
        assert!(
            start.elapsed() < within,
            "task {} still {state:?}",
            task.id()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn answer(key: &str, field: &str, value: ElicitValue) -> InputResponses {
    let mut r = InputResponses::new();
    r.insert(
        key,
        InputResponse::Elicit(tern_mcp::ask::accept([(field, value)])),
    )
    .unwrap();
    r
}

#[tokio::test]
async fn a_resolver_tool_with_two_questions_completes_inline_as_a_task_and_on_a_session() {
    let server = start(&[]).await;
    // Inline MRTR: a client that does not declare tasks answers two rounds.
    let inline = client_with(&server, "ada", false).await;
    let result = inline.call_tool("plan", json!({})).await.unwrap();
    assert_eq!(text(&result), "planned eu: true");
    // As a task: the same questions surface as the task's input requests.
    let tasks = client(&server, "ada").await;
    let task = started_task(&tasks, "plan", json!({})).await;
    let asked = until(&task, Duration::from_secs(10), |s| {
        matches!(s, TaskState::InputRequired(_))
    })
    .await;
    // Both questions at once: neither depends on the other.
    assert!(matches!(asked, TaskState::InputRequired(r) if r.len() == 2));
    let result = task.wait().await.unwrap();
    assert_eq!(text(&result), "planned eu: true");
    // And the automatic path follows a task to its end as if the call were synchronous.
    let result = tasks.call_tool("plan", json!({})).await.unwrap();
    assert_eq!(text(&result), "planned eu: true");
    // On a 2025-11-25 session: each question a request over the session.
    let transport = tern_mcp::transport::http::client::HttpClientTransport::builder(&server.url)
        .bearer_token("user:ada")
        .build()
        .unwrap();
    let session = Client::builder("task-tests", "1")
        .on_elicitation(answer_form)
        .era(EraMode::Session)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    assert_eq!(session.protocol_version(), "2025-11-25");
    let result = session.call_tool("plan", json!({})).await.unwrap();
    assert_eq!(text(&result), "planned eu: true");
}

#[tokio::test]
async fn a_task_only_tool_refuses_a_client_without_tasks_and_a_dropped_call_cancels_its_task() {
    let server = start(&["--poll-ms", "20"]).await;
    let plain = client_with(&server, "ada", false).await;
    let err = plain.call_tool("deploy", json!({})).await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(-32021), "{err}");
    // The automatic call gives up (a timeout): the task it followed is cancelled.
    let c = client(&server, "ada").await;
    let cancelled = || async { text(&c.call_tool("cancelled", json!({})).await.unwrap()) };
    assert_eq!(cancelled().await, "0");
    let call = c.call_tool("slow", json!({"ms": 60_000}));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err()
    );
    let start = Instant::now();
    while cancelled().await != "1" {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the abandoned task still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // By hand: a handle's wait reports the cancellation as such.
    let task = started_task(&c, "slow", json!({"ms": 60_000})).await;
    task.cancel().await.unwrap();
    until(&task, Duration::from_secs(5), |s| {
        matches!(s, TaskState::Cancelled)
    })
    .await;
    let err = c.task(task.id()).wait().await.unwrap_err();
    assert!(
        matches!(err, Error::TaskCancelled(ref id) if id == task.id()),
        "{err}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_task_created_on_a_is_answered_partially_then_fully_and_completed_through_b() {
    let redis = redis("answer").await;
    tasks_are_shared(&redis.url).await;
}

/// Two `task_server` instances on the Redis (or Redis Cluster) at `url`: a task created
/// through one is answered and completes through the other.
pub(crate) async fn tasks_are_shared(url: &str) {
    let a = start(&["--redis", url]).await;
    let b = start(&["--redis", url]).await;
    let task = started_task(&client(&a, "ada").await, "deploy", json!({})).await;
    let on_b = client(&b, "ada").await.task(task.id());
    let TaskState::InputRequired(asked) = until(&on_b, Duration::from_secs(10), |s| {
        matches!(s, TaskState::InputRequired(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["confirm", "region"]);
    // One answer: the other stays outstanding, at once.
    on_b.update(answer("region", "region", ElicitValue::String("eu".into())))
        .await
        .unwrap();
    let TaskState::InputRequired(left) = on_b.get().await.unwrap() else {
        panic!("still waiting for the confirmation")
    };
    assert_eq!(left.keys().collect::<Vec<_>>(), ["confirm"]);
    on_b.update(answer("confirm", "confirm", ElicitValue::Boolean(true)))
        .await
        .unwrap();
    let TaskState::Completed(result) = until(&on_b, Duration::from_secs(10), |s| {
        matches!(s, TaskState::Completed(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(result["content"][0]["text"], "deployed to eu");
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_task_running_on_a_is_cancelled_through_b() {
    let redis = redis("cancel").await;
    let a = start(&["--redis", &redis.url]).await;
    let b = start(&["--redis", &redis.url]).await;
    let task = started_task(&client(&a, "ada").await, "slow", json!({"ms": 60_000})).await;
    let on_b = client(&b, "ada").await.task(task.id());
    assert!(matches!(on_b.get().await.unwrap(), TaskState::Working));
    on_b.cancel().await.unwrap();
    until(&on_b, Duration::from_secs(5), |s| {
        matches!(s, TaskState::Cancelled)
    })
    .await;
    // Cancelling a finished task is acknowledged all the same.
    on_b.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_task_whose_instance_is_killed_fails_once_its_lease_lapses() {
    let redis = redis("lease").await;
    let lease = Duration::from_millis(600);
    let lease_ms = lease.as_millis().to_string();
    let mut a = start(&["--redis", &redis.url, "--lease-ms", &lease_ms]).await;
    let b = start(&["--redis", &redis.url, "--lease-ms", &lease_ms]).await;
    let task = started_task(&client(&a, "ada").await, "slow", json!({"ms": 60_000})).await;
    let on_b = client(&b, "ada").await.task(task.id());
    tokio::time::sleep(lease * 2).await;
    assert!(
        matches!(on_b.get().await.unwrap(), TaskState::Working),
        "renewed while A lives"
    );
    a.child.kill().await.unwrap();
    let killed = Instant::now();
    let TaskState::Failed(e) = until(&on_b, lease * 4, |s| matches!(s, TaskState::Failed(_))).await
    else {
        unreachable!()
    };
    assert!(
        killed.elapsed() <= lease * 2,
        "failed {:?} after the kill",
        killed.elapsed()
    );
    assert_eq!(e.code, -32603);
    assert!(e.message.contains("stopped"), "{}", e.message);
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_restartable_task_whose_instance_is_killed_is_run_again_by_another_from_its_answers() {
    let redis = redis("restartable").await;
    let lease = Duration::from_millis(600);
    let lease_ms = lease.as_millis().to_string();
    let mut a = start(&["--redis", &redis.url, "--lease-ms", &lease_ms]).await;
    let b = start(&["--redis", &redis.url, "--lease-ms", &lease_ms]).await;
    let task = started_task(&client(&a, "ada").await, "migrate", json!({"ms": 2_000})).await;
    let on_b = client(&b, "ada").await.task(task.id());
    until(&on_b, Duration::from_secs(5), |s| {
        matches!(s, TaskState::InputRequired(_))
    })
    .await;
    // Answered through B; A's body takes the answer and works on.
    on_b.update(answer("region", "region", ElicitValue::String("eu".into())))
        .await
        .unwrap();
    tokio::time::sleep(lease).await;
    assert!(matches!(on_b.get().await.unwrap(), TaskState::Working));
    a.child.kill().await.unwrap();
    // Once A's lease lapses, B takes the task over and runs the body again from the
    // answered round: the region is not asked again.
    let TaskState::Completed(result) = until(&on_b, lease * 4 + Duration::from_secs(4), |s| {
        matches!(
            s,
            TaskState::Completed(_) | TaskState::Failed(_) | TaskState::InputRequired(_)
        )
    })
    .await
    else {
        panic!("the task was run again to its end")
    };
    let b_pid = b.child.id().unwrap();
    assert_eq!(
        result["content"][0]["text"],
        format!("migrated to eu by process {b_pid}")
    );
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_finished_task_outlives_a_restart_of_both_until_its_ttl_and_no_one_else_sees_it() {
    let redis = redis("restart").await;
    let ttl = ["--ttl-ms", "4000"];
    let mut a = start(&[&["--redis", &redis.url][..], &ttl].concat()).await;
    let mut b = start(&[&["--redis", &redis.url][..], &ttl].concat()).await;
    let task = started_task(&client(&a, "ada").await, "slow", json!({"ms": 10})).await;
    let id = task.id().to_owned();
    until(&task, Duration::from_secs(5), |s| {
        matches!(s, TaskState::Completed(_))
    })
    .await;
    a.child.kill().await.unwrap();
    b.child.kill().await.unwrap();
    let a = start(&[&["--redis", &redis.url][..], &ttl].concat()).await;
    let b = start(&[&["--redis", &redis.url][..], &ttl].concat()).await;
    for instance in [&a, &b] {
        let TaskState::Completed(result) =
            client(instance, "ada").await.task(&id).get().await.unwrap()
        else {
            panic!("the result is kept")
        };
        assert_eq!(result["content"][0]["text"], "worked 10 ms");
        // Another caller: as if there were no such task.
        let err = client(instance, "eve")
            .await
            .task(&id)
            .get()
            .await
            .unwrap_err();
        assert_eq!(rpc_code(&err), Some(-32602), "{err}");
        let err = client(instance, "eve")
            .await
            .task(&id)
            .cancel()
            .await
            .unwrap_err();
        assert_eq!(rpc_code(&err), Some(-32602), "{err}");
    }
    // Past its TTL the task is gone.
    tokio::time::sleep(Duration::from_millis(4200)).await;
    let err = client(&a, "ada").await.task(&id).get().await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(-32602), "{err}");
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_client_that_only_listens_hears_a_restartable_task_taken_over_and_finished() {
    let redis = redis("restartable-listen").await;
    let lease = Duration::from_millis(600);
    let lease_ms = lease.as_millis().to_string();
    let args = [
        "--redis",
        &redis.url,
        "--lease-ms",
        &lease_ms,
        "--poll-ms",
        "50",
    ];
    let mut a = start(&args).await;
    let b = start(&args).await;
    let task = started_task(&client(&a, "ada").await, "migrate", json!({"ms": 1_000})).await;
    let on_b = client(&b, "ada").await;
    let handle = on_b.task(task.id());
    until(&handle, Duration::from_secs(5), |s| {
        matches!(s, TaskState::InputRequired(_))
    })
    .await;
    handle
        .update(answer("region", "region", ElicitValue::String("eu".into())))
        .await
        .unwrap();
    let mut listener = on_b.listen(watching(&[task.id()])).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    a.child.kill().await.unwrap();
    // No tasks/get from here on: the listen stream's own reads take the task over.
    let deadline = Instant::now() + lease * 4 + Duration::from_secs(5);
    loop {
        let notice = tokio::time::timeout_at(deadline.into(), listener.next())
            .await
            .expect("the task ends in time")
            .expect("the stream stays open");
        let tern_mcp::client::Notice::Task(change) = notice else {
            continue;
        };
        let params = serde_json::to_value(&change).unwrap();
        match params["status"].as_str() {
            Some("completed") => {
                let b_pid = b.child.id().unwrap();
                assert_eq!(
                    params["result"]["content"][0]["text"],
                    format!("migrated to eu by process {b_pid}")
                );
                break;
            }
            Some("failed" | "cancelled" | "input_required") => panic!("{params}"),
            _ => {}
        }
    }
}

fn watching(ids: &[&str]) -> tern_mcp::types::v2026_07_28::SubscriptionFilter {
    serde_json::from_value(json!({ "taskIds": ids })).unwrap()
}

#[tokio::test]
async fn a_listener_hears_a_task_change_status_until_it_ends() {
    let server = start(&["--poll-ms", "20"]).await;
    let c = client(&server, "ada").await;
    let task = started_task(&c, "deploy", json!({})).await;
    let mut listener = c.listen(watching(&[task.id()])).await.unwrap();
    let mut statuses = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let notice = tokio::time::timeout_at(deadline.into(), listener.next())
            .await
            .expect("notifications/tasks in time")
            .expect("the stream stays open");
        let tern_mcp::client::Notice::Task(change) = notice else {
            continue;
        };
        let params = serde_json::to_value(&change).unwrap();
        assert_eq!(params["taskId"], task.id());
        assert!(
            params["_meta"]["io.modelcontextprotocol/subscriptionId"].is_string(),
            "{params}"
        );
        let status = params["status"].as_str().unwrap().to_owned();
        if statuses.last() != Some(&status) {
            statuses.push(status.clone());
        }
        match status.as_str() {
            "input_required" => {
                task.update(answer("region", "region", ElicitValue::String("eu".into())))
                    .await
                    .unwrap();
                task.update(answer("confirm", "confirm", ElicitValue::Boolean(true)))
                    .await
                    .unwrap();
            }
            "completed" => {
                assert_eq!(params["result"]["content"][0]["text"], "deployed to eu");
                break;
            }
            _ => {}
        }
    }
    assert!(
        statuses.contains(&"input_required".to_owned()),
        "{statuses:?}"
    );
    assert_eq!(statuses.last().map(String::as_str), Some("completed"));
    // Naming tasks without declaring the extension is refused.
    let plain = client_with(&server, "ada", false).await;
    let err = plain.listen(watching(&[task.id()])).await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(-32021), "{err}");
}

/// The resident memory of process `pid` now, in KiB.
fn rss_kib(pid: u32) -> u64 {
    crate::http_support::memory_kib(pid, "VmRSS")
}

/// Mallory starts tasks until she is refused: the refusal names her own cap, and Alice
/// can still start hers.
async fn one_user_cannot_fill_the_store_for_everyone(server: &Instance) {
    let pid = server.child.id().unwrap();
    let before = rss_kib(pid);
    let mallory = client(server, "mallory").await;
    let mut held = Vec::new();
    let refusal = loop {
        match mallory
            .start_tool_call("slow", json!({"ms": 600_000}))
            .await
        {
            Ok(ToolCallStart::Task(task)) => held.push(task),
            Ok(ToolCallStart::Done(r)) => panic!("slow did not become a task: {r:?}"),
            Err(e) => break e,
        }
        assert!(held.len() <= 100, "no cap stopped her");
    };
    println!(
        "one user holding {} tasks: the server's resident memory grew {} KiB",
        held.len(),
        rss_kib(pid).saturating_sub(before)
    );
    assert_eq!(held.len(), 100, "the default cap per principal");
    assert_eq!(rpc_code(&refusal), Some(-32000), "{refusal}");
    let message = refusal.to_string();
    assert!(message.contains("you hold 100 live tasks"), "{message}");
    let alice = client(server, "alice").await;
    let task = started_task(&alice, "slow", json!({"ms": 10})).await;
    let done = until(&task, Duration::from_secs(10), |s| {
        matches!(s, TaskState::Completed(_))
    })
    .await;
    assert!(matches!(done, TaskState::Completed(_)));
    // Her held tasks are cancelled when the handles go.
    drop(held);
}

#[tokio::test]
async fn one_user_at_the_task_cap_is_refused_by_name_and_others_are_served() {
    one_user_cannot_fill_the_store_for_everyone(&start(&[]).await).await;
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn one_user_at_the_task_cap_is_refused_by_name_on_redis_too() {
    let redis = redis("owner-cap").await;
    one_user_cannot_fill_the_store_for_everyone(&start(&["--redis", &redis.url]).await).await;
}
