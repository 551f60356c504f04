//! The tasks extension attacked from outside, knowing only its public description:
//! several instances sharing one store (memory or Redis) reading a lapsed task at
//! once, a take-over racing the original's last write, an instance losing its lease
//! twice, the owner cancelling during a take-over; callers reaching tasks not theirs
//! (another principal, another anonymous address); the running cap given back when
//! tasks end; a thousand quick tasks kept bounded, newest first; hostile task ids and
//! answers; a body that panics; Redis restarted under a running task.
//!
//! The Redis tests need `redis-server`: `#[ignore]`d in a plain `cargo test`, run by
//! `scripts/fleet`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext, ToolError};
use tern_mcp::tasks::{
    ClientTasks, MemoryTaskStore, Status, TaskHandle, TaskState, TaskStore, TaskSupport, Tasks,
    ToolCallStart,
};
use tern_mcp::transport::BoxFuture;
use tern_mcp::types::v2026_07_28::{ElicitValue, InputResponse, InputResponses};
use tokio::sync::{mpsc, watch};

use crate::http_support::{self, mcp_headers};

use crate::task_leases::stall::{Stall, stallable};
use crate::task_leases::{serve, tasks_on, until};

/// `user:NAME` is the caller NAME.
struct Users;

impl TokenVerifier for Users {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let user = token.strip_prefix("user:").map(str::to_owned);
        Box::pin(async move {
            user.map(|u| AuthInfo::new("tasks-attacker").with_subject(u))
                .ok_or_else(|| AuthError::InvalidToken("not user:NAME".into()))
        })
    }
}

