//! What the gateway keeps for its clients and what it merges from its upstreams (#60):
//! a call held between rounds for a 2025-11-25 upstream is dropped at its deadline by a
//! timer (its upstream session closed, seen from the upstream's side), whether or not
//! another call is held after it; one caller holds at most its share of the held calls,
//! so a second caller still gets room; and a merged list is made of the upstreams that
//! serve it and answered in time (one without prompts or resources, or one that is late,
//! no longer fails the list for all), the one left out named in a warning; a read finds
//! its upstream past one that serves no resources.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::client::Client;
use tern_mcp::http::HttpServer;
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::server::Server;
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::method::{
    CallTool, ListPrompts, ListResourceTemplates, ListResources, ListTools, ReadResource,
};
use tern_mcp::types::v2026_07_28::{CallToolOutcome, CallToolRequestParams, ToolArguments};

use crate::http_support::{serve, serve_default, url};
use crate::log_support::Warnings;

// ---------------------------------------------------------------------------------------
// A 2025-11-25 upstream, scripted: each session's `tools/call` asks on its stream and
// never answers; the upstream records when each such stream closed and each session
// was deleted.

/// When the upstream saw each call's session end, by session id.
#[derive(Default)]
struct Ends {
    /// The sessions with a call open on them.
    calls: Vec<String>,
    /// When a call's stream was dropped (its client went).
    closed: HashMap<String, Instant>,
    /// When a session was deleted.
    deleted: HashMap<String, Instant>,
}

impl Ends {
    /// When each call's session ended, the first of its stream closing and its DELETE;
    /// `None` while one has not.
    fn ended(&self) -> Option<Vec<Instant>> {
        self.calls
            .iter()
            .map(|s| match (self.closed.get(s), self.deleted.get(s)) {
                (Some(a), Some(b)) => Some(*a.min(b)),
                (a, b) => a.or(b).copied(),
            })
            .collect()
    }
}

#[derive(Clone, Default)]
struct Legacy {
    ends: Arc<Mutex<Ends>>,
    sessions: Arc<AtomicUsize>,
}

/// Records the moment the stream it lives in is dropped.
struct OnClose {
    session: String,
    ends: Arc<Mutex<Ends>>,
}

impl Drop for OnClose {
    fn drop(&mut self) {
        let mut ends = self.ends.lock().unwrap();
        ends.closed.insert(self.session.clone(), Instant::now());
    }
}

pub(crate) fn json_response(status: u16, value: &Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(value.to_string()))
        .unwrap()
}

pub(crate) fn accepted() -> Response {
    Response::builder().status(202).body(Body::empty()).unwrap()
}

/// A message posted to a 2025-11-25 server, in the session it names.
pub(crate) struct Posted {
    pub(crate) session: String,
    pub(crate) method: String,
    pub(crate) id: Value,
    pub(crate) message: Value,
}

/// Reads a POST as a 2025-11-25 server does: `initialize` answered with a new session
/// (numbered by `sessions`), a request outside a session refused as the SDKs of that
/// era refuse it; else the message, in its session.
pub(crate) async fn in_session(
    sessions: &AtomicUsize,
    request: Request,
) -> Result<Posted, Response> {
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap();
    let message: Value = serde_json::from_slice(&bytes).unwrap();
    let method = message["method"].as_str().unwrap_or("response").to_owned();
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if method == "initialize" {
        let n = sessions.fetch_add(1, Ordering::SeqCst);
        let mut response = json_response(
            200,
            &json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "old", "version": "0.9"}
            }}),
        );
        let session = format!("session-{n}");
        response
            .headers_mut()
            .insert("mcp-session-id", session.parse().unwrap());
        return Err(response);
    }
    let Some(session) = session else {
        // Outside a session, as the SDKs of that era answer: not a 2026-07-28 error.
        return Err(json_response(
            400,
            &json!({"jsonrpc": "2.0", "id": null, "error":
                {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
        ));
    };
    Ok(Posted {
        session,
        method,
        id,
        message,
    })
}

async fn legacy_post(State(server): State<Legacy>, request: Request) -> Response {
    let Posted {
        session,
        method,
        id,
        ..
    } = match in_session(&server.sessions, request).await {
        Ok(posted) => posted,
        Err(answered) => return answered,
    };
    match method.as_str() {
        "notifications/initialized" | "response" => accepted(),
        "tools/list" => json_response(
            200,
            &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "ask", "inputSchema": {"type": "object"}}]}}),
        ),
        "tools/call" => call_stream(&server, session),
        _ => json_response(
            200,
            &json!({"jsonrpc": "2.0", "id": id, "error":
                {"code": -32601, "message": "Method not found"}}),
        ),
    }
}

