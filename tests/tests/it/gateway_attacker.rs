//! The gateway, the stdio client and the CLI's file reads attacked from outside, as a
//! hostile caller, upstream or server would (#60), knowing only their public description:
//! thousands of held calls from many callers (each under its share, none kept past the
//! deadline, room again after it), retries at and past the deadline, one address
//! without a principal over many connections, an upstream session that ends mid-hold;
//! merged lists against garbage, HTML, a method refused, upstreams gone, a hang on one
//! method alone and a list that changes while paged; a stdio server that prints a line
//! with no end, answers with ids nobody asked, keeps a request alive with progress, or
//! closes its stdout and stays; and `tern proxy --config` on files that lie about size.
//! An attack that breaks the code is pinned at the right behaviour and ignored, saying
//! what breaks.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::ask;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::server::Server;
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::stdio::{ChildProcessTransport, LineTransport};
use tern_mcp::types::v2026_07_28::method::{CallTool, ListPrompts, ListTools};
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, InputResponses, ToolArguments,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{Notify, mpsc};

use crate::gateway_holds::{Posted, accepted, in_session, json_response};
use crate::http_support::{serve, serve_default, url};
use crate::log_support::Warnings;

// ---------------------------------------------------------------------------------------
// A scripted 2025-11-25 upstream: what it answers to `tools/list`, and what its
// `tools/call` does; it counts the call streams open now and the most ever open at once.

#[derive(Clone, Copy)]
enum ListReply {
    /// One tool, `ask`.
    Good,
    /// `200 application/json` that is not JSON.
    Garbage,
    /// `200 text/html`, a page.
    Html,
    /// -32601, as a server without tools answers.
    NotFound,
}

#[derive(Clone, Copy)]
enum CallMode {
    /// Asks on its stream, then answers once the answer comes back.
    AskThenAnswer,
    /// Asks on its stream, then ends the stream with no answer.
    AskThenClose,
    /// Answers at once, as JSON.
    Plain,
}

#[derive(Clone)]
struct Legacy {
    list: ListReply,
    call: CallMode,
    sessions: Arc<AtomicUsize>,
    /// Where each session's answer to its question goes.
    answers: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>,
    open: Arc<AtomicUsize>,
    most_open: Arc<AtomicUsize>,
    /// When each call's stream ended, and when each session was deleted.
    ended: Arc<Mutex<HashMap<String, Instant>>>,
}

/// Counts a call stream while it lives.
struct Open {
    session: String,
    up: Legacy,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.up.open.fetch_sub(1, Ordering::SeqCst);
        let mut ended = self.up.ended.lock().unwrap();
        ended
            .entry(self.session.clone())
            .or_insert_with(Instant::now);
    }
}

fn raw_response(content_type: &str, body: &'static str) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap()
}

async fn legacy_post(State(up): State<Legacy>, request: Request) -> Response {
    let Posted {
        session,
        method,
        id,
        message,
    } = match in_session(&up.sessions, request).await {
        Ok(posted) => posted,
        Err(answered) => return answered,
    };
    match method.as_str() {
        "notifications/initialized" => accepted(),
        "response" => {
            if let Some(tx) = up.answers.lock().unwrap().get(&session) {
                let _ = tx.send(message);
            }
            accepted()
        }
        "tools/list" => match up.list {
            ListReply::Good => json_response(
                200,
                &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "ask", "inputSchema": {"type": "object"}}]}}),
            ),
            ListReply::Garbage => raw_response("application/json", "{\"jsonrpc\": \"2.0\", \"re"),
            ListReply::Html => raw_response("text/html", "<html><body>Sign in</body></html>"),
            ListReply::NotFound => not_found(&id),
        },
        "tools/call" => call_stream(&up, session, id),
        _ => not_found(&id),
    }
}

fn not_found(id: &Value) -> Response {
    json_response(
        200,
        &json!({"jsonrpc": "2.0", "id": id, "error":
            {"code": -32601, "message": "Method not found"}}),
    )
}

enum Step {
    Ask,
    Wait,
    Done,
}