/// What the instances' bodies report: which instance, and what it saw.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Seen {
    Started(&'static str),
    Cancelled(&'static str),
}

/// The instances of one fleet: every body reports on `seen`, and all finish when
/// `go` says so.
struct Fleet {
    seen: mpsc::UnboundedReceiver<Seen>,
    seen_tx: mpsc::UnboundedSender<Seen>,
    go: watch::Sender<bool>,
}

impl Fleet {
    fn new() -> Self {
        let (seen_tx, seen) = mpsc::unbounded_channel();
        Fleet {
            seen,
            seen_tx,
            go: watch::channel(false).0,
        }
    }

    /// An instance named `name` on `tasks`, with the restartable `work` tool (works until
    /// `go`, then names the instance), `ask` (asks a region, then names it), `hold`
    /// (until cancelled), `quick` and `boom` (panics).
    fn instance(&self, name: &'static str, tasks: Tasks) -> McpServer {
        let mcp = McpServer::new(name, "1.0.0").extension(tasks);
        let (seen, go) = (self.seen_tx.clone(), self.go.clone());
        mcp.tool("work")
            .extension(TaskSupport::Required.restartable())
            .run(move |_: NoArgs, ctx: ToolContext| {
                let seen = seen.clone();
                let mut go = go.subscribe();
                async move {
                    let _ = seen.send(Seen::Started(name));
                    tokio::select! {
                        _ = go.wait_for(|g| *g) => Ok(format!("by {name}")),
                        () = ctx.cancellation().cancelled() => {
                            let _ = seen.send(Seen::Cancelled(name));
                            Err(ToolError::new("cancelled"))
                        }
                    }
                }
            });
        mcp.tool("ask").extension(TaskSupport::Required).run(
            |_: NoArgs, ctx: ToolContext| async move {
                Ok(match answered_region(&ctx) {
                    Some(r) => ask_done(format!("region {r}")),
                    None => ask_region()?,
                })
            },
        );
        let seen = self.seen_tx.clone();
        mcp.tool("rask")
            .extension(TaskSupport::Required.restartable())
            .run(move |_: NoArgs, ctx: ToolContext| {
                let seen = seen.clone();
                async move {
                    let _ = seen.send(Seen::Started(name));
                    Ok(match answered_region(&ctx) {
                        Some(r) => ask_done(format!("region {r} by {name}")),
                        None => ask_region()?,
                    })
                }
            });
        mcp.tool("hold").extension(TaskSupport::Required).run(
            |_: NoArgs, ctx: ToolContext| async move {
                ctx.cancellation().cancelled().await;
                Ok("held")
            },
        );
        mcp.tool("quick")
            .extension(TaskSupport::Required)
            .run(|_: NoArgs, _ctx: ToolContext| async { Ok("done") });
        mcp.tool("boom").extension(TaskSupport::Required).run(
            |_: NoArgs, _ctx: ToolContext| async move {
                if std::hint::black_box(true) {
                    panic!("the body blew up");
                }
                Ok("unreachable")
            },
        );
        mcp
    }

    /// Every report the bodies made within `quiet` of each other (bounded to 10 s).
    async fn drain(&mut self, quiet: Duration) -> Vec<Seen> {
        let start = Instant::now();
        let mut out = Vec::new();
        while start.elapsed() < Duration::from_secs(10) {
            match tokio::time::timeout(quiet, self.seen.recv()).await {
                Ok(Some(s)) => out.push(s),
                _ => break,
            }
        }
        out
    }

    /// The next report, within ten seconds.
    async fn next(&mut self) -> Seen {
        tokio::time::timeout(Duration::from_secs(10), self.seen.recv())
            .await
            .expect("a body reported within 10 s")
            .expect("the fleet is served")
    }
}

/// The `region` answer in this round's input responses.
fn answered_region(ctx: &ToolContext) -> Option<String> {
    let answer = ctx
        .input_responses()?
        .get::<tern_mcp::types::v2026_07_28::method::Elicit>("region")?
        .ok()?;
    match answer.content?.get("region")? {
        ElicitValue::String(r) => Some(r.clone()),
        _ => None,
    }
}

fn ask_done(text: String) -> tern_mcp::types::v2026_07_28::CallToolOutcome {
    tern_mcp::types::v2026_07_28::CallToolOutcome::Complete(
        tern_mcp::types::v2026_07_28::CallToolResult::new(vec![tern_mcp::ask::text(text)]),
    )
}

fn ask_region() -> Result<tern_mcp::types::v2026_07_28::CallToolOutcome, ToolError> {
    let form = json!({"type": "object", "properties": {"region": {"type": "string"}}});
    Ok(tern_mcp::ask::input_required(
        [("region", tern_mcp::ask::elicit_form("Which region?", form)?)],
        None,
    )
    .into())
}

async fn serve_authenticated(mcp: &McpServer) -> SocketAddr {
    http_support::serve(HttpServer::new(mcp.server().unwrap()).token_verifier(Arc::new(Users)))
        .await
}

/// A client of `addr` that declares tasks, as `user` (anonymous when `None`).
async fn client(addr: SocketAddr, user: Option<&str>) -> Client {
    let mut transport =
        tern_mcp::transport::http::client::HttpClientTransport::builder(http_support::url(addr));
    if let Some(u) = user {
        transport = transport.bearer_token(format!("user:{u}"));
    }
    Client::builder("tasks-attacker", "1")
        .on_elicitation(|_ctx, _params| async { Ok(tern_mcp::ask::accept([("region", "auto")])) })
        .extension(ClientTasks)
        .era(EraMode::Stateless)
        .connect(Arc::new(transport.build().unwrap()))
        .await
        .unwrap()
}

async fn started(client: &Client, tool: &str) -> TaskHandle {
    match client.start_tool_call(tool, json!({})).await.unwrap() {
        ToolCallStart::Task(t) => t,
        ToolCallStart::Done(r) => panic!("{tool} did not become a task: {r:?}"),
    }
}

fn finished(s: &TaskState) -> bool {
    !matches!(s, TaskState::Working | TaskState::InputRequired(_))
}

fn text(state: &TaskState) -> String {
    match state {
        TaskState::Completed(r) => r["content"][0]["text"].as_str().unwrap_or("").to_owned(),
        other => format!("{other:?}"),
    }
}

/// One JSON-RPC request as raw HTTP from a socket bound to `from`, with a bearer
/// token for `user` when given: the JSON-RPC answer (or `{"httpStatus": ...}` when the
/// body is not JSON). `Mcp-Name` names the tool or the task (a non-string id as JSON).
async fn rpc(
    from: IpAddr,
    addr: SocketAddr,
    user: Option<&str>,
    method: &str,
    mut params: Value,
) -> Value {
    params["_meta"] = tern_tests::wire::meta(
        json!({"extensions": {tern_mcp::types::ext_tasks::EXTENSION_ID: {}}}),
    );
    let name = match (&params["name"], &params["taskId"]) {
        (Value::String(n), _) | (_, Value::String(n)) => Some(n.clone()),
        (_, Value::Null) => None,
        (_, id) => Some(id.to_string()),
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut headers = mcp_headers(method, name.as_deref());
    http_support::set(&mut headers, "Accept", Some("application/json"));
    if let Some(u) = user {
        http_support::set(
            &mut headers,
            "Authorization",
            Some(&format!("Bearer user:{u}")),
        );
    }
    let answer = http_support::post_from(from, addr, &headers, &body).await;
    serde_json::from_str(&answer.body).unwrap_or_else(|_| json!({"httpStatus": answer.status}))
}

const HOME: [u8; 4] = [127, 0, 0, 1];

/// The JSON-RPC error code of a client-side failure.
fn code(e: &tern_mcp::Error) -> Option<i64> {
    match e {
        tern_mcp::Error::Rpc(e) => Some(e.code),
        tern_mcp::Error::Transport(t) => t.rpc_error().map(|r| r.code),
        _ => None,
    }
}

// ---- many instances, one lapsed task ----

/// A (stallable) runs a `work` task and stalls; B, C, D all read it at once, over and
/// over, well past the lease. Returns the fleet's reports and the final result text.
async fn many_read_a_lapsed_task(
    a: Tasks,
    stall: Stall,
    others: Vec<Tasks>,
    store: &dyn TaskStore,
) -> (Vec<Seen>, String) {
    let mut fleet = Fleet::new();
    let a_mcp = fleet.instance("A", a);
    let on_a = client(serve(&a_mcp).await, None).await;
    let names = ["B", "C", "D", "E"];
    let mut readers = Vec::new();
    let mut keep = vec![a_mcp];
    for (tasks, name) in others.into_iter().zip(names) {
        let mcp = fleet.instance(name, tasks);
        readers.push(client(serve(&mcp).await, None).await);
        keep.push(mcp);
    }
    let task = started(&on_a, "work").await;
    assert_eq!(fleet.next().await, Seen::Started("A"));
    stall.pause();
    // Every other instance reads the task 40 times, all at once, over ~1.5 leases.
    let id = task.id().to_owned();
    let reads = readers.iter().map(|c| {
        let handle = c.task(id.clone());
        async move {
            for _ in 0..40 {
                let state = handle.get().await.unwrap();
                assert!(matches!(state, TaskState::Working), "{state:?}");
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
        }
    });
    futures_util::future::join_all(reads).await;
    let mut seen = fleet.drain(Duration::from_millis(200)).await;
    let record = store.get(&id).await.unwrap().expect("the task is kept");
    assert_eq!(record.fence, 1, "taken over exactly once: {seen:?}");
    // A comes back: its renewal refused, its body cancelled; then the winner finishes.
    stall.resume();
    let a_stopped = fleet.next().await;
    seen.push(a_stopped);
    fleet.go.send_replace(true);
    let end = until(&readers[0].task(id.clone()), finished).await;
    seen.extend(fleet.drain(Duration::from_millis(300)).await);
    (seen, text(&end))
}

fn one_take_over(seen: &[Seen], result: &str) {
    let restarts: Vec<_> = seen
        .iter()
        .filter(|s| matches!(s, Seen::Started(_)))
        .collect();
    assert_eq!(
        restarts.len(),
        1,
        "exactly one instance ran it again: {seen:?}"
    );
    let Seen::Started(winner) = restarts[0] else {
        unreachable!()
    };
    assert_eq!(result, format!("by {winner}"), "{seen:?}");
    assert!(seen.contains(&Seen::Cancelled("A")), "A stopped: {seen:?}");
}

#[tokio::test]
async fn four_instances_reading_a_lapsed_task_at_once_take_it_over_once_memory() {
    let shared = MemoryTaskStore::default();
    let (a_store, stall) = stallable(shared.clone());
    let others = (0..4).map(|_| tasks_on(shared.clone())).collect();
    let (seen, result) = many_read_a_lapsed_task(tasks_on(a_store), stall, others, &shared).await;
    println!("four instances, one lapsed task (memory): {seen:?} -> {result}");
    one_take_over(&seen, &result);
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn four_instances_reading_a_lapsed_task_at_once_take_it_over_once_redis() {
    let redis = crate::redis_support::redis("attacker-many").await;
    let connect = || tern_mcp::fleet::RedisTaskStore::connect(&redis.url);
    let (a_store, stall) = stallable(connect().await.unwrap());
    let mut others = Vec::new();
    for _ in 0..4 {
        others.push(tasks_on(connect().await.unwrap()));
    }
    let probe = connect().await.unwrap();
    let (seen, result) = many_read_a_lapsed_task(tasks_on(a_store), stall, others, &probe).await;
    println!("four instances, one lapsed task (Redis): {seen:?} -> {result}");
    one_take_over(&seen, &result);
}

// ---- losing the lease twice; the owner cancelling during a take-over ----

#[tokio::test]
async fn an_instance_chain_loses_the_lease_twice_and_only_the_last_body_counts() {
    let shared = MemoryTaskStore::default();
    let (a_store, a_stall) = stallable(shared.clone());
    let (b_store, b_stall) = stallable(shared.clone());
    let mut fleet = Fleet::new();
    let (a, b, c) = (
        fleet.instance("A", tasks_on(a_store)),
        fleet.instance("B", tasks_on(b_store)),
        fleet.instance("C", tasks_on(shared.clone())),
    );
    let on_a = client(serve(&a).await, None).await;
    let on_b = client(serve(&b).await, None).await;
    let on_c = client(serve(&c).await, None).await;
    let task = started(&on_a, "work").await;
    assert_eq!(fleet.next().await, Seen::Started("A"));
    a_stall.pause();
    // B reads until it takes the task over.
    let b_task = on_b.task(task.id());
    let start = Instant::now();
    while shared.get(task.id()).await.unwrap().unwrap().fence < 1 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "B never took over"
        );
        b_task.get().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fleet.next().await, Seen::Started("B"));
    // A comes back: cancelled. Then B stalls and C takes over.
    a_stall.resume();
    assert_eq!(fleet.next().await, Seen::Cancelled("A"));
    b_stall.pause();
    let c_task = on_c.task(task.id());
    let start = Instant::now();
    while shared.get(task.id()).await.unwrap().unwrap().fence < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "C never took over"
        );
        c_task.get().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fleet.next().await, Seen::Started("C"));
    // Both stale instances are let go with their bodies released: neither result kept.
    fleet.go.send_replace(true);
    b_stall.resume();
    let end = until(&c_task, finished).await;
    assert_eq!(text(&end), "by C");
    assert!(
        b_stall
            .refused()
            .iter()
            .any(|r| r.contains("Completed") || r == "renew"),
        "B's late writes refused: {:?}",
        b_stall.refused()
    );
    assert_eq!(shared.get(task.id()).await.unwrap().unwrap().fence, 2);
    // And A, read again after all, changes nothing.
    assert_eq!(text(&task.get().await.unwrap()), "by C");
}