/// The call's stream: a question, then a comment every 100 ms (so a stream whose
/// client went is found closed at the next write), never an answer.
fn call_stream(server: &Legacy, session: String) -> Response {
    server.ends.lock().unwrap().calls.push(session.clone());
    let ask = json!({"jsonrpc": "2.0", "id": 1000, "method": "elicitation/create",
        "params": {"message": "Which region?", "requestedSchema":
            {"type": "object", "properties": {"region": {"type": "string"}}}}});
    let first = format!("event: message\ndata: {ask}\n\n");
    let guard = OnClose {
        session,
        ends: Arc::clone(&server.ends),
    };
    let stream = futures_util::stream::unfold((Some(first), guard), |(first, guard)| async move {
        let chunk = match first {
            Some(first) => first,
            None => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                ": waiting\n\n".to_owned()
            }
        };
        Some((Ok::<_, std::convert::Infallible>(chunk), (None, guard)))
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

async fn legacy_delete(State(server): State<Legacy>, request: Request) -> Response {
    if let Some(session) = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        let mut ends = server.ends.lock().unwrap();
        ends.deleted.insert(session.to_owned(), Instant::now());
    }
    Response::builder().status(200).body(Body::empty()).unwrap()
}

/// The scripted 2025-11-25 upstream, served; its URL and what it saw end.
async fn legacy_upstream() -> (String, Arc<Mutex<Ends>>) {
    let state = Legacy::default();
    let ends = Arc::clone(&state.ends);
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(legacy_post).delete(legacy_delete),
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url(addr), ends)
}

// ---------------------------------------------------------------------------------------
// The gateway, its clients by principal.

/// Two principals, by their bearer tokens.
struct TwoPrincipals;

