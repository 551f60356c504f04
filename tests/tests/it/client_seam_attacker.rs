//! The client's extension seam attacked from outside, as a hostile or broken server
//! would and as a careless user would: results of an extension's type that are
//! malformed or given to a method that may not be answered so, tasks whose `tasks/get`
//! answers lie, loop or flood, result types that are huge, oddly written or claimed
//! twice, user extensions whose `follow` fails, a dropped call, and 32 calls becoming
//! tasks at once. Every server here is a scripted raw peer over the in-memory
//! transport, so it can do what no real SDK would; what it saw is the wire the client
//! wrote.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tern_mcp::client::Step;
use tern_mcp::client::{Client, ClientBuilder, ClientExtension, ClientLimits, Deferred, EraMode};
use tern_mcp::tasks::{ClientTasks, TaskHandle};
use tern_mcp::transport::memory::{self, MemoryTransport};
use tern_mcp::transport::{BoxFuture, MessageTransport};
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams, method,
};
use tern_mcp::{Error, InputError, ProtocolError, ask};
use tern_tests::text_of;
use tokio::sync::mpsc;

const TASKS: &str = tern_mcp::types::ext_tasks::EXTENSION_ID;
const AT: &str = "2026-12-01T00:00:00Z";
/// How long any one wait of a test on real time may take.
const PATIENCE: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------
// The hostile server.
// ---------------------------------------------------------------------------------

/// How the hostile server answers one request.
#[derive(Clone)]
enum Reply {
    /// `result`, as JSON.
    Result(Value),
    /// `error`, as JSON.
    Error(Value),
    /// `result` written exactly as this text.
    RawResult(String),
}

/// One message the client wrote, as text and as JSON, and when it arrived.
#[derive(Debug, Clone)]
struct Seen {
    text: String,
    message: Value,
    at: tokio::time::Instant,
}

impl Seen {
    fn method(&self) -> &str {
        self.message["method"].as_str().unwrap_or_default()
    }

    fn task_id(&self) -> &str {
        self.message["params"]["taskId"]
            .as_str()
            .unwrap_or_default()
    }

    /// The extensions this request declares under `_meta`.
    fn extensions(&self) -> &Value {
        &self.message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
    }
}

/// What the hostile server saw, in order.
struct Peer {
    seen: mpsc::UnboundedReceiver<Seen>,
}

impl Peer {
    /// The next message the client writes, within `patience`.
    async fn next_within(&mut self, patience: Duration) -> Seen {
        tokio::time::timeout(patience, self.seen.recv())
            .await
            .expect("the client wrote nothing in time")
            .expect("the server stopped")
    }

    /// The next request of `method`, skipping others, within `patience` each.
    async fn until_within(&mut self, method: &str, patience: Duration) -> Seen {
        loop {
            let seen = self.next_within(patience).await;
            if seen.method() == method {
                return seen;
            }
        }
    }

    async fn until(&mut self, method: &str) -> Seen {
        self.until_within(method, PATIENCE).await
    }

    /// Everything the client wrote before a `sentinel` tool call it is now made to
    /// send: the client's work on an earlier call, all of it (one connection, in order).
    async fn settle(&mut self, client: &Client) -> Vec<Seen> {
        let done = tokio::time::timeout(PATIENCE, client.call_tool("sentinel", json!({})))
            .await
            .expect("the sentinel call ends")
            .expect("the sentinel call is answered");
        assert_eq!(text_of(&done), "sentinel");
        let mut before = Vec::new();
        loop {
            let seen = self.next_within(PATIENCE).await;
            if seen.method() == "tools/call" && seen.message["params"]["name"] == "sentinel" {
                return before;
            }
            before.push(seen);
        }
    }

    /// The methods of [`settle`](Self::settle).
    async fn methods_before_sentinel(&mut self, client: &Client) -> Vec<String> {
        self.settle(client)
            .await
            .iter()
            .map(|s| s.method().to_owned())
            .collect()
    }
}

/// A server that answers each request with `answer` (a tool call named `sentinel`
/// always completes), and tells what it saw.
fn hostile(mut answer: impl FnMut(&Value) -> Reply + Send + 'static) -> (MemoryTransport, Peer) {
    let (client_end, server_end) = memory::pair();
    let (tx, seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let (sink, mut source) = server_end.split();
        while let Some(Ok(text)) = source.recv().await {
            let message: Value = serde_json::from_str(&text).expect("the client writes JSON");
            let _ = tx.send(Seen {
                text: text.clone(),
                message: message.clone(),
                at: tokio::time::Instant::now(),
            });
            let (Some(id), Some(_)) = (message.get("id"), message.get("method")) else {
                continue;
            };
            let reply =
                if message["method"] == "tools/call" && message["params"]["name"] == "sentinel" {
                    Reply::Result(done("sentinel"))
                } else {
                    answer(&message)
                };
            let response = match reply {
                Reply::Result(result) => {
                    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
                }
                Reply::Error(error) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string()
                }
                Reply::RawResult(raw) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{raw}}}"#),
            };
            if sink.send(response).await.is_err() {
                return;
            }
        }
    });
    (client_end, Peer { seen })
}

fn method_of(request: &Value) -> &str {
    request["method"].as_str().unwrap_or_default()
}