#[tokio::test]
async fn the_owner_cancelling_during_a_take_over_cancels_every_body_and_stays_cancelled() {
    let shared = MemoryTaskStore::default();
    let (a_store, stall) = stallable(shared.clone());
    let mut fleet = Fleet::new();
    let (a, b) = (
        fleet.instance("A", tasks_on(a_store)),
        fleet.instance("B", tasks_on(shared.clone())),
    );
    let on_a = client(serve(&a).await, None).await;
    let on_b = client(serve(&b).await, None).await;
    let task = started(&on_a, "work").await;
    assert_eq!(fleet.next().await, Seen::Started("A"));
    stall.pause();
    let b_task = on_b.task(task.id());
    let start = Instant::now();
    while shared.get(task.id()).await.unwrap().unwrap().fence < 1 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "B never took over"
        );
        b_task.get().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fleet.next().await, Seen::Started("B"));
    // The owner cancels (through B) while A is still stalled.
    b_task.cancel().await.unwrap();
    assert!(matches!(
        until(&b_task, finished).await,
        TaskState::Cancelled
    ));
    assert_eq!(fleet.next().await, Seen::Cancelled("B"));
    stall.resume();
    assert_eq!(fleet.next().await, Seen::Cancelled("A"));
    fleet.go.send_replace(true);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(matches!(b_task.get().await.unwrap(), TaskState::Cancelled));
    assert!(matches!(task.get().await.unwrap(), TaskState::Cancelled));
}