impl TokenVerifier for TwoPrincipals {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let result = match token {
            "alice" | "bob" => Ok(AuthInfo::new(token)),
            _ => Err(AuthError::InvalidToken("unknown token".into())),
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

/// A gateway over `upstreams`, served behind [`TwoPrincipals`]; its URL.
async fn gateway(upstreams: Vec<Upstream>) -> String {
    let mut gateway = Gateway::new("gateway", "1");
    for upstream in upstreams {
        gateway = gateway.upstream(upstream);
    }
    let http = HttpServer::new(gateway.build().unwrap())
        .token_verifier(Arc::new(TwoPrincipals))
        .resource_metadata("http://127.0.0.1/.well-known/oauth-protected-resource");
    url(serve(http).await)
}

/// A client of the gateway as `token`, which can answer a form (so the upstream may ask).
async fn client(gateway: &str, token: &str) -> Client {
    let transport = HttpClientTransport::builder(gateway)
        .bearer_token(token)
        .build()
        .unwrap();
    tern_tests::recording_client(&tern_tests::Asked::default())
        .connect(transport)
        .await
        .unwrap()
}

/// One round of `old.ask`: the gateway's questions (the call held), or its refusal.
async fn first_round(client: &Client) -> Result<(), Error> {
    let mut params = CallToolRequestParams::new("old.ask");
    params.arguments = Some(ToolArguments::from_value(&json!({})).unwrap());
    match client.request::<CallTool>(params).await? {
        CallToolOutcome::InputRequired(asked) => {
            let questions = asked.input_requests.unwrap();
            assert!(questions.contains_key("old.q1"), "{questions:?}");
            Ok(())
        }
        CallToolOutcome::Complete(done) => panic!("the upstream never answers: {done:?}"),
    }
}

#[tokio::test]
async fn a_held_call_is_dropped_at_its_deadline_though_no_other_call_comes() {
    const CALLS: usize = 5;
    let deadline = Duration::from_secs(1);
    let (old, ends) = legacy_upstream().await;
    let gw = gateway(vec![named("old", &old, deadline).await]).await;
    let alice = client(&gw, "alice").await;

    let sent = Instant::now();
    let rounds = (0..CALLS).map(|_| first_round(&alice));
    for held in futures_util::future::join_all(rounds).await {
        held.unwrap();
    }
    // Each held call's session ends, seen from the upstream, with no call after them.
    let ended = tokio::time::timeout(deadline + Duration::from_secs(10), async {
        loop {
            if let Some(ended) = ends.lock().unwrap().ended() {
                return ended;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("every held call's session ends");
    assert_eq!(ended.len(), CALLS);
    // Measured from the first call's send, so each call's own deadline is later still.
    let earliest_deadline = sent + deadline;
    let past: Vec<Duration> = ended
        .iter()
        .map(|end| {
            assert!(
                *end >= earliest_deadline,
                "a held call ended before its deadline"
            );
            end.duration_since(earliest_deadline)
        })
        .collect();
    let latest = past.iter().max().copied().unwrap_or_default();
    eprintln!("held calls stayed open past their deadline: at most {latest:?} ({past:?})");
    assert!(
        latest < Duration::from_secs(2),
        "held calls stayed open {latest:?} past their deadline"
    );
}

#[tokio::test]
async fn one_caller_holding_its_whole_share_leaves_room_for_another() {
    /// The share of one caller (`PER_CALLER` in the gateway's bridge).
    const SHARE: usize = 64;
    let (old, _ends) = legacy_upstream().await;
    let gw = gateway(vec![named("old", &old, Duration::from_secs(60)).await]).await;
    let alice = client(&gw, "alice").await;
    let bob = client(&gw, "bob").await;

    let rounds = (0..SHARE).map(|_| first_round(&alice));
    for held in futures_util::future::join_all(rounds).await {
        held.unwrap();
    }
    let refused = first_round(&alice).await.unwrap_err();
    let e = refused.rpc().expect("a JSON-RPC refusal");
    assert_eq!(e.code, -32000, "{e:?}");
    assert!(
        e.message.contains("holds 64 of your calls") && e.message.contains("one caller may"),
        "the refusal names the cap: {}",
        e.message
    );
    first_round(&bob)
        .await
        .expect("another caller still gets a place");
}

// ---------------------------------------------------------------------------------------
// Merged lists.

/// A server of tools alone (as the `provision` example is): `prompts/list` and the
/// resource lists are -32601 there; its `tools/list` stalls an hour if `stall`.
fn tools_only(tool: &'static str, stall: bool) -> Server {
    Server::builder(tool, "1")
        .handle::<ListTools, _, _>(move |_ctx, _params| async move {
            if stall {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Ok(
                serde_json::from_value(json!({"resultType": "complete", "tools": [
                {"name": tool, "inputSchema": {"type": "object"}}]}))
                .unwrap(),
            )
        })
        .build()
        .unwrap()
}

/// A server of a tool, a prompt, a resource (read) and a template.
fn everything() -> Server {
    Server::builder("everything", "1")
        .handle::<ListTools, _, _>(|_ctx, _params| async {
            Ok(
                serde_json::from_value(json!({"resultType": "complete", "tools": [
                {"name": "echo", "inputSchema": {"type": "object"}}]}))
                .unwrap(),
            )
        })
        .handle::<ListPrompts, _, _>(|_ctx, _params| async {
            Ok(serde_json::from_value(
                json!({"resultType": "complete", "prompts": [{"name": "greet"}]}),
            )
            .unwrap())
        })
        .handle::<ListResources, _, _>(|_ctx, _params| async {
            Ok(
                serde_json::from_value(json!({"resultType": "complete", "resources": [
                {"name": "readme", "uri": "demo://readme"}]}))
                .unwrap(),
            )
        })
        .handle::<ReadResource, _, _>(|_ctx, _params| async {
            Ok(
                serde_json::from_value(json!({"resultType": "complete", "contents": [
                {"uri": "demo://readme", "text": "read me"}]}))
                .unwrap(),
            )
        })
        .handle::<ListResourceTemplates, _, _>(|_ctx, _params| async {
            Ok(
                serde_json::from_value(json!({"resultType": "complete", "resourceTemplates": [
                {"name": "item", "uriTemplate": "demo://items/{id}"}]}))
                .unwrap(),
            )
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_merged_list_is_made_of_the_upstreams_that_serve_it_and_answered_in_time() {
    let warnings = Warnings::default();
    let _capture = warnings.capture();
    let late = Duration::from_millis(300);
    let provision = url(serve_default(tools_only("provision", false)).await);
    let full = url(serve_default(everything()).await);
    let stalled = url(serve_default(tools_only("stall", true)).await);
    let gw = gateway(vec![
        named("provision", &provision, late).await,
        named("full", &full, late).await,
        named("slow", &stalled, late).await,
    ])
    .await;
    let client = client(&gw, "alice").await;

    let prompts = client.list_all::<ListPrompts>().await.unwrap();
    let prompts: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, ["full.greet"]);
    let resources = client.list_all::<ListResources>().await.unwrap();
    let resources: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(resources, ["demo://readme"]);
    let templates = client.list_all::<ListResourceTemplates>().await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(templates, ["demo://items/{id}"]);
    // A read finds its upstream past the one that lists no resources.
    let read = client.read_resource("demo://readme").await.unwrap();
    assert!(serde_json::to_string(&read).unwrap().contains("read me"));
    // The late upstream is left out of the tools, and named in the log.
    let tools = client.list_all::<ListTools>().await.unwrap();
    let tools: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["provision.provision", "full.echo"]);
    let named_late = warnings
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|w| w.contains("upstream \"slow\"") && w.contains("left out of a merged list"));
    assert!(named_late, "{:?}", warnings.0.lock().unwrap());
}

#[tokio::test]
async fn a_list_no_upstream_answered_is_the_upstreams_error() {
    let stalled = url(serve_default(tools_only("stall", true)).await);
    let gw = gateway(vec![
        named("slow", &stalled, Duration::from_millis(300)).await,
    ])
    .await;
    let client = client(&gw, "alice").await;
    let failed = client.list_all::<ListTools>().await.unwrap_err();
    let e = failed.rpc().expect("a JSON-RPC error");
    assert_eq!(e.code, -32001, "{e:?}");
    assert!(e.message.contains("upstream \"slow\""), "{}", e.message);
}