fn task_of(request: &Value) -> String {
    request["params"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A complete tool result saying `text`.
fn done(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}

/// The flat task a server makes of a call: polled every 20 ms.
fn created(id: impl Into<Value>) -> Value {
    json!({"resultType": "task", "taskId": id.into(), "status": "working",
        "createdAt": AT, "lastUpdatedAt": AT, "ttlMs": null, "pollIntervalMs": 20})
}

/// A `tasks/get` answer: the task `id` in `status`.
fn task(id: &str, status: &str) -> Value {
    json!({"resultType": "complete", "taskId": id, "status": status,
        "createdAt": AT, "lastUpdatedAt": AT, "ttlMs": null})
}

/// A `tasks/get` answer: the task `id` completed with the tool result `result`.
fn completed(id: &str, result: Value) -> Value {
    let mut t = task(id, "completed");
    t["result"] = result;
    t
}

/// An elicitation asking for a region.
fn ask_region() -> Value {
    json!({"method": "elicitation/create", "params": {"message": "Which region?",
        "requestedSchema": {"type": "object", "properties": {"region": {"type": "string"}}}}})
}

/// A `tasks/get` answer: the task `id` waiting for answers to `keys`.
fn asking<'a>(id: &str, keys: impl IntoIterator<Item = &'a str>) -> Value {
    let mut t = task(id, "input_required");
    t["inputRequests"] = keys
        .into_iter()
        .map(|k| (k.to_owned(), ask_region()))
        .collect();
    t
}

/// `{"resultType": "complete"}`: what `tasks/update` and `tasks/cancel` answer.
fn ok() -> Value {
    json!({"resultType": "complete"})
}

/// A 2026-07-28 client that answers elicitation (counted on `asked`).
fn builder(asked: &Arc<AtomicUsize>) -> ClientBuilder {
    let asked = Arc::clone(asked);
    Client::builder("attacker", "1")
        .era(EraMode::Stateless)
        .on_elicitation(move |_ctx, _params| {
            asked.fetch_add(1, Ordering::SeqCst);
            async { Ok(ask::accept([("region", "eu-west-1")])) }
        })
}

async fn tasks_client(transport: MemoryTransport) -> Client {
    builder(&Arc::default())
        .extension(ClientTasks)
        .connect(transport)
        .await
        .unwrap()
}

/// `call` within [`PATIENCE`].
async fn within<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, call)
        .await
        .expect("the call did not end in time")
}

fn is_decode(err: &Error, of: &str) -> bool {
    matches!(err, Error::Protocol(ProtocolError::Decode { method, .. }) if *method == of)
}

fn is_unknown(err: &Error, of: &str) -> bool {
    matches!(err, Error::Protocol(ProtocolError::UnknownResultType(t)) if t == of)
}

/// A server whose tool calls all become the task `id`, whose `tasks/get` answers
/// are `states` in turn (the last one forever), and which accepts updates and
/// cancellations.
fn task_server(id: &'static str, states: Vec<Value>) -> (MemoryTransport, Peer) {
    let mut states = states.into_iter().peekable();
    let mut last = Value::Null;
    hostile(move |request| match method_of(request) {
        "tools/call" => Reply::Result(created(id)),
        "tasks/get" => Reply::Result(match states.next() {
            Some(state) => {
                last = state.clone();
                state
            }
            None => last.clone(),
        }),
        "tasks/update" | "tasks/cancel" => Reply::Result(ok()),
        other => Reply::Error(json!({"code": -32601, "message": format!("no {other}")})),
    })
}

// ---------------------------------------------------------------------------------
// Malformed task results.
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn a_task_without_a_task_id_is_a_decoding_error_and_is_never_polled() {
    let (transport, mut peer) = hostile(|request| match method_of(request) {
        "tools/call" => Reply::Result(json!({"resultType": "task", "status": "working",
            "createdAt": AT, "lastUpdatedAt": AT, "ttlMs": null})),
        _ => Reply::Result(task("?", "working")),
    });
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(is_decode(&err, "tools/call"), "{err:?}");
    assert!(err.to_string().contains("taskId"), "{err}");
    assert_eq!(peer.methods_before_sentinel(&client).await, ["tools/call"]);
}

/// The error of a tool call the server answers with `first`, checked to have sent
/// nothing after the call (whatever the server would answer to a poll).
async fn refused_with_only_the_call_sent(first: Reply) -> Error {
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => first.clone(),
        _ => Reply::Result(completed("leaked", done("leaked"))),
    });
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert_eq!(peer.methods_before_sentinel(&client).await, ["tools/call"]);
    err
}

#[tokio::test]
async fn a_task_id_that_is_not_a_string_is_a_decoding_error_and_is_never_polled() {
    for id in [json!(42), json!(null), json!({"id": "t"}), json!(["t"])] {
        let err = refused_with_only_the_call_sent(Reply::Result(created(id.clone()))).await;
        assert!(is_decode(&err, "tools/call"), "{err:?}");
    }
}