/// A restartable task asks; its instance A stalls; the owner answers through B, and B
/// takes the task over (A never took the answer, so the restart point is the call).
/// The answer is not lost: B's body runs from it, and the task ends with it.
#[tokio::test]
async fn an_answer_given_while_the_holder_stalls_reaches_the_body_that_takes_over() {
    let shared = MemoryTaskStore::default();
    let (a_store, stall) = stallable(shared.clone());
    let mut fleet = Fleet::new();
    let (a, b) = (
        fleet.instance("A", tasks_on(a_store)),
        fleet.instance("B", tasks_on(shared.clone())),
    );
    let on_a = client(serve(&a).await, None).await;
    let on_b = client(serve(&b).await, None).await;
    let task = started(&on_a, "rask").await;
    assert_eq!(fleet.next().await, Seen::Started("A"));
    let b_task = on_b.task(task.id());
    until(&b_task, |s| matches!(s, TaskState::InputRequired(_))).await;
    stall.pause();
    b_task.update(region("eu")).await.unwrap();
    // B reads on: past the lease it takes the task over and runs it to its end.
    let end = until(&b_task, finished).await;
    stall.resume();
    assert_eq!(
        text(&end),
        "region eu by B",
        "{:?}",
        fleet.drain(Duration::from_millis(100)).await
    );
}