/// The call's stream, as the upstream's [`CallMode`] says; a comment every second while
/// it waits, so a stream whose client went is found closed at the next write.
fn call_stream(up: &Legacy, session: String, id: Value) -> Response {
    if let CallMode::Plain = up.call {
        return json_response(
            200,
            &json!({"jsonrpc": "2.0", "id": id, "result":
                {"content": [{"type": "text", "text": "served anyway"}]}}),
        );
    }
    let (tx, rx) = mpsc::unbounded_channel();
    up.answers.lock().unwrap().insert(session.clone(), tx);
    let now = up.open.fetch_add(1, Ordering::SeqCst) + 1;
    up.most_open.fetch_max(now, Ordering::SeqCst);
    let guard = Open {
        session,
        up: up.clone(),
    };
    let mode = up.call;
    let stream = futures_util::stream::unfold(
        (Step::Ask, rx, guard),
        move |(step, mut rx, guard)| {
            let id = id.clone();
            async move {
                let chunk = match step {
                    Step::Ask => {
                        let ask = json!({"jsonrpc": "2.0", "id": 1000,
                        "method": "elicitation/create", "params": {"message": "Which region?",
                        "requestedSchema": {"type": "object",
                            "properties": {"region": {"type": "string"}}}}});
                        let next = match mode {
                            CallMode::AskThenClose => Step::Done,
                            _ => Step::Wait,
                        };
                        return Some((
                            Ok(format!("event: message\ndata: {ask}\n\n")),
                            (next, rx, guard),
                        ));
                    }
                    Step::Done => return None,
                    Step::Wait => {
                        tokio::select! {
                            answer = rx.recv() => match answer {
                                Some(answer) => {
                                    let region = &answer["result"]["content"]["region"];
                                    let done = json!({"jsonrpc": "2.0", "id": id, "result":
                                        {"content": [{"type": "text",
                                            "text": format!("provisioned in {region}")}]}});
                                    return Some((
                                        Ok(format!("event: message\ndata: {done}\n\n")),
                                        (Step::Done, rx, guard),
                                    ));
                                }
                                None => return None,
                            },
                            () = tokio::time::sleep(Duration::from_secs(1)) => ": waiting\n\n".to_owned(),
                        }
                    }
                };
                Some((
                    Ok::<_, std::convert::Infallible>(chunk),
                    (Step::Wait, rx, guard),
                ))
            }
        },
    );
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

async fn legacy_delete(State(up): State<Legacy>, request: Request) -> Response {
    if let Some(session) = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        let mut ended = up.ended.lock().unwrap();
        ended.entry(session.to_owned()).or_insert_with(Instant::now);
    }
    Response::builder().status(200).body(Body::empty()).unwrap()
}

/// The scripted upstream served until `down` is notified; its URL and state.
async fn legacy(list: ListReply, call: CallMode, down: Arc<Notify>) -> (String, Legacy) {
    let up = Legacy {
        list,
        call,
        sessions: Arc::default(),
        answers: Arc::default(),
        open: Arc::default(),
        most_open: Arc::default(),
        ended: Arc::default(),
    };
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(legacy_post).delete(legacy_delete),
        )
        .with_state(up.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { down.notified().await })
            .await
    });
    (url(addr), up)
}

async fn held_upstream(call: CallMode) -> (String, Legacy) {
    legacy(ListReply::Good, call, Arc::new(Notify::new())).await
}

// ---------------------------------------------------------------------------------------
// The gateway and its callers.

/// Any bearer token that starts with `p` is a principal of that name.
struct AnyPrincipal;

impl TokenVerifier for AnyPrincipal {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let result = if token.starts_with('p') {
            Ok(AuthInfo::new(token))
        } else {
            Err(AuthError::InvalidToken("unknown token".into()))
        };
        Box::pin(async move { result })
    }
}

async fn named(name: &str, url: &str, deadline: Duration) -> Upstream {
    Upstream::http(HttpClientTransport::builder(url))
        .await
        .unwrap()
        .named(name)
        .unwrap()
        .deadline(deadline)
}

fn build(upstreams: Vec<Upstream>) -> Server {
    let mut gateway = Gateway::new("gateway", "1");
    for upstream in upstreams {
        gateway = gateway.upstream(upstream);
    }
    gateway.build().unwrap()
}

/// The gateway served behind [`AnyPrincipal`]; its URL.
async fn gateway(upstreams: Vec<Upstream>) -> String {
    let http = HttpServer::new(build(upstreams))
        .token_verifier(Arc::new(AnyPrincipal))
        .resource_metadata("http://127.0.0.1/.well-known/oauth-protected-resource");
    url(serve(http).await)
}

/// The gateway served to anyone, callers told apart by their address alone.
async fn open_gateway(upstreams: Vec<Upstream>) -> String {
    url(serve(HttpServer::new(build(upstreams))).await)
}

async fn client(gateway: &str, token: Option<&str>) -> Client {
    let mut transport = HttpClientTransport::builder(gateway);
    if let Some(token) = token {
        transport = transport.bearer_token(token);
    }
    tern_tests::recording_client(&tern_tests::Asked::default())
        .connect(transport.build().unwrap())
        .await
        .unwrap()
}