#[tokio::test]
async fn a_one_mebibyte_task_id_is_followed_and_echoed_intact() {
    let big: String = "t".repeat(1 << 20);
    let id = big.clone();
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => Reply::Result(created(id.clone())),
        "tasks/get" => Reply::Result(completed(&task_of(request), done("big"))),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let result = within(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(text_of(&result), "big");
    let seen = peer.settle(&client).await;
    let methods: Vec<_> = seen.iter().map(Seen::method).collect();
    assert_eq!(methods, ["tools/call", "tasks/get"]);
    assert_eq!(seen[1].task_id(), big, "the id goes back as it came");
}

/// The gap between the first two `tasks/get` of a task created with `poll`.
async fn first_poll_gap(poll: Value) -> Duration {
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => {
            let mut t = created("p");
            t["pollIntervalMs"] = poll.clone();
            Reply::Result(t)
        }
        "tasks/get" => Reply::Result(task("p", "working")),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let call = tokio::spawn(async move { client.call_tool("t", json!({})).await });
    // Virtual time: a 30 s poll passes at once, and nothing here sleeps for real.
    let patience = Duration::from_secs(120);
    let first = peer.until_within("tasks/get", patience).await;
    let second = peer.until_within("tasks/get", patience).await;
    call.abort();
    second.at - first.at
}

#[tokio::test(start_paused = true)]
async fn a_poll_interval_is_clamped_to_20_ms_and_30_s_and_a_negative_one_counts_as_none() {
    for (poll, expected) in [
        (json!(0), Duration::from_millis(20)),
        (json!(1), Duration::from_millis(20)),
        (json!(250), Duration::from_millis(250)),
        (json!(i64::MAX), Duration::from_secs(30)),
        (json!(9_007_199_254_740_991_i64), Duration::from_secs(30)),
        // Negative: not a duration at all, so the default second.
        (json!(-5), Duration::from_secs(1)),
        (json!(i64::MIN), Duration::from_secs(1)),
        // Absent: the default second.
        (json!(null), Duration::from_secs(1)),
    ] {
        let gap = first_poll_gap(poll.clone()).await;
        assert!(
            gap >= expected && gap < expected + Duration::from_millis(5),
            "pollIntervalMs {poll}: polled after {gap:?}, not {expected:?}"
        );
    }
}

#[tokio::test]
async fn a_poll_interval_that_is_a_float_a_string_or_too_big_is_a_decoding_error() {
    for poll in [
        json!(1.5),
        json!("100"),
        json!(true),
        json!(1e300),
        json!(18_446_744_073_709_551_615_u64),
    ] {
        let mut t = created("p");
        t["pollIntervalMs"] = poll;
        let err = refused_with_only_the_call_sent(Reply::Result(t)).await;
        assert!(is_decode(&err, "tools/call"), "{err:?}");
    }
}

#[tokio::test]
async fn members_a_task_does_not_have_are_ignored_and_the_task_is_followed() {
    let asked = Arc::new(AtomicUsize::new(0));
    let (transport, mut peer) = hostile(|request| match method_of(request) {
        "tools/call" => {
            let mut t = created("x");
            // Members that mean something elsewhere: content, questions, a nested task.
            t["content"] = json!([{"type": "text", "text": "not yet"}]);
            t["inputRequests"] = json!({"region": ask_region()});
            t["requestState"] = json!("s");
            t["task"] = json!({"taskId": "nested"});
            t["x-vendor"] = json!({"deep": [1, 2, {"three": null}]});
            Reply::Result(t)
        }
        "tasks/get" => Reply::Result(completed("x", done("followed"))),
        _ => Reply::Result(ok()),
    });
    let client = builder(&asked)
        .extension(ClientTasks)
        .connect(transport)
        .await
        .unwrap();
    let result = within(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(text_of(&result), "followed");
    let seen = peer.settle(&client).await;
    let polled: Vec<_> = seen.iter().map(|s| (s.method(), s.task_id())).collect();
    assert_eq!(polled, [("tools/call", ""), ("tasks/get", "x")]);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "no question was asked");
}

/// A client speaking tasks, of a server that answers `method` with a task.
async fn answered_with_a_task_to(method: &'static str) -> (Client, Peer) {
    let (transport, peer) = hostile(move |request| match method_of(request) {
        m if m == method => Reply::Result(created("x")),
        _ => Reply::Result(completed("x", done("leaked"))),
    });
    (tasks_client(transport).await, peer)
}

/// Both loops refused `err` (the automatic and the manual), and nothing but the two
/// `method` requests went out.
async fn refused_twice(errs: [Error; 2], peer: &mut Peer, client: &Client, method: &str) {
    for err in errs {
        assert!(is_unknown(&err, "task"), "{err:?}");
    }
    assert_eq!(peer.methods_before_sentinel(client).await, [method, method]);
}

#[tokio::test]
async fn a_task_answer_to_prompts_get_is_refused_and_never_polled() {
    let (client, mut peer) = answered_with_a_task_to("prompts/get").await;
    let auto = within(client.get_prompt("p", None)).await.unwrap_err();
    // The manual loop refuses it too: no Deferred for a method that may not become one.
    let params = GetPromptRequestParams::new("p");
    let manual = within(client.start::<method::GetPrompt>(params))
        .await
        .unwrap_err();
    refused_twice([auto, manual], &mut peer, &client, "prompts/get").await;
}

#[tokio::test]
async fn a_task_answer_to_resources_read_is_refused_and_never_polled() {
    let (client, mut peer) = answered_with_a_task_to("resources/read").await;
    let auto = within(client.read_resource("file:///x")).await.unwrap_err();
    let params = ReadResourceRequestParams::new("file:///x");
    let manual = within(client.start::<method::ReadResource>(params))
        .await
        .unwrap_err();
    refused_twice([auto, manual], &mut peer, &client, "resources/read").await;
}

#[tokio::test]
async fn the_old_nested_task_shape_is_never_taken_for_a_result_or_polled() {
    let nested = json!({"taskId": "old", "status": "working", "createdAt": AT,
        "lastUpdatedAt": AT, "ttl": 60000, "pollInterval": 20});
    // As a 2025-11-25 server wrote it (no resultType), and with the new resultType.
    for result in [
        json!({"task": nested.clone()}),
        json!({"resultType": "task", "task": nested}),
    ] {
        let err = refused_with_only_the_call_sent(Reply::Result(result.clone())).await;
        assert!(is_decode(&err, "tools/call"), "{err:?}");
    }
}

#[tokio::test]
async fn a_result_naming_two_result_types_is_never_followed() {
    // The first member says complete, the last says task (a parsed object keeps the
    // last): either reading must refuse a complete result with no content, and nothing
    // is polled on the strength of the second.
    let raw = format!(
        r#"{{"resultType":"complete","taskId":"dup","status":"working","createdAt":"{AT}","lastUpdatedAt":"{AT}","ttlMs":null,"resultType":"task"}}"#
    );
    let err = refused_with_only_the_call_sent(Reply::RawResult(raw.clone())).await;
    assert!(is_decode(&err, "tools/call"), "{err:?}");
}

// ---------------------------------------------------------------------------------
// Hostile `tasks/get` answers.
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn a_get_answer_about_another_task_is_refused_not_taken_for_this_ones() {
    let (transport, _peer) = task_server(
        "mine",
        vec![completed("someone-elses", done("someone else's result"))],
    );
    let client = tasks_client(transport).await;
    let outcome = within(client.call_tool("t", json!({}))).await;
    assert!(
        matches!(outcome, Err(Error::Protocol(_))),
        "another task's result was returned as this call's: {outcome:?}"
    );
}

#[tokio::test]
async fn an_unknown_status_is_a_decoding_error_of_tasks_get_that_names_it() {
    let (transport, _peer) = task_server("u", vec![task("u", "paused")]);
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(is_decode(&err, "tasks/get"), "{err:?}");
    assert!(err.to_string().contains("paused"), "{err}");
}

#[tokio::test]
async fn input_required_repeating_answered_keys_is_answered_once_then_only_polled() {
    let asked = Arc::new(AtomicUsize::new(0));
    let (transport, mut peer) = task_server("same", vec![asking("same", ["region"])]);
    let client = builder(&asked)
        .extension(ClientTasks)
        .connect(transport)
        .await
        .unwrap();
    let call = tokio::spawn(async move { client.call_tool("t", json!({})).await });
    // Thirty polls of the same question: one answer, one update, then polling only.
    let mut updates = Vec::new();
    let mut gets = 0;
    while gets < 30 {
        let seen = peer.next_within(PATIENCE).await;
        match seen.method() {
            "tasks/get" => gets += 1,
            "tasks/update" => updates.push(seen),
            other => assert_eq!(other, "tools/call"),
        }
    }
    assert_eq!(updates.len(), 1, "the answered key was answered again");
    assert_eq!(
        updates[0].message["params"]["inputResponses"]["region"]["action"],
        "accept"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // And the call it became can still be given up: the task is cancelled.
    call.abort();
    let cancel = peer.until("tasks/cancel").await;
    assert_eq!(cancel.task_id(), "same");
}

#[tokio::test]
async fn input_required_with_new_keys_every_poll_fails_at_the_round_cap() {
    for (limits, max) in [
        (ClientLimits::default(), 10),
        (
            tern_tests::tuned(|l: &mut ClientLimits| l.max_rounds = 3),
            3,
        ),
    ] {
        let asked = Arc::new(AtomicUsize::new(0));
        let mut n = 0;
        let (transport, mut peer) = hostile(move |request| match method_of(request) {
            "tools/call" => Reply::Result(created("fresh")),
            "tasks/get" => {
                n += 1;
                Reply::Result(asking("fresh", [format!("k{n}").as_str()]))
            }
            _ => Reply::Result(ok()),
        });
        let client = builder(&asked)
            .limits(limits)
            .extension(ClientTasks)
            .connect(transport)
            .await
            .unwrap();
        let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
        assert!(
            matches!(err, Error::Input(InputError::RoundsExceeded { max_rounds }) if max_rounds == max),
            "{err:?}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), max);
        let methods = peer.methods_before_sentinel(&client).await;
        let updates = methods.iter().filter(|m| *m == "tasks/update").count();
        let gets = methods.iter().filter(|m| *m == "tasks/get").count();
        assert_eq!((updates, gets), (max, max + 1), "{methods:?}");
    }
}

#[tokio::test]
async fn a_task_the_client_gives_up_on_at_the_round_cap_is_cancelled() {
    let mut n = 0;
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => Reply::Result(created("abandoned")),
        "tasks/get" => {
            n += 1;
            Reply::Result(asking("abandoned", [format!("k{n}").as_str()]))
        }
        _ => Reply::Result(ok()),
    });
    let client = builder(&Arc::default())
        .limits(tern_tests::tuned(|l: &mut ClientLimits| l.max_rounds = 1))
        .extension(ClientTasks)
        .connect(transport)
        .await
        .unwrap();
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Input(InputError::RoundsExceeded { max_rounds: 1 })
        ),
        "{err:?}"
    );
    // Nobody holds the task's id: only the client can stop it.
    let cancel = peer
        .until_within("tasks/cancel", Duration::from_secs(2))
        .await;
    assert_eq!(cancel.task_id(), "abandoned");
}