/// A's body finishes while it is stalled, and A is resumed just as B reads the lapsed
/// task: whoever wins, one result, the winner's, and it never changes.
#[tokio::test]
async fn a_take_over_racing_the_originals_last_write_keeps_one_result() {
    for round in 0..3 {
        let shared = MemoryTaskStore::default();
        let (a_store, stall) = stallable(shared.clone());
        let mut fleet = Fleet::new();
        let (a, b) = (
            fleet.instance("A", tasks_on(a_store)),
            fleet.instance("B", tasks_on(shared.clone())),
        );
        let on_a = client(serve(&a).await, None).await;
        let on_b = client(serve(&b).await, None).await;
        let task = started(&on_a, "work").await;
        assert_eq!(fleet.next().await, Seen::Started("A"));
        stall.pause();
        fleet.go.send_replace(true);
        // Wait out the lease, then let A go and B read in the same instant.
        tokio::time::sleep(Duration::from_millis(350 + 20 * round)).await;
        let b_task = on_b.task(task.id());
        let (_, read) = tokio::join!(async { stall.resume() }, b_task.get());
        read.unwrap();
        let end = until(&b_task, finished).await;
        let seen = fleet.drain(Duration::from_millis(300)).await;
        let b_ran = seen.contains(&Seen::Started("B"));
        let want = if b_ran { "by B" } else { "by A" };
        assert_eq!(text(&end), want, "round {round}: {seen:?}");
        assert_eq!(text(&task.get().await.unwrap()), want);
        assert_eq!(text(&b_task.get().await.unwrap()), want);
    }
}

// ---- other callers ----

#[tokio::test]
async fn another_principal_cannot_get_answer_or_cancel_a_task_it_does_not_own() {
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(MemoryTaskStore::default()));
    let addr = serve_authenticated(&mcp).await;
    let ada = client(addr, Some("ada")).await;
    let task = started(&ada, "ask").await;
    until(&task, |s| matches!(s, TaskState::InputRequired(_))).await;
    let bob = client(addr, Some("bob")).await;
    let theirs = bob.task(task.id());
    let err = theirs.get().await.unwrap_err();
    assert_eq!(code(&err), Some(-32602), "{err}");
    let mut answers = InputResponses::new();
    answers
        .insert(
            "region",
            InputResponse::Elicit(tern_mcp::ask::accept([("region", "bob-land")])),
        )
        .unwrap();
    let err = theirs.update(answers).await.unwrap_err();
    assert_eq!(code(&err), Some(-32602), "{err}");
    let err = theirs.cancel().await.unwrap_err();
    assert_eq!(code(&err), Some(-32602), "{err}");
    // No token at all: refused at the door.
    let anonymous = rpc(
        HOME.into(),
        addr,
        None,
        "tasks/get",
        json!({"taskId": task.id()}),
    )
    .await;
    assert!(anonymous["result"].is_null(), "{anonymous}");
    // Ada's task is untouched: still asking her.
    assert!(matches!(
        task.get().await.unwrap(),
        TaskState::InputRequired(_)
    ));
}

#[tokio::test]
async fn anonymous_callers_on_other_addresses_are_told_apart_for_the_cap() {
    let fleet = Fleet::new();
    let mcp = fleet.instance(
        "A",
        tasks_on(MemoryTaskStore::default()).max_per_principal(3),
    );
    let addr = serve(&mcp).await;
    let (two, three): (IpAddr, IpAddr) = ([127, 0, 0, 2].into(), [127, 0, 0, 3].into());
    let call = |from| {
        rpc(
            from,
            addr,
            None,
            "tools/call",
            json!({"name": "hold", "arguments": {}}),
        )
    };
    for _ in 0..3 {
        let a = call(two).await;
        assert_eq!(a["result"]["resultType"], "task", "{a}");
    }
    let refused = call(two).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    for _ in 0..3 {
        let a = call(three).await;
        assert_eq!(a["result"]["resultType"], "task", "{a}");
    }
    assert_eq!(call(three).await["error"]["code"], -32000);
    // And 127.0.0.1 is a third caller.
    assert_eq!(call(HOME.into()).await["result"]["resultType"], "task");
}