fn ask_call() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("old.ask");
    params.arguments = Some(ToolArguments::from_value(&json!({})).unwrap());
    params
}

/// One round of `old.ask`: the gateway's state for the retry (the call held), or the
/// refusal.
async fn first_round(client: &Client) -> Result<String, Error> {
    match client.request::<CallTool>(ask_call()).await? {
        CallToolOutcome::InputRequired(asked) => {
            let questions = asked.input_requests.unwrap();
            assert!(questions.contains_key("old.q1"), "{questions:?}");
            Ok(asked.request_state.expect("a held call's state"))
        }
        CallToolOutcome::Complete(done) => panic!("the upstream asks first: {done:?}"),
    }
}

/// The retry of a held `old.ask`, its question answered.
async fn retry(client: &Client, state: String) -> Result<CallToolOutcome, Error> {
    let mut params = ask_call();
    let mut answers = InputResponses::new();
    answers
        .insert("old.q1", ask::accept([("region", "eu-west-1")]).into())
        .unwrap();
    params.input_responses = Some(answers);
    params.request_state = Some(state);
    client.request::<CallTool>(params).await
}

/// A refusal's JSON-RPC code and message.
fn rpc(error: &Error) -> (i64, String) {
    let e = error
        .rpc()
        .unwrap_or_else(|| panic!("a JSON-RPC error: {error:?}"));
    (e.code, e.message.clone())
}

/// Waits (at most `limit`) until `done` holds.
async fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

/// Each of `clients` sends `each` first rounds of `old.ask`, ten at a time: how many
/// each got held, and every refusal's code and message.
async fn first_rounds(clients: &[Client], each: usize) -> Vec<(usize, Vec<(i64, String)>)> {
    let per_caller = clients.iter().map(|c| async move {
        let rounds = futures_util::stream::iter(0..each)
            .map(|_| first_round(c))
            .buffer_unordered(10)
            .collect::<Vec<_>>()
            .await;
        let mut held = 0;
        let mut refusals = Vec::new();
        for round in rounds {
            match round {
                Ok(_) => held += 1,
                Err(e) => refusals.push(rpc(&e)),
            }
        }
        (held, refusals)
    });
    futures_util::future::join_all(per_caller).await
}