#[tokio::test]
async fn thousands_of_keys_in_one_input_requests_fail_before_any_callback_or_update() {
    let keys: Vec<String> = (0..5000).map(|i| format!("k{i}")).collect();
    let asked = Arc::new(AtomicUsize::new(0));
    let (transport, mut peer) = task_server(
        "flood",
        vec![asking("flood", keys.iter().map(String::as_str))],
    );
    let client = builder(&asked)
        .extension(ClientTasks)
        .connect(transport)
        .await
        .unwrap();
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Input(InputError::TooManyRequests {
                asked: 5000,
                max: 64
            })
        ),
        "{err:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    // Polled once, never updated (a cancellation of the refused task may follow).
    let mut methods = peer.methods_before_sentinel(&client).await;
    methods.retain(|m| m != "tasks/cancel");
    assert_eq!(methods, ["tools/call", "tasks/get"]);
}

#[tokio::test]
async fn a_completed_result_of_the_wrong_shape_is_a_decoding_error() {
    // A result that is no tool result: the followed result refused as tools/call's.
    for result in [
        json!({"resultType": "complete", "content": "not a list"}),
        json!({"resultType": "complete"}),
        json!({"resultType": "complete", "content": [{"type": "hologram"}]}),
    ] {
        let (transport, _peer) = task_server("w", vec![completed("w", result.clone())]);
        let client = tasks_client(transport).await;
        let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
        assert!(is_decode(&err, "tools/call"), "{result}: {err:?}");
        // By hand, the same result is refused as the task's.
        let err = within(client.task("w").wait()).await.unwrap_err();
        assert!(is_decode(&err, "tasks/get"), "{result}: {err:?}");
    }
    // A `result` that is no object at all: tasks/get's own answer is malformed.
    for result in [json!("text"), json!([1]), json!(null)] {
        let (transport, _peer) = task_server("w", vec![completed("w", result.clone())]);
        let client = tasks_client(transport).await;
        let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
        assert!(is_decode(&err, "tasks/get"), "{result}: {err:?}");
    }
    // No result at all.
    let (transport, _peer) = task_server("w", vec![task("w", "completed")]);
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(is_decode(&err, "tasks/get"), "{err:?}");
}