/// The public description: an anonymous caller's task may be seen by any anonymous
/// caller that has its id (128 random bits). Pinned as documented: another address
/// reads it, and cancels it too.
#[tokio::test]
async fn an_anonymous_task_is_reached_by_its_id_from_another_address_as_documented() {
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(MemoryTaskStore::default()));
    let addr = serve(&mcp).await;
    let made = rpc(
        [127, 0, 0, 2].into(),
        addr,
        None,
        "tools/call",
        json!({"name": "hold", "arguments": {}}),
    )
    .await;
    let id = made["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| made["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("a task id in {made}"))
        .to_owned();
    let read = rpc(
        [127, 0, 0, 3].into(),
        addr,
        None,
        "tasks/get",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(read["result"]["status"], "working", "{read}");
    // And cancel it: the id is the only secret between anonymous callers.
    let cancel = rpc(
        [127, 0, 0, 3].into(),
        addr,
        None,
        "tasks/cancel",
        json!({"taskId": id}),
    )
    .await;
    assert!(cancel["error"].is_null(), "{cancel}");
    let read = rpc(
        [127, 0, 0, 2].into(),
        addr,
        None,
        "tasks/get",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(read["result"]["status"], "cancelled", "{read}");
}

#[tokio::test]
async fn a_caller_at_its_running_cap_gets_room_back_as_soon_as_its_tasks_end() {
    room_back_at_once(MemoryTaskStore::default()).await;
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn on_redis_a_caller_at_its_running_cap_gets_room_back_as_soon_as_its_tasks_end() {
    let redis = crate::redis_support::redis("attacker-room").await;
    room_back_at_once(redis.task_store().await).await;
}

/// A cap of four, four running: one cancelled gives one place back, all four ending
/// give four.
async fn room_back_at_once(store: impl TaskStore) {
    let mut fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(store).max_per_principal(4));
    let c = client(serve(&mcp).await, None).await;
    let mut running = Vec::new();
    for _ in 0..4 {
        running.push(started(&c, "work").await);
    }
    let err = c.start_tool_call("work", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("4 live tasks"), "{err}");
    // One cancelled: room for one at once.
    let first = running.remove(0);
    first.cancel().await.unwrap();
    until(&first, finished).await;
    running.push(started(&c, "work").await);
    assert!(c.start_tool_call("work", json!({})).await.is_err());
    // All finish: room for four at once.
    fleet.go.send_replace(true);
    for t in &running {
        until(t, finished).await;
    }
    fleet.drain(Duration::from_millis(50)).await;
    for _ in 0..4 {
        until(&started(&c, "work").await, finished).await;
    }
}

#[tokio::test]
async fn a_thousand_quick_tasks_keep_storage_bounded_and_the_newest() {
    a_thousand_quick_tasks(MemoryTaskStore::default()).await;
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn on_redis_a_thousand_quick_tasks_keep_storage_bounded_and_the_newest() {
    let redis = crate::redis_support::redis("attacker-thousand").await;
    a_thousand_quick_tasks(redis.task_store().await).await;
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn on_redis_a_task_takes_three_keys_at_most_and_its_owner_two() {
    let redis = crate::redis_support::redis("attacker-keys").await;
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(redis.task_store().await));
    let c = client(serve_authenticated(&mcp).await, Some("ada")).await;
    let held = started(&c, "hold").await;
    let done = started(&c, "quick").await;
    let ended = tokio::time::timeout(Duration::from_secs(10), done.wait()).await;
    assert!(ended.expect("quick ends").is_ok());
    // A task's record, and its questions and answers while it has any: three at most,
    // all in its hash slot.
    let mut tasks = 0;
    for task in [held.id(), done.id()] {
        let keys = redis.keys_with(task).await;
        assert!((1..=3).contains(&keys.len()), "a task's keys: {keys:?}");
        let tag = format!("{{{task}}}");
        assert!(keys.iter().all(|k| k.contains(&tag)), "{keys:?}");
        tasks += keys.len();
    }
    // Everything else is the owner's: its running and its finished tasks.
    let total: usize = redis.cli(&["DBSIZE"]).await.parse().unwrap();
    let all = redis.keys_with("").await;
    assert!(total > tasks && total <= tasks + 2, "{all:?}");
    held.cancel().await.unwrap();
}

/// One anonymous caller runs a thousand quick tasks one after another, each to its end.
async fn a_thousand_quick_tasks(store: impl TaskStore + Clone) {
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(store.clone()));
    let c = client(serve(&mcp).await, None).await;
    let mut ids = Vec::new();
    for _ in 0..1000 {
        let task = started(&c, "quick").await;
        let start = Instant::now();
        while !store
            .get(task.id())
            .await
            .unwrap()
            .is_some_and(|r| !matches!(r.status, Status::Working | Status::InputRequired))
        {
            assert!(start.elapsed() < Duration::from_secs(10));
            tokio::task::yield_now().await;
        }
        ids.push(task.id().to_owned());
    }
    let mut kept = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        if store.get(id).await.unwrap().is_some() {
            kept.push(n);
        }
    }
    println!("1,000 quick tasks: {} kept", kept.len());
    // Bounded, newest kept: the oldest 899 are gone, the newest hundred all kept (and
    // the one before them, the last end not yet counted against the cap).
    assert!(kept.len() <= 101, "{} kept", kept.len());
    assert!(kept.ends_with(&(900..1000).collect::<Vec<_>>()), "{kept:?}");
}