async fn principals(gw: &str, n: usize) -> Vec<Client> {
    let mut clients = Vec::new();
    for n in 0..n {
        clients.push(client(gw, Some(&format!("p{n}"))).await);
    }
    clients
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_calls_from_forty_callers_are_held_up_to_the_cap_and_refused_past_it() {
    // A deadline no call reaches while the test runs: the cap alone decides.
    let deadline = Duration::from_secs(300);
    let (old, up) = held_upstream(CallMode::AskThenAnswer).await;
    let gw = gateway(vec![named("old", &old, deadline).await]).await;
    let clients = principals(&gw, 40).await;
    let started = Instant::now();
    let outcomes = first_rounds(&clients, 50).await;
    let issued = started.elapsed();
    let held: Vec<usize> = outcomes.iter().map(|(h, _)| *h).collect();
    let total: usize = held.iter().sum();
    eprintln!(
        "2,000 calls from 40 callers in {issued:?}: {total} held, per caller {}..{}; \
         the upstream got {} calls, at most {} open at once",
        held.iter().min().unwrap(),
        held.iter().max().unwrap(),
        up.answers.lock().unwrap().len(),
        up.most_open.load(Ordering::SeqCst)
    );
    assert_eq!(
        total, 1024,
        "the gateway holds up to its cap, no more: {held:?}"
    );
    assert!(held.iter().all(|h| *h <= 64), "{held:?}");
    assert!(
        held.iter().all(|h| *h > 0),
        "every caller got room: {held:?}"
    );
    for (code, message) in outcomes.iter().flat_map(|(_, r)| r) {
        assert_eq!(*code, -32000, "{message}");
        assert!(
            message.contains("holds 1024 calls"),
            "names the cap: {message}"
        );
    }
    // A principal that held nothing is refused by the cap of all, told so at once.
    let late = client(&gw, Some("platecomer")).await;
    let (code, message) = rpc(&first_round(&late).await.unwrap_err());
    assert_eq!(code, -32000, "{message}");
    assert!(message.contains("holds 1024 calls"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_held_calls_from_forty_callers_all_end_at_the_deadline_and_room_returns() {
    let deadline = Duration::from_secs(5);
    let (old, up) = held_upstream(CallMode::AskThenAnswer).await;
    let gw = gateway(vec![named("old", &old, deadline).await]).await;
    let clients = principals(&gw, 40).await;
    let outcomes = first_rounds(&clients, 5).await;
    let sent_last = Instant::now();
    assert!(
        outcomes.iter().all(|(h, _)| *h == 5),
        "all held: {outcomes:?}"
    );
    // No held call outlives its deadline by more than a moment (the upstream's stream
    // is found closed within a second, at its next write).
    let all_ended = until(deadline + Duration::from_secs(5), || {
        up.open.load(Ordering::SeqCst) == 0
    })
    .await;
    let after = sent_last.elapsed();
    assert!(
        all_ended,
        "{} upstream calls still open {after:?} after the last was held",
        up.open.load(Ordering::SeqCst),
    );
    eprintln!("200 held calls all ended {after:?} after the last was held (deadline {deadline:?})");
    let again = first_rounds(&clients, 1).await;
    assert!(
        again.iter().all(|(h, _)| *h == 1),
        "room again after the deadline"
    );
}

#[tokio::test]
async fn a_retry_after_the_deadline_is_a_clear_error_and_one_before_it_completes() {
    let deadline = Duration::from_millis(800);
    let (old, up) = held_upstream(CallMode::AskThenAnswer).await;
    let gw = gateway(vec![named("old", &old, deadline).await]).await;
    let alice = client(&gw, Some("palice")).await;

    // In time: the answer reaches the upstream and the call completes.
    let state = first_round(&alice).await.unwrap();
    let done = retry(&alice, state).await.unwrap();
    let CallToolOutcome::Complete(done) = done else {
        panic!("completes: {done:?}")
    };
    assert!(tern_tests::text_of(&done).contains("eu-west-1"));

    // Past it: the upstream saw the session end; the retry is refused, saying why.
    let state = first_round(&alice).await.unwrap();
    let seen = up.sessions.load(Ordering::SeqCst) - 1;
    let session = format!("session-{seen}");
    let ended = until(deadline * 10, || {
        up.ended.lock().unwrap().contains_key(&session)
    })
    .await;
    assert!(ended, "the held call's session ends at its deadline");
    let refused = tokio::time::timeout(Duration::from_secs(10), retry(&alice, state))
        .await
        .expect("a late retry is answered, not held");
    let (code, message) = rpc(&refused.unwrap_err());
    eprintln!("a retry past the deadline: {code} {message}");
    assert!(
        message.contains("expired")
            || message.contains("deadline")
            || message.contains("no longer"),
        "the refusal says the call is gone: {message}"
    );
}

#[tokio::test]
async fn a_retry_exactly_at_the_deadline_completes_or_is_refused_never_hangs() {
    let deadline = Duration::from_millis(600);
    let (old, _up) = held_upstream(CallMode::AskThenAnswer).await;
    let gw = gateway(vec![named("old", &old, deadline).await]).await;
    let alice = client(&gw, Some("palice")).await;
    for offset_ms in [0u64, 5, 10, 20] {
        let sent = Instant::now();
        let state = first_round(&alice).await.unwrap();
        let at = sent + deadline + Duration::from_millis(offset_ms);
        tokio::time::sleep_until(at.into()).await;
        let outcome = tokio::time::timeout(deadline * 10, retry(&alice, state))
            .await
            .expect("a retry at the deadline is answered");
        match outcome {
            Ok(CallToolOutcome::Complete(done)) => {
                assert!(tern_tests::text_of(&done).contains("eu-west-1"));
            }
            Ok(other) => panic!("neither done nor refused: {other:?}"),
            Err(e) => {
                let (code, message) = rpc(&e);
                assert_ne!(
                    code, -32603,
                    "an internal error is not the answer: {message}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_caller_without_a_principal_is_one_caller_however_many_connections_it_opens() {
    let (old, _up) = held_upstream(CallMode::AskThenAnswer).await;
    let gw = open_gateway(vec![named("old", &old, Duration::from_secs(60)).await]).await;
    // Eight clients from one address, each its own connections: 80 calls in all.
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(client(&gw, None).await);
    }
    let rounds = clients
        .iter()
        .flat_map(|c| (0..10).map(move |_| first_round(c)));
    let outcomes = futures_util::future::join_all(rounds).await;
    let held = outcomes.iter().filter(|o| o.is_ok()).count();
    assert_eq!(held, 64, "one address holds its share, no more");
    for refused in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        let (code, message) = rpc(refused);
        assert_eq!(code, -32000, "{message}");
        assert!(message.contains("holds 64 of your calls"), "{message}");
    }
}

#[tokio::test]
async fn a_call_refused_for_the_cap_never_reaches_the_upstream() {
    let (old, up) = held_upstream(CallMode::AskThenAnswer).await;
    let gw = gateway(vec![named("old", &old, Duration::from_secs(60)).await]).await;
    let alice = client(&gw, Some("palice")).await;
    for _ in 0..64 {
        first_round(&alice).await.unwrap();
    }
    let (code, message) = rpc(&first_round(&alice).await.unwrap_err());
    assert_eq!(code, -32000, "{message}");
    let called = up.answers.lock().unwrap().len();
    assert_eq!(called, 64, "the refused call was not sent to the upstream");
}

#[tokio::test]
async fn an_upstream_that_ends_its_stream_mid_hold_fails_the_retry_clearly() {
    let deadline = Duration::from_secs(20);
    let (old, up) = held_upstream(CallMode::AskThenClose).await;
    let gw = gateway(vec![named("old", &old, deadline).await]).await;
    let alice = client(&gw, Some("palice")).await;
    // The stream may end before the gateway holds the call: then the first round fails.
    let failed = match first_round(&alice).await {
        Err(failed) => failed,
        Ok(state) => {
            let closed = until(Duration::from_secs(5), || {
                !up.ended.lock().unwrap().is_empty()
            })
            .await;
            assert!(closed, "the upstream ended its stream");
            tokio::time::timeout(Duration::from_secs(10), retry(&alice, state))
                .await
                .expect("answered long before the 30 s deadline")
                .unwrap_err()
        }
    };
    let (code, message) = rpc(&failed);
    eprintln!("a call whose upstream stream ended mid-hold: {code} {message}");
    assert_eq!(code, -32603, "{message}");
    assert!(
        message.contains("upstream \"old\""),
        "names the upstream: {message}"
    );
}

// ---------------------------------------------------------------------------------------
// Merged lists.

/// A tern server with one tool, `echo`, and a prompt list that takes `prompts` long.
fn echo(prompts: Duration) -> Server {
    Server::builder("echo", "1")
        .handle::<ListTools, _, _>(|_ctx, _params| async {
            Ok(
                serde_json::from_value(json!({"resultType": "complete", "tools": [
                {"name": "echo", "inputSchema": {"type": "object"}}]}))
                .unwrap(),
            )
        })
        .handle::<ListPrompts, _, _>(move |_ctx, _params| async move {
            tokio::time::sleep(prompts).await;
            Ok(serde_json::from_value(
                json!({"resultType": "complete", "prompts": [{"name": "greet"}]}),
            )
            .unwrap())
        })
        .build()
        .unwrap()
}

async fn tool_names(client: &Client) -> Vec<String> {
    let tools = client.list_all::<ListTools>().await.unwrap();
    tools.into_iter().map(|t| t.name).collect()
}

#[tokio::test]
async fn garbage_html_and_a_refused_list_are_left_out_and_named() {
    let warnings = Warnings::default();
    let _capture = warnings.capture();
    let down = Arc::new(Notify::new());
    let (garbage, _) = legacy(ListReply::Garbage, CallMode::Plain, Arc::clone(&down)).await;
    let (html, _) = legacy(ListReply::Html, CallMode::Plain, Arc::clone(&down)).await;
    let (refused, _) = legacy(ListReply::NotFound, CallMode::Plain, Arc::clone(&down)).await;
    let good = url(serve_default(echo(Duration::ZERO)).await);
    let deadline = Duration::from_secs(5);
    let gw = gateway(vec![
        named("garbage", &garbage, deadline).await,
        named("html", &html, deadline).await,
        named("refused", &refused, deadline).await,
        named("good", &good, deadline).await,
    ])
    .await;
    let client = client(&gw, Some("palice")).await;
    assert_eq!(tool_names(&client).await, ["good.echo"]);
    assert!(
        !warnings.mentioning(&["upstream \"garbage\""]).is_empty(),
        "{:?}",
        warnings.0.lock().unwrap()
    );
    assert!(
        !warnings.mentioning(&["upstream \"html\""]).is_empty(),
        "{:?}",
        warnings.0.lock().unwrap()
    );
}

#[tokio::test]
#[ignore = "a known limit: a named upstream whose changes go unheard is not asked for its list on every call (the relayed flow's cost), so its prefix routes a tool it does not list"]
async fn a_tool_of_an_upstream_that_refuses_tools_list_is_not_served() {
    let down = Arc::new(Notify::new());
    let (refused, _) = legacy(ListReply::NotFound, CallMode::Plain, down).await;
    let gw = gateway(vec![
        named("refused", &refused, Duration::from_secs(5)).await,
    ])
    .await;
    let client = client(&gw, Some("palice")).await;
    let unlisted = client.call_tool("refused.ask", json!({})).await;
    let (code, message) = rpc(&unlisted.unwrap_err());
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("Unknown tool"), "{message}");
}

#[tokio::test]
async fn a_tool_name_dropped_from_the_list_is_not_called_either() {
    let long = "c".repeat(127);
    let listed = long.clone();
    let reached = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&reached);
    let server = Server::builder("odd", "1")
        .handle::<ListTools, _, _>(move |_ctx, _params| {
            let tools = json!({"resultType": "complete", "tools": [
                {"name": listed, "inputSchema": {"type": "object"}},
                {"name": "with space", "inputSchema": {"type": "object"}}]});
            async move { Ok(serde_json::from_value(tools).unwrap()) }
        })
        .handle::<CallTool, _, _>(move |_ctx, _params| {
            count.fetch_add(1, Ordering::SeqCst);
            async {
                Ok(serde_json::from_value(json!({"resultType": "complete",
                    "content": [{"type": "text", "text": "reached"}]}))
                .unwrap())
            }
        })
        .build()
        .unwrap();
    let odd = url(serve_default(server).await);
    let gw = gateway(vec![named("n", &odd, Duration::from_secs(5)).await]).await;
    let client = client(&gw, Some("palice")).await;
    assert!(
        tool_names(&client).await.is_empty(),
        "both names are dropped"
    );
    for name in [format!("n.{long}"), "n.with space".to_owned()] {
        let called = client.call_tool(name.as_str(), json!({})).await;
        let (code, message) = rpc(&called.unwrap_err());
        assert_eq!(code, -32602, "{name}: {message}");
    }
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the upstream was never called"
    );
}

#[tokio::test]
async fn a_list_when_every_upstream_is_down_is_an_error_naming_them() {
    let down = Arc::new(Notify::new());
    let (a, _) = legacy(ListReply::Good, CallMode::Plain, Arc::clone(&down)).await;
    let (b, _) = legacy(ListReply::Good, CallMode::Plain, Arc::clone(&down)).await;
    let deadline = Duration::from_secs(20);
    let gw = gateway(vec![
        named("a", &a, deadline).await,
        named("b", &b, deadline).await,
    ])
    .await;
    let client = client(&gw, Some("palice")).await;
    down.notify_waiters();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let failed = tokio::time::timeout(Duration::from_secs(10), client.list_all::<ListTools>())
        .await
        .expect("a refused connection is not waited out to the deadline")
        .unwrap_err();
    let (code, message) = rpc(&failed);
    eprintln!(
        "every upstream down: {code} {message} in {:?}",
        started.elapsed()
    );
    assert!(message.contains("upstream"), "{message}");
}

#[tokio::test]
async fn an_upstream_that_hangs_on_prompts_alone_still_serves_its_tools() {
    let warnings = Warnings::default();
    let _capture = warnings.capture();
    let hangs = url(serve_default(echo(Duration::from_secs(3600))).await);
    let fine = url(serve_default(echo(Duration::ZERO)).await);
    let deadline = Duration::from_millis(400);
    let gw = gateway(vec![
        named("hangs", &hangs, deadline).await,
        named("fine", &fine, deadline).await,
    ])
    .await;
    let client = client(&gw, Some("palice")).await;
    let prompts = client.list_all::<ListPrompts>().await.unwrap();
    let prompts: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, ["fine.greet"]);
    assert!(
        !warnings.mentioning(&["upstream \"hangs\""]).is_empty(),
        "{:?}",
        warnings.0.lock().unwrap()
    );
    assert_eq!(tool_names(&client).await, ["hangs.echo", "fine.echo"]);
}

#[tokio::test]
async fn a_list_that_changes_while_it_is_paged_ends_without_duplicates() {
    // Each `tools/list` the upstream answers is a new generation of 300 tools, half of
    // them the last generation's.
    let generation = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("churn", "1")
        .handle::<ListTools, _, _>(move |_ctx, _params| {
            let g = generation.fetch_add(1, Ordering::SeqCst);
            async move {
                let tools: Vec<Value> = (g * 150..g * 150 + 300)
                    .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
                    .collect();
                Ok(
                    serde_json::from_value(json!({"resultType": "complete", "tools": tools}))
                        .unwrap(),
                )
            }
        })
        .build()
        .unwrap();
    let churn = url(serve_default(server).await);
    let gw = gateway(vec![named("churn", &churn, Duration::from_secs(5)).await]).await;
    let client = client(&gw, Some("palice")).await;
    for _ in 0..3 {
        let names = tokio::time::timeout(Duration::from_secs(20), tool_names(&client))
            .await
            .expect("paging ends");
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(
            unique.len(),
            names.len(),
            "a name served twice in one listing"
        );
        assert!(!names.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// The client over stdio, against servers that misbehave.

/// A server scripted in-process over a pipe pair, as a child's stdin and stdout are:
/// `script` gets each line the client writes and the writer.
fn line_server<F, Fut>(script: F) -> LineTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>
where
    F: FnOnce(tokio::io::Lines<BufReader<tokio::io::DuplexStream>>, tokio::io::DuplexStream) -> Fut
        + Send
        + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (client_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    tokio::spawn(script(BufReader::new(server_in).lines(), server_out));
    LineTransport::new(client_in, client_out)
}

async fn stateless(transport: impl tern_mcp::transport::MessageTransport) -> Client {
    Client::builder("victim", "1")
        .era(EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn answers_with_ids_nobody_asked_leave_the_request_to_fail_at_its_deadline() {
    let (tx, mut seen) = mpsc::unbounded_channel::<Value>();
    let transport = line_server(move |mut lines, mut out| async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap();
            let _ = tx.send(message.clone());
            if message.get("id").is_none() {
                continue;
            }
            for id in [json!(987_654), json!(null), json!("not-yours")] {
                let wrong = json!({"jsonrpc": "2.0", "id": id,
                    "result": {"resultType": "complete", "tools": []}});
                out.write_all(format!("{wrong}\n").as_bytes())
                    .await
                    .unwrap();
            }
        }
    });
    let client = stateless(transport).await;
    let started = tokio::time::Instant::now();
    let failed = client.list_all::<ListTools>().await.unwrap_err();
    assert_eq!(started.elapsed().as_secs(), 60, "{failed}");
    assert!(
        failed
            .to_string()
            .contains("no answer to tools/list within 60 s"),
        "{failed}"
    );
    let request = seen.recv().await.unwrap();
    let cancelled = seen.recv().await.unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}

/// A server that answers nothing, and sends progress every 30 s under the request's
/// `progressToken` (its id when it has none), forever.
fn progress_forever() -> LineTransport<tokio::io::DuplexStream, tokio::io::DuplexStream> {
    line_server(|mut lines, mut out| async move {
        let Ok(Some(line)) = lines.next_line().await else {
            return;
        };
        let request: Value = serde_json::from_str(&line).unwrap();
        let token = request["params"]["_meta"]["progressToken"].clone();
        let token = if token.is_null() {
            request["id"].clone()
        } else {
            token
        };
        for n in 1u64.. {
            tokio::time::sleep(Duration::from_secs(30)).await;
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": n}});
            if out
                .write_all(format!("{progress}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
    })
}

#[tokio::test(start_paused = true)]
async fn progress_forever_keeps_a_request_alive_ten_minutes_at_most() {
    let client = stateless(progress_forever()).await;
    let (notices, mut heard) = mpsc::unbounded_channel();
    let started = tokio::time::Instant::now();
    let call = client.call_tool_with_notices("x", json!({}), notices);
    let failed = tokio::time::timeout(Duration::from_secs(3600), call)
        .await
        .expect("the request ends")
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("progress every 30 s, never an answer: given up after {took:?}: {failed}");
    assert!(
        heard.recv().await.is_some(),
        "the progress reached the caller"
    );
    assert_eq!(took.as_secs(), 600, "{failed}");
}

#[tokio::test(start_paused = true)]
async fn progress_under_a_token_never_given_does_not_keep_a_request_alive() {
    let client = stateless(progress_forever()).await;
    let started = tokio::time::Instant::now();
    let failed = client.call_tool("x", json!({})).await.unwrap_err();
    assert_eq!(started.elapsed().as_secs(), 60, "{failed}");
    assert!(
        failed
            .to_string()
            .contains("no answer to tools/call within 60 s"),
        "{failed}"
    );
}

/// A server that writes a 100 MB line with no end, then stays silent; said on `wrote`
/// once it is all written (all read by the client: the pipe holds 64 KiB).
fn endless_line(
    wrote: tokio::sync::oneshot::Sender<()>,
) -> LineTransport<tokio::io::DuplexStream, tokio::io::DuplexStream> {
    line_server(|_lines, mut out| async move {
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            if out.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = wrote.send(());
        std::future::pending::<()>().await;
    })
}

#[tokio::test(start_paused = true)]
async fn a_hundred_megabyte_line_with_no_end_is_read_through_without_stalling() {
    let (wrote, written) = tokio::sync::oneshot::channel();
    let client = stateless(endless_line(wrote)).await;
    let started = tokio::time::Instant::now();
    let failed = client.list_all::<ListTools>().await.unwrap_err();
    let took = started.elapsed();
    assert!(
        written.await.is_ok(),
        "the client read all 100 MB, never stalled on them"
    );
    eprintln!("a 100 MB line with no end: {failed} after {took:?}");
    assert!(took <= Duration::from_secs(60), "{failed}");
}

#[tokio::test(start_paused = true)]
async fn a_line_past_the_message_limit_fails_the_request_saying_so() {
    let (wrote, _written) = tokio::sync::oneshot::channel();
    let client = stateless(endless_line(wrote)).await;
    let started = tokio::time::Instant::now();
    let failed = client.list_all::<ListTools>().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(60), "{failed}");
    assert!(
        failed.to_string().contains("MiB"),
        "names the limit: {failed}"
    );
}

#[tokio::test]
async fn a_server_that_closes_stdout_and_stays_fails_requests_at_once() {
    let mut command = Command::new("sh");
    command.args(["-c", "exec >&-; exec sleep 60"]);
    let client = stateless(ChildProcessTransport::spawn(command).unwrap()).await;
    let failed = tokio::time::timeout(Duration::from_secs(10), client.list_all::<ListTools>())
        .await
        .expect("a closed stdout is not waited out to the deadline")
        .unwrap_err();
    eprintln!("stdout closed, process alive: {failed}");
    // Discovery against it ends too, before its timeout.
    let mut command = Command::new("sh");
    command.args(["-c", "exec >&-; exec sleep 60"]);
    let connecting =
        Client::builder("victim", "1").connect(ChildProcessTransport::spawn(command).unwrap());
    let failed = tokio::time::timeout(Duration::from_secs(5), connecting)
        .await
        .expect("discovery ends before its 10 s");
    assert!(failed.is_err());
}

// ---------------------------------------------------------------------------------------
// `tern proxy --config` on files whose metadata lies.

/// `tern proxy --config FILE`, given at most `limit`: its exit code (`None` when it had
/// to be killed) and stderr.
async fn proxy_config(file: &Path, limit: Duration) -> (Option<i32>, String) {
    let bin = tokio::task::spawn_blocking(tern_tests::tern_bin)
        .await
        .unwrap();
    let child = Command::new(bin)
        .args(["proxy", "--listen", "127.0.0.1:0", "--config"])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(out) => {
            let out = out.unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
        Err(_) => (None, String::new()),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-attacker-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[tokio::test]
async fn a_proxy_config_of_random_bytes_a_directory_or_two_mebibytes_is_refused() {
    let big = scratch("two-mebibytes.json");
    std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
    for file in [Path::new("/dev/urandom"), big.as_path()] {
        let (code, stderr) = proxy_config(file, Duration::from_secs(60)).await;
        assert_eq!(code, Some(2), "{}: {stderr}", file.display());
        assert!(stderr.contains("more than 1048576 bytes"), "{stderr}");
    }
    let dir = scratch("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let (code, stderr) = proxy_config(&dir, Duration::from_secs(60)).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("Is a directory"), "{stderr}");
}

#[tokio::test]
async fn a_proxy_config_fifo_written_without_end_is_refused_at_its_bound() {
    let fifo = scratch("endless.fifo");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        tokio::task::spawn_blocking(move || {
            use std::io::Write as _;
            let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let chunk = vec![b' '; 1 << 16];
            // Until the reader goes (a broken pipe), bounded at 64 MiB.
            for _ in 0..1024 {
                if pipe.write_all(&chunk).is_err() {
                    return;
                }
            }
        })
    };
    let (code, stderr) = proxy_config(&fifo, Duration::from_secs(60)).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("more than 1048576 bytes"), "{stderr}");
    writer.await.unwrap();
}

#[tokio::test]
#[ignore = "a known limit: `tern proxy --config` on a FIFO no one writes waits in open(), as cat does"]
async fn a_proxy_config_fifo_never_written_is_refused_not_waited_on_forever() {
    let fifo = scratch("silent.fifo");
    mkfifo(&fifo);
    let (code, stderr) = proxy_config(&fifo, Duration::from_secs(30)).await;
    assert_eq!(
        code,
        Some(2),
        "ends with a usage error naming the file: {stderr}"
    );
}