#[tokio::test]
async fn a_completed_result_that_says_it_is_not_complete_is_refused() {
    for inner in ["input_required", "task", "teleport"] {
        let result = json!({"resultType": inner, "content": [],
            "inputRequests": {"region": ask_region()}, "taskId": "again"});
        let (transport, _peer) = task_server("n", vec![completed("n", result)]);
        let client = tasks_client(transport).await;
        let outcome = within(client.call_tool("t", json!({}))).await;
        assert!(
            matches!(&outcome, Err(Error::Protocol(ProtocolError::UnknownResultType(t))) if t == inner),
            "a task's result of type {inner} came back as a complete one: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_completed_result_without_result_type_is_read_as_complete() {
    let result = json!({"content": [{"type": "text", "text": "older"}]});
    let (transport, _peer) = task_server("o", vec![completed("o", result)]);
    let client = tasks_client(transport).await;
    let outcome = within(client.call_tool("t", json!({}))).await;
    assert_eq!(
        outcome.map(|r| text_of(&r)).map_err(|e| e.to_string()),
        Ok("older".to_owned())
    );
}

#[tokio::test]
async fn a_failed_task_is_its_json_rpc_error() {
    let mut failed = task("f", "failed");
    failed["error"] = json!({"code": -32050, "message": "the quota ran out", "data": {"q": 1}});
    let (transport, _peer) = task_server("f", vec![task("f", "working"), failed]);
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(
        (rpc.code, rpc.message.as_str(), rpc.data.clone()),
        (-32050, "the quota ran out", Some(json!({"q": 1})))
    );
}

#[tokio::test]
async fn an_error_answer_to_tasks_get_fails_the_call_with_that_error() {
    let (transport, _peer) = hostile(|request| match method_of(request) {
        "tools/call" => Reply::Result(created("e")),
        "tasks/get" => Reply::Error(json!({"code": -32603, "message": "store unavailable"})),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(
        (rpc.code, rpc.message.as_str()),
        (-32603, "store unavailable")
    );
}

#[tokio::test]
async fn an_error_answer_to_tasks_update_fails_the_call_with_that_error() {
    let (transport, _peer) = hostile(|request| match method_of(request) {
        "tools/call" => Reply::Result(created("u")),
        "tasks/get" => Reply::Result(asking("u", ["region"])),
        "tasks/update" => Reply::Error(json!({"code": -32602, "message": "stale answer"})),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!((rpc.code, rpc.message.as_str()), (-32602, "stale answer"));
}

#[tokio::test]
async fn a_cancelled_task_is_task_cancelled_with_its_id() {
    let (transport, _peer) = task_server("c", vec![task("c", "cancelled")]);
    let client = tasks_client(transport).await;
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(&err, Error::TaskCancelled(id) if id == "c"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_status_that_flips_back_from_completed_is_never_read() {
    let (transport, mut peer) = task_server(
        "flip",
        vec![
            task("flip", "working"),
            completed("flip", done("first end")),
            task("flip", "working"),
            completed("flip", done("second end")),
        ],
    );
    let client = tasks_client(transport).await;
    let result = within(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(text_of(&result), "first end");
    assert_eq!(
        peer.methods_before_sentinel(&client).await,
        ["tools/call", "tasks/get", "tasks/get"],
        "nothing is asked after the end, nor cancelled"
    );
}

// ---------------------------------------------------------------------------------
// Result types: huge, oddly written, claimed twice.
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn a_huge_result_type_is_refused_by_its_name_and_never_followed() {
    let huge = "task".repeat(1 << 18);
    let mut t = created("h");
    t["resultType"] = json!(huge.clone());
    let err = refused_with_only_the_call_sent(Reply::Result(t)).await;
    assert!(is_unknown(&err, &huge), "not refused by its name");
}

#[tokio::test]
async fn a_result_type_that_only_looks_like_task_is_refused_as_written() {
    for odd in [
        "TASK",
        " task",
        "task ",
        "task\u{0}",
        "ta\"sk",
        "t\\ask",
        "task\n",
        "tásk",
        "",
    ] {
        let mut t = created("o");
        t["resultType"] = json!(odd);
        let err = refused_with_only_the_call_sent(Reply::Result(t)).await;
        assert!(is_unknown(&err, odd), "{odd:?}: {err:?}");
    }
}

#[tokio::test]
async fn task_spelled_with_json_escapes_is_the_same_result_type_and_is_followed() {
    let raw = format!(
        r#"{{"resultType":"t\u0061sk","taskId":"\u0065sc","status":"working","createdAt":"{AT}","lastUpdatedAt":"{AT}","ttlMs":null,"pollIntervalMs":20}}"#
    );
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => Reply::RawResult(raw.clone()),
        "tasks/get" => Reply::Result(completed(&task_of(request), done("escaped"))),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let result = within(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(text_of(&result), "escaped");
    let seen = peer.settle(&client).await;
    assert_eq!(
        seen[1].task_id(),
        "esc",
        "the id is read, not copied as written"
    );
}

/// An extension that claims `result_type` and keeps the default `follow`.
struct Claims {
    id: &'static str,
    result_type: Option<&'static str>,
    settings: Map<String, Value>,
}

impl Claims {
    fn new(id: &'static str, result_type: Option<&'static str>) -> Self {
        Self {
            id,
            result_type,
            settings: Map::new(),
        }
    }
}

impl ClientExtension for Claims {
    fn id(&self) -> &'static str {
        self.id
    }

    fn settings(&self) -> Map<String, Value> {
        self.settings.clone()
    }

    fn result_type(&self) -> Option<&'static str> {
        self.result_type
    }
}

type Follow = Arc<dyn Fn(Deferred) -> BoxFuture<'static, tern_mcp::Result<Value>> + Send + Sync>;

/// An extension that claims `result_type` and follows it with `follow`.
struct Follows {
    id: &'static str,
    result_type: &'static str,
    follow: Follow,
}

impl Follows {
    fn new(
        id: &'static str,
        result_type: &'static str,
        follow: impl Fn(Deferred) -> BoxFuture<'static, tern_mcp::Result<Value>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            id,
            result_type,
            follow: Arc::new(follow),
        }
    }
}

impl ClientExtension for Follows {
    fn id(&self) -> &'static str {
        self.id
    }

    fn result_type(&self) -> Option<&'static str> {
        Some(self.result_type)
    }

    fn follow(&self, deferred: Deferred) -> BoxFuture<'static, tern_mcp::Result<Value>> {
        (self.follow)(deferred)
    }
}

/// A server whose tool calls are answered `{"resultType": <result_type>, "ticket": 7}`.
fn later_server(result_type: &'static str) -> (MemoryTransport, Peer) {
    hostile(move |request| match method_of(request) {
        "tools/call" => Reply::Result(json!({"resultType": result_type, "ticket": 7})),
        _ => Reply::Error(json!({"code": -32601, "message": "no"})),
    })
}

#[tokio::test]
async fn the_default_follow_names_the_result_type_as_the_server_meant_it() {
    // A claimed type whose follow was never written: refused by its name, read as JSON
    // reads it (the server may escape any character).
    for (claimed, written) in [("café", r"caf\u00e9"), ("a\"b", r#"a\"b"#)] {
        let raw = format!(r#"{{"resultType":"{written}","ticket":7}}"#);
        let (transport, _peer) = hostile(move |request| match method_of(request) {
            "tools/call" => Reply::RawResult(raw.clone()),
            _ => Reply::Error(json!({"code": -32601, "message": "no"})),
        });
        let client = builder(&Arc::default())
            .extension(Claims::new("com.example/lazy", Some(claimed)))
            .connect(transport)
            .await
            .unwrap();
        let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
        assert!(is_unknown(&err, claimed), "{claimed:?}: {err:?}");
    }
}

#[tokio::test]
async fn an_extension_that_claims_a_type_but_cannot_follow_it_refuses_it_by_name() {
    let (transport, _peer) = later_server("com.example/later");
    let client = builder(&Arc::default())
        .extension(Claims::new("com.example/lazy", Some("com.example/later")))
        .connect(transport)
        .await
        .unwrap();
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(is_unknown(&err, "com.example/later"), "{err:?}");
    // By hand: handed over, then refused the same way when followed.
    let step = within(client.start::<method::CallTool>(CallToolRequestParams::new("t")))
        .await
        .unwrap();
    let Step::Deferred(deferred) = step else {
        panic!("not handed over: {step:?}")
    };
    assert_eq!(deferred.extension(), "com.example/lazy");
    let err = within(deferred.follow()).await.unwrap_err();
    assert!(is_unknown(&err, "com.example/later"), "{err:?}");
}

/// A follow that names its extension in the result's text.
fn naming(name: &'static str) -> impl Fn(Deferred) -> BoxFuture<'static, tern_mcp::Result<Value>> {
    move |deferred: Deferred| -> BoxFuture<'static, tern_mcp::Result<Value>> {
        let text = format!("{name} followed {}", deferred.extension());
        Box::pin(async move { Ok(done(&text)) })
    }
}

#[tokio::test]
async fn a_result_type_claimed_by_two_extensions_is_followed_by_the_first_registered() {
    for (first, second) in [
        ("com.example/a", "com.example/b"),
        ("com.example/b", "com.example/a"),
    ] {
        let (transport, _peer) = later_server("shared");
        let client = builder(&Arc::default())
            .extension(Follows::new(first, "shared", naming(first)))
            .extension(Follows::new(second, "shared", naming(second)))
            .connect(transport)
            .await
            .unwrap();
        let result = within(client.call_tool("t", json!({}))).await.unwrap();
        assert_eq!(text_of(&result), format!("{first} followed {first}"));
        let step = within(client.start::<method::CallTool>(CallToolRequestParams::new("t")))
            .await
            .unwrap();
        let Step::Deferred(deferred) = step else {
            panic!("not handed over: {step:?}")
        };
        assert_eq!(deferred.extension(), first);
    }
}

#[tokio::test]
async fn an_extension_registered_twice_is_declared_once_with_the_last_settings() {
    let (transport, mut peer) = later_server("none");
    let mut one = Claims::new("com.example/beacon", None);
    one.settings.insert("v".into(), json!(1));
    let mut two = Claims::new("com.example/beacon", None);
    two.settings.insert("v".into(), json!(2));
    let client = builder(&Arc::default())
        .extension(one)
        .extension(ClientTasks)
        .extension(two)
        .connect(transport)
        .await
        .unwrap();
    let _ = within(client.call_tool("t", json!({}))).await;
    let seen = peer.until("tools/call").await;
    assert_eq!(
        seen.extensions(),
        &json!({"com.example/beacon": {"v": 2}, TASKS: {}})
    );
    // Once in the text, not twice with a parser keeping the last.
    assert_eq!(
        seen.text.matches("com.example/beacon").count(),
        1,
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn an_extension_registered_under_the_tasks_id_replaces_client_tasks() {
    let (transport, mut peer) = hostile(|request| match method_of(request) {
        "tools/call" => Reply::Result(created("gone")),
        _ => Reply::Result(completed("gone", done("leaked"))),
    });
    let client = builder(&Arc::default())
        .extension(ClientTasks)
        .extension(Claims::new(TASKS, None))
        .connect(transport)
        .await
        .unwrap();
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(is_unknown(&err, "task"), "{err:?}");
    assert_eq!(peer.methods_before_sentinel(&client).await, ["tools/call"]);
}

// ---------------------------------------------------------------------------------
// A careless user's extension, and the manual loop.
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn a_follow_that_fails_surfaces_its_own_error() {
    let (transport, _peer) = later_server("com.example/later");
    let client = builder(&Arc::default())
        .extension(Follows::new("com.example/x", "com.example/later", |_d| {
            Box::pin(async { Err(Error::TaskCancelled("the follower's own".into())) })
        }))
        .connect(transport)
        .await
        .unwrap();
    let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(&err, Error::TaskCancelled(id) if id == "the follower's own"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_follow_that_returns_json_of_the_wrong_shape_is_a_decoding_error_of_tools_call() {
    for wrong in [
        json!(null),
        json!([1, 2]),
        json!("done"),
        json!({"resultType": "complete", "content": 5}),
        json!({"content": [{"type": "text"}]}),
    ] {
        let (transport, _peer) = later_server("com.example/later");
        let value = wrong.clone();
        let client = builder(&Arc::default())
            .extension(Follows::new(
                "com.example/x",
                "com.example/later",
                move |_d| {
                    let value = value.clone();
                    Box::pin(async move { Ok(value) })
                },
            ))
            .connect(transport)
            .await
            .unwrap();
        let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
        assert!(is_decode(&err, "tools/call"), "{wrong}: {err:?}");
    }
}

#[tokio::test]
async fn a_follow_that_returns_input_required_is_not_taken_for_a_complete_result() {
    let (transport, _peer) = later_server("com.example/later");
    let client = builder(&Arc::default())
        .extension(Follows::new("com.example/x", "com.example/later", |_d| {
            Box::pin(async {
                Ok(json!({"resultType": "input_required", "content": [],
                    "inputRequests": {"region": ask_region()}}))
            })
        }))
        .connect(transport)
        .await
        .unwrap();
    let outcome = within(client.call_tool("t", json!({}))).await;
    assert!(
        matches!(&outcome, Err(Error::Protocol(ProtocolError::UnknownResultType(t))) if t == "input_required"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn deferred_follow_on_a_manual_loop_task_polls_it_to_its_result() {
    // Written with spaces the server's way: `result()` is the text as it came.
    let raw = format!(
        r#"{{ "resultType" : "task", "taskId" : "manual", "status" : "working", "createdAt" : "{AT}", "lastUpdatedAt" : "{AT}", "ttlMs" : null, "pollIntervalMs" : 20 }}"#
    );
    let written = raw.clone();
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => Reply::RawResult(written.clone()),
        "tasks/get" => Reply::Result(completed("manual", done("by hand"))),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let step = within(client.start::<method::CallTool>(CallToolRequestParams::new("t")))
        .await
        .unwrap();
    let Step::Deferred(deferred) = step else {
        panic!("not handed over: {step:?}")
    };
    assert_eq!(
        (deferred.method(), deferred.extension(), deferred.result()),
        ("tools/call", TASKS, raw.as_str())
    );
    assert_eq!(
        peer.methods_before_sentinel(&client).await,
        ["tools/call"],
        "the manual loop does not follow it"
    );
    let followed = within(deferred.follow()).await.unwrap();
    assert_eq!(followed["content"][0]["text"], "by hand");
    let polls = peer.settle(&client).await;
    let polled: Vec<_> = polls.iter().map(|s| (s.method(), s.task_id())).collect();
    assert_eq!(polled, [("tasks/get", "manual")]);
}

#[tokio::test]
async fn task_handle_of_refuses_a_deferred_of_another_extension() {
    let (transport, _peer) = later_server("com.example/later");
    let client = builder(&Arc::default())
        .extension(ClientTasks)
        .extension(Follows::new(
            "com.example/x",
            "com.example/later",
            naming("x"),
        ))
        .connect(transport)
        .await
        .unwrap();
    let step = within(client.start::<method::CallTool>(CallToolRequestParams::new("t")))
        .await
        .unwrap();
    let Step::Deferred(deferred) = step else {
        panic!("not handed over: {step:?}")
    };
    let err = TaskHandle::of(deferred).unwrap_err();
    assert!(is_unknown(&err, "com.example/later"), "{err:?}");
}

#[tokio::test]
async fn a_task_made_on_the_retry_of_a_resumed_call_is_handed_over_and_reachable() {
    let (transport, mut peer) = hostile(|request| match method_of(request) {
        "tools/call" if request["params"].get("inputResponses").is_none() => {
            Reply::Result(json!({"resultType": "input_required", "requestState": "r1",
                "inputRequests": {"region": ask_region()}}))
        }
        "tools/call" => Reply::Result(created("resumed")),
        "tasks/get" => Reply::Result(completed("resumed", done("after resume"))),
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let step = within(client.start::<method::CallTool>(CallToolRequestParams::new("t")))
        .await
        .unwrap();
    let Step::NeedsInput(pending) = step else {
        panic!("not asked: {step:?}")
    };
    let answers = within(client.fulfil(Some(&pending.input_requests)))
        .await
        .unwrap();
    let step = within(client.resume::<method::CallTool>(pending, answers))
        .await
        .unwrap();
    let Step::Deferred(deferred) = step else {
        panic!("not handed over: {step:?}")
    };
    let handle = TaskHandle::of(deferred).unwrap();
    assert_eq!(handle.id(), "resumed");
    let result = within(handle.wait()).await.unwrap();
    assert_eq!(text_of(&result), "after resume");
    let methods = peer.methods_before_sentinel(&client).await;
    assert_eq!(methods, ["tools/call", "tools/call", "tasks/get"]);
}

// ---------------------------------------------------------------------------------
// A dropped call, and many at once.
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn dropping_call_tool_while_its_task_is_followed_sends_tasks_cancel_for_it() {
    let (transport, mut peer) = task_server("dropped", vec![task("dropped", "working")]);
    let client = tasks_client(transport).await;
    // The caller gives up by a timeout and keeps its client.
    let gave_up =
        tokio::time::timeout(Duration::from_millis(100), client.call_tool("t", json!({}))).await;
    assert!(gave_up.is_err(), "the task never ends: {gave_up:?}");
    let cancel = peer.until("tasks/cancel").await;
    assert_eq!(cancel.task_id(), "dropped");
    assert_eq!(
        cancel.extensions(),
        &json!({TASKS: {}}),
        "declared as every request"
    );
    // Nothing follows the cancelled task any more.
    let after = peer.methods_before_sentinel(&client).await;
    assert!(after.is_empty(), "still polled after the cancel: {after:?}");
}

#[tokio::test]
async fn aborting_the_only_holder_of_the_client_mid_task_still_sends_tasks_cancel() {
    let (transport, mut peer) = task_server("orphan", vec![task("orphan", "working")]);
    let client = tasks_client(transport).await;
    // The client moves into the call: aborted, the call drops the last handle the
    // caller had.
    let call = tokio::spawn(async move { client.call_tool("t", json!({})).await });
    peer.until("tasks/get").await;
    call.abort();
    let cancel = peer.until("tasks/cancel").await;
    assert_eq!(cancel.task_id(), "orphan");
}

#[tokio::test]
async fn thirty_two_concurrent_calls_becoming_tasks_each_get_their_own_result() {
    let mut polls: HashMap<String, usize> = HashMap::new();
    let (transport, mut peer) = hostile(move |request| match method_of(request) {
        "tools/call" => {
            let name = request["params"]["name"].as_str().unwrap_or_default();
            Reply::Result(created(format!("task-of-{name}")))
        }
        "tasks/get" => {
            let id = task_of(request);
            let n = polls.entry(id.clone()).or_default();
            *n += 1;
            Reply::Result(match *n {
                1 => task(&id, "working"),
                _ => completed(&id, done(&format!("result of {id}"))),
            })
        }
        _ => Reply::Result(ok()),
    });
    let client = tasks_client(transport).await;
    let calls = (0..32).map(|i| {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool(format!("c{i}"), json!({})).await })
    });
    let results = within(futures_util::future::join_all(calls)).await;
    for (i, result) in results.into_iter().enumerate() {
        let result = result.expect("no panic").expect("each call ends");
        assert_eq!(text_of(&result), format!("result of task-of-c{i}"));
    }
    let seen = peer.settle(&client).await;
    let mut per_task: HashMap<&str, usize> = HashMap::new();
    for s in seen.iter().filter(|s| s.method() == "tasks/get") {
        *per_task.entry(s.task_id()).or_default() += 1;
    }
    assert_eq!(per_task.len(), 32);
    assert!(per_task.values().all(|n| *n == 2), "{per_task:?}");
    assert!(
        seen.iter().all(|s| s.method() != "tasks/cancel"),
        "a finished task was cancelled"
    );
}

// ---------------------------------------------------------------------------------
// The apps extension's client half.
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn client_apps_declares_its_mime_types_and_claims_no_result_type() {
    const UI: &str = tern_mcp::types::ext_apps::EXTENSION_ID;
    for (apps, declared) in [
        (
            tern_mcp::apps::ClientApps::default(),
            json!({"mimeTypes": ["text/html;profile=mcp-app"]}),
        ),
        (
            tern_mcp::apps::ClientApps::default().mime_types(["text/html", "a\"b"]),
            json!({"mimeTypes": ["text/html", "a\"b"]}),
        ),
        (
            tern_mcp::apps::ClientApps::default().mime_types(Vec::<String>::new()),
            json!({"mimeTypes": []}),
        ),
    ] {
        // A server answering with the extension's id as a result type.
        let (transport, mut peer) = later_server(UI);
        let client = builder(&Arc::default())
            .extension(apps)
            .connect(transport)
            .await
            .unwrap();
        let err = within(client.call_tool("t", json!({}))).await.unwrap_err();
        assert!(is_unknown(&err, UI), "{err:?}");
        let seen = peer.until("tools/call").await;
        assert_eq!(seen.extensions(), &json!({UI: declared}));
    }
}