/// "each principal's [finished tasks] are kept up to the same number": a caller whose
/// cap is 3 ends three quick tasks, then runs three more to their end. It keeps six
/// until it next creates a task (the bound is enforced only then).
#[tokio::test]
#[ignore = "a known limit, documented at Tasks::max_per_principal: a caller's finished tasks are trimmed at its next start, so up to twice the cap are kept"]
async fn a_caller_keeps_no_more_finished_tasks_than_its_cap() {
    finished_kept_within_the_cap(MemoryTaskStore::default()).await;
}

#[tokio::test]
#[ignore = "a known limit, documented at Tasks::max_per_principal: a caller's finished tasks are trimmed at its next start (needs redis-server)"]
async fn on_redis_a_caller_keeps_no_more_finished_tasks_than_its_cap() {
    let redis = crate::redis_support::redis("attacker-finished").await;
    finished_kept_within_the_cap(redis.task_store().await).await;
}

async fn finished_kept_within_the_cap(store: impl TaskStore + Clone) {
    let mut fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(store.clone()).max_per_principal(3));
    let c = client(serve(&mcp).await, None).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let t = started(&c, "quick").await;
        until(&t, finished).await;
        ids.push(t.id().to_owned());
    }
    let mut running = Vec::new();
    for _ in 0..3 {
        running.push(started(&c, "work").await);
    }
    fleet.go.send_replace(true);
    for t in &running {
        until(t, finished).await;
        ids.push(t.id().to_owned());
    }
    fleet.drain(Duration::from_millis(50)).await;
    let mut kept = 0;
    for id in &ids {
        kept += usize::from(store.get(id).await.unwrap().is_some());
    }
    assert!(kept <= 3, "{kept} finished tasks kept for a cap of 3");
}

// ---- hostile ids and answers ----

/// Each id answered with a refusal a client can act on, before any lookup where the
/// id cannot be one (too long for the `Mcp-Name` header it must repeat: 431; a control
/// character: 400; not a string: -32020), `Unknown task` otherwise.
#[tokio::test]
async fn hostile_task_ids_are_refused_and_the_server_serves_on() {
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(MemoryTaskStore::default()));
    let addr = serve(&mcp).await;
    let cases = [
        (json!("A".repeat(200_000)), json!({"httpStatus": 431})),
        (json!("A".repeat(2_000)), json!(-32602)),
        (json!(""), json!(-32602)),
        (json!("../../etc/passwd"), json!(-32602)),
        (json!("AAAAAAAAAAAAAAAAAAAAAA"), json!(-32602)),
        (json!("\u{0}\u{202e}"), json!({"httpStatus": 400})),
        (json!(42), json!(-32020)),
        (json!(null), json!(-32020)),
        (json!({"id": "x"}), json!(-32020)),
    ];
    for (id, want) in cases {
        for method in ["tasks/get", "tasks/cancel"] {
            let a = rpc(HOME.into(), addr, None, method, json!({"taskId": id})).await;
            let got = if a["error"].is_null() {
                a.clone()
            } else {
                a["error"]["code"].clone()
            };
            assert_eq!(got, want, "{method} {:.40}: {a}", id.to_string());
        }
        let a = rpc(
            HOME.into(),
            addr,
            None,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {}}),
        )
        .await;
        assert!(a["result"].is_null(), "tasks/update: {a}");
    }
    let c = client(addr, None).await;
    let t = started(&c, "quick").await;
    assert_eq!(text(&until(&t, finished).await), "done");
}

fn region(value: &str) -> InputResponses {
    let mut a = InputResponses::new();
    a.insert(
        "region",
        InputResponse::Elicit(tern_mcp::ask::accept([("region", value)])),
    )
    .unwrap();
    a
}

#[tokio::test]
async fn answers_never_asked_twice_or_huge_change_nothing_they_should_not() {
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(MemoryTaskStore::default()));
    let addr = serve(&mcp).await;
    let c = client(addr, None).await;
    let task = started(&c, "ask").await;
    until(&task, |s| matches!(s, TaskState::InputRequired(_))).await;
    // A key never asked: ignored, the question still open.
    let mut stray = InputResponses::new();
    stray
        .insert(
            "nope",
            InputResponse::Elicit(tern_mcp::ask::accept([("region", "x")])),
        )
        .unwrap();
    let _ = task.update(stray).await;
    let TaskState::InputRequired(open) = task.get().await.unwrap() else {
        panic!("still asking")
    };
    assert!(open.0.contains_key("region"));
    // Many keys, a large body: refused or ignored, never the task's end.
    let mut many = serde_json::Map::new();
    for n in 0..5_000 {
        many.insert(
            format!("k{n}"),
            json!({"action": "accept", "content": {"region": "x".repeat(200)}}),
        );
    }
    let big = rpc(
        HOME.into(),
        addr,
        None,
        "tasks/update",
        json!({"taskId": task.id(), "inputResponses": many}),
    )
    .await;
    println!("5,000 answers: {:.200}", big.to_string());
    assert!(
        big.is_null() || !big["error"].is_null() || !big["result"].is_null(),
        "{big}"
    );
    assert!(matches!(
        task.get().await.unwrap(),
        TaskState::InputRequired(_)
    ));
    // The real answer, then a second one for the same key: the first wins.
    task.update(region("eu")).await.unwrap();
    let _ = task.update(region("us")).await;
    assert_eq!(text(&until(&task, finished).await), "region eu");
    assert_eq!(text(&task.get().await.unwrap()), "region eu");
}

#[tokio::test]
async fn a_body_that_panics_leaves_the_server_serving() {
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(MemoryTaskStore::default()));
    let c = client(serve(&mcp).await, None).await;
    let _boom = started(&c, "boom").await;
    let again = started(&c, "quick").await;
    assert_eq!(text(&until(&again, finished).await), "done");
}

/// A panicking body ends no task: seen `working` ten seconds on (its lease 300 ms,
/// still renewed), holding a place under its caller's running cap all that time.
#[tokio::test]
async fn a_body_that_panics_fails_its_task_and_gives_its_place_back() {
    let fleet = Fleet::new();
    let mcp = fleet.instance(
        "A",
        tasks_on(MemoryTaskStore::default()).max_per_principal(2),
    );
    let c = client(serve(&mcp).await, None).await;
    let (first, second) = (started(&c, "boom").await, started(&c, "boom").await);
    // Two panicked tasks do not hold the cap of two: once they read as ended, a third
    // is taken.
    let first_end = until(&first, finished).await;
    until(&second, finished).await;
    assert!(matches!(first_end, TaskState::Failed(_)), "{first_end:?}");
    let third = started(&c, "quick").await;
    assert_eq!(text(&until(&third, finished).await), "done");
}

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn redis_restarted_under_a_running_task_is_answered_and_served_again() {
    let redis = crate::redis_support::redis("attacker-restart").await;
    let store = redis.task_store().await;
    let fleet = Fleet::new();
    let mcp = fleet.instance("A", tasks_on(store));
    let c = client(serve(&mcp).await, None).await;
    let task = started(&c, "hold").await;
    drop(redis);
    // While Redis is away: an answer (an error), not a hang.
    let read = tokio::time::timeout(Duration::from_secs(10), task.get()).await;
    let read = read.expect("answered while Redis is away");
    assert!(read.is_err(), "{read:?}");
    // Redis back (empty: it kept nothing): the task is gone, new ones are served.
    let _redis = crate::redis_support::redis("attacker-restart").await;
    let start = Instant::now();
    let again = loop {
        match c.start_tool_call("quick", json!({})).await {
            Ok(ToolCallStart::Task(t)) => break t,
            other => {
                assert!(start.elapsed() < Duration::from_secs(10), "{other:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(text(&until(&again, finished).await), "done");
    let gone = task.get().await.unwrap_err();
    assert_eq!(code(&gone), Some(-32602), "{gone}");
}

/// A task's body that asks again every round is failed once it has asked as many
/// rounds as `Tasks::max_rounds` allows, each of them answered.
#[tokio::test]
async fn a_body_that_never_stops_asking_fails_at_its_round_cap() {
    let mcp = McpServer::new("asker", "1.0.0")
        .extension(Tasks::new(MemoryTaskStore::default()).max_rounds(2));
    mcp.tool("always")
        .extension(TaskSupport::Required)
        .run(|_: NoArgs, _ctx: ToolContext| async { ask_region() });
    let (client_end, server_end) = tern_mcp::transport::memory::pair();
    let server = mcp.server().unwrap();
    tokio::spawn(async move { server.serve(server_end).await });
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    let client = Client::builder("tasks-attacker", "1")
        .on_elicitation(move |_ctx, _params| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async { Ok(tern_mcp::ask::accept([("region", "auto")])) }
        })
        .extension(ClientTasks)
        .era(EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        client.call_tool("always", json!({})),
    )
    .await
    .expect("the task ends")
    .unwrap_err();
    assert!(err.to_string().contains("too many times"), "{err}");
    assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 2);
}
