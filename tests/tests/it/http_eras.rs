//! Both protocol eras over Streamable HTTP, on loopback sockets: the client's era
//! discovery (against tern's dual-era server, and against a scripted server that knows
//! only 2025-11-25 sessions), 2025-11-25 sessions end to end (`Mcp-Session-Id`, the
//! server's `elicitation/create` on the SSE stream answered by the callback that
//! answers input requests, the answer POSTed back), and the server's session rules.

use crate::http_support;
use tern_mcp::client::ClientLimits;
use tern_mcp::http::HttpLimits;
use tern_mcp::types::v2026_07_28::method::ListTools;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{Value, json};
use tern_mcp::ask;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::http::client::{EraCache, HttpClientTransport};
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, ElicitValue, InputRequest, InputResponse, method,
};
use tern_mcp::{Era, Error};
use tokio::sync::oneshot;

use http_support::{
    initialize_body, legacy_body, legacy_headers, open_session, post, send, serve, set, url,
};
use tern_tests::{Asked, Stopped, recording_client, text_of};

fn region_form() -> InputRequest {
    ask::elicit_form(
        "Which region?",
        json!({"type": "object", "properties": {"region": {"type": "string"}}}),
    )
    .unwrap()
}

fn region_in(answer: &InputResponse) -> Option<String> {
    let InputResponse::Elicit(result) = answer else {
        return None;
    };
    match result.content.as_ref()?.get("region")? {
        ElicitValue::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// One tool for both eras: asks with an `InputRequiredResult` in 2026-07-28 and with
/// `elicitation/create` on a 2025-11-25 session.
fn provisioner() -> Server {
    Server::builder("Provisioner", "1.0.0")
        .handle::<method::CallTool, _, _>(
            |ctx: RequestContext, params: CallToolRequestParams| async move {
                let region = if ctx.era() == Era::Session {
                    region_in(&ctx.request_input(&region_form()).await?)
                } else {
                    let answered = params
                        .input_responses
                        .as_ref()
                        .and_then(|r| r.get::<method::Elicit>("region"))
                        .and_then(Result::ok)
                        .map(InputResponse::Elicit);
                    match answered {
                        None => {
                            return Ok(
                                ask::input_required([("region", region_form())], None).into()
                            );
                        }
                        Some(answer) => region_in(&answer),
                    }
                };
                let text = format!(
                    "{} in {} over {}",
                    params.name,
                    region.unwrap_or_default(),
                    ctx.meta().protocol_version
                );
                Ok(CallToolResult::new(vec![ask::text(text)]).into())
            },
        )
        .build()
        .unwrap()
}

/// Serves `app` on a port of its own on loopback.
async fn serve_app(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

async fn connect(addr: SocketAddr, asked: &Asked, mode: EraMode) -> tern_mcp::Result<Client> {
    let transport = HttpClientTransport::builder(url(addr)).build().unwrap();
    connect_through(Arc::new(transport), asked, mode).await
}

async fn connect_through(
    transport: Arc<HttpClientTransport>,
    asked: &Asked,
    mode: EraMode,
) -> tern_mcp::Result<Client> {
    recording_client(asked)
        .era(mode)
        .limits(tern_tests::tuned(|l: &mut ClientLimits| {
            l.discovery_timeout = Duration::from_secs(5)
        }))
        .connect(transport)
        .await
}

#[tokio::test]
async fn discovery_against_tern_over_http_speaks_2026_07_28() {
    let addr = serve(HttpServer::new(provisioner())).await;
    let asked = Asked::default();
    let client = connect(addr, &asked, EraMode::Auto).await.unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "provision in eu-west-1 over 2026-07-28");
    assert_eq!(asked.keys(), vec![Some("region".to_owned())]);
}

#[tokio::test]
async fn one_callback_answers_input_requests_and_a_sessions_elicitation_over_http() {
    let addr = serve(HttpServer::new(provisioner())).await;
    let asked = Asked::default();
    let modern = connect(addr, &asked, EraMode::Stateless).await.unwrap();
    let legacy = connect(addr, &asked, EraMode::Session).await.unwrap();
    assert_eq!(legacy.protocol_version(), "2025-11-25");
    for (client, era) in [(&modern, "2026-07-28"), (&legacy, "2025-11-25")] {
        let result = client
            .call_tool("provision", json!({"name": "orders"}))
            .await
            .unwrap();
        assert_eq!(
            text_of(&result),
            format!("provision in eu-west-1 over {era}")
        );
    }
    // The same callback, once with the input key, once for the server's own request.
    assert_eq!(asked.keys(), vec![Some("region".to_owned()), None]);
}

#[tokio::test]
async fn a_session_serves_many_calls_and_concurrent_elicitations() {
    let addr = serve(HttpServer::new(provisioner())).await;
    let asked = Asked::default();
    let client = connect(addr, &asked, EraMode::Session).await.unwrap();
    let calls = (0..8).map(|_| client.call_tool("provision", json!({"name": "orders"})));
    for result in futures_util::future::join_all(calls).await {
        assert_eq!(
            text_of(&result.unwrap()),
            "provision in eu-west-1 over 2025-11-25"
        );
    }
    assert_eq!(asked.keys().len(), 8);
}

#[tokio::test]
async fn a_client_opens_a_new_session_when_the_server_forgot_its_own() {
    let http = HttpServer::new(provisioner()).limits(tern_tests::tuned(|l: &mut HttpLimits| {
        l.session_idle_timeout = Duration::from_millis(50)
    }));
    let addr = serve(http).await;
    let asked = Asked::default();
    let client = connect(addr, &asked, EraMode::Session).await.unwrap();
    let call = || client.call_tool("provision", json!({"name": "orders"}));
    assert!(call().await.is_ok());
    // The session expires; the next call gets 404, and the transport starts over.
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(
        text_of(&call().await.unwrap()),
        "provision in eu-west-1 over 2025-11-25"
    );
    // Several calls hitting the 404 at once all complete.
    tokio::time::sleep(Duration::from_millis(120)).await;
    let calls = futures_util::future::join_all((0..4).map(|_| call())).await;
    assert!(calls.iter().all(Result::is_ok), "{calls:?}");
    assert_eq!(asked.keys().len(), 6);
}

#[tokio::test]
async fn an_input_required_result_on_a_legacy_http_session_is_32603() {
    let server = Server::builder("modern-only-tool", "1")
        .handle::<method::CallTool, _, _>(|_ctx, _params| async move {
            Ok(ask::input_required([("region", region_form())], None).into())
        })
        .build()
        .unwrap();
    let addr = serve(HttpServer::new(server)).await;
    let client = connect(addr, &Asked::default(), EraMode::Session)
        .await
        .unwrap();
    let err = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc().map(|e| e.code), Some(-32603), "{err:?}");
}

// ---------------------------------------------------------------------------------------
// A scripted server that knows only 2025-11-25, as the SDKs of that era answer: a request
// outside a session is refused, and a call asks with `elicitation/create` on its stream.

/// How the legacy server refuses a request that is not `initialize` and names no session.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    /// 400 with a JSON-RPC error that is not a 2026-07-28 one.
    BadRequest,
    /// 404 with a plain-text body.
    NotFound,
    /// 405 with no body.
    MethodNotAllowed,
    /// 400 with -32022 listing these versions: a modern error, whose list decides.
    Unsupported(&'static [&'static str]),
}

const SESSION: &str = "legacy-session-1";

#[derive(Default)]
struct Seen {
    refused: usize,
    deletes: usize,
    initialized: usize,
    /// `(method, MCP-Protocol-Version, Mcp-Session-Id)` of every message in the session.
    session_messages: Vec<(String, Option<String>, Option<String>)>,
    waiting: HashMap<i64, oneshot::Sender<Value>>,
}

#[derive(Clone)]
struct Legacy {
    refusal: Refusal,
    seen: Arc<Mutex<Seen>>,
    next_id: Arc<AtomicUsize>,
}

fn header(request: &Request, name: &str) -> Option<String> {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn json_response(status: u16, value: &Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(value.to_string()))
        .unwrap()
}

async fn legacy_post(State(server): State<Legacy>, request: Request) -> Response {
    let version = header(&request, "mcp-protocol-version");
    let session = header(&request, "mcp-session-id");
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap();
    let message: Value = serde_json::from_slice(&bytes).unwrap();
    let method = message["method"].as_str().unwrap_or("response").to_owned();
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if method == "initialize" {
        let result = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "old", "version": "0.9"}
        }});
        let mut response = json_response(200, &result);
        response
            .headers_mut()
            .insert("mcp-session-id", SESSION.parse().unwrap());
        return response;
    }
    if session.as_deref() != Some(SESSION) {
        server.seen.lock().unwrap().refused += 1;
        return match server.refusal {
            Refusal::BadRequest => json_response(
                400,
                &json!({"jsonrpc": "2.0", "id": null, "error":
                    {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
            ),
            Refusal::NotFound => Response::builder()
                .status(404)
                .body(Body::from("Not Found"))
                .unwrap(),
            Refusal::MethodNotAllowed => {
                Response::builder().status(405).body(Body::empty()).unwrap()
            }
            Refusal::Unsupported(supported) => json_response(
                400,
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": supported, "requested": "2026-07-28"}}}),
            ),
        };
    }
    let mut seen = server.seen.lock().unwrap();
    seen.session_messages
        .push((method.clone(), version, session));
    match method.as_str() {
        "notifications/initialized" => {
            seen.initialized += 1;
            Response::builder().status(202).body(Body::empty()).unwrap()
        }
        "response" => {
            let answered = message["id"].as_i64().and_then(|i| seen.waiting.remove(&i));
            if let Some(tx) = answered {
                let _ = tx.send(message["result"].clone());
            }
            Response::builder().status(202).body(Body::empty()).unwrap()
        }
        "tools/call" => {
            // Ask on the call's stream, wait for the POSTed answer, then respond.
            let ask_id = 1000 + server.next_id.fetch_add(1, Ordering::Relaxed) as i64;
            let (tx, rx) = oneshot::channel();
            seen.waiting.insert(ask_id, tx);
            let ask = json!({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create",
                "params": {"message": "Which region?", "requestedSchema":
                    {"type": "object", "properties": {"region": {"type": "string"}}}}});
            let stream = futures_util::stream::unfold(
                (Some(ask), Some(rx), id),
                |(ask, rx, id)| async move {
                    let event = match (ask, rx) {
                        (Some(ask), rx) => {
                            return Some((
                                Ok::<_, std::convert::Infallible>(sse(&ask)),
                                (None, rx, id),
                            ));
                        }
                        (None, Some(rx)) => {
                            let answer = rx.await.unwrap_or(Value::Null);
                            let region = answer["content"]["region"].as_str().unwrap_or("?");
                            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
                                {"type": "text", "text": format!("legacy ok: region={region}")}]}})
                        }
                        (None, None) => return None,
                    };
                    Some((Ok(sse(&event)), (None, None, Value::Null)))
                },
            );
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        _ => json_response(
            200,
            &json!({"jsonrpc": "2.0", "id": id, "error":
                {"code": -32601, "message": "Method not found"}}),
        ),
    }
}

fn sse(message: &Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

async fn legacy_delete(State(server): State<Legacy>) -> Response {
    server.seen.lock().unwrap().deletes += 1;
    Response::builder().status(200).body(Body::empty()).unwrap()
}

async fn legacy_server(refusal: Refusal) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let state = Legacy {
        refusal,
        seen: Arc::default(),
        next_id: Arc::default(),
    };
    let seen = Arc::clone(&state.seen);
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(legacy_post).delete(legacy_delete),
        )
        .with_state(state);
    let addr = serve_app(app).await;
    (addr, seen)
}

#[tokio::test]
async fn discovery_falls_back_to_a_session_on_a_400_404_or_405_without_a_modern_error() {
    for refusal in [
        Refusal::BadRequest,
        Refusal::NotFound,
        Refusal::MethodNotAllowed,
    ] {
        let (addr, seen) = legacy_server(refusal).await;
        let asked = Asked::default();
        let client = connect(addr, &asked, EraMode::Auto).await.unwrap();
        assert_eq!(client.protocol_version(), "2025-11-25", "{refusal:?}");
        let result = client
            .call_tool("provision", json!({"name": "orders"}))
            .await
            .unwrap();
        assert_eq!(
            text_of(&result),
            "legacy ok: region=eu-west-1",
            "{refusal:?}"
        );
        // The server's elicitation/create reached the input-request callback.
        assert_eq!(asked.keys(), vec![None], "{refusal:?}");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.refused, 1, "one probe: {refusal:?}");
        assert_eq!(seen.initialized, 1);
        let methods: Vec<&str> = seen.session_messages.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(
            methods,
            ["notifications/initialized", "tools/call", "response"]
        );
        for (method, version, _) in &seen.session_messages {
            assert_eq!(version.as_deref(), Some("2025-11-25"), "{method}");
        }
    }
}

#[tokio::test]
async fn a_modern_error_in_a_refusal_is_read_as_the_servers_versions() {
    // 400 with -32022: a modern answer, whose list picks the era (a fallback on the
    // status alone would open a session for both).
    for (supported, era) in [
        (&["2025-11-25"][..], "2025-11-25"),
        (&["2026-07-28"][..], "2026-07-28"),
    ] {
        let (addr, seen) = legacy_server(Refusal::Unsupported(supported)).await;
        let client = connect(addr, &Asked::default(), EraMode::Auto)
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), era, "{supported:?}");
        assert_eq!(seen.lock().unwrap().refused, 1);
    }
}

#[tokio::test]
async fn the_era_found_is_remembered_in_the_era_cache_the_transports_share() {
    let (addr, seen) = legacy_server(Refusal::BadRequest).await;
    let builder = HttpClientTransport::builder(url(addr));
    let eras = EraCache::default();
    let shared = || {
        let transport = HttpClientTransport::builder(url(addr))
            .era_cache(eras.clone())
            .build()
            .unwrap();
        Arc::new(transport)
    };
    let one_transport = Arc::new(builder.clone().build().unwrap());
    let transports = [
        // Two clients of one transport, another transport of the same builder, and
        // two transports given the same cache.
        Arc::clone(&one_transport),
        one_transport,
        Arc::new(builder.build().unwrap()),
        shared(),
        shared(),
    ];
    for transport in transports {
        let client = connect_through(transport, &Asked::default(), EraMode::Auto)
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), "2025-11-25");
    }
    assert_eq!(seen.lock().unwrap().refused, 2, "probed once per cache");
    assert_eq!(seen.lock().unwrap().initialized, 5, "a session per client");

    eras.forget(&url(addr));
    connect_through(shared(), &Asked::default(), EraMode::Auto)
        .await
        .unwrap();
    assert_eq!(
        seen.lock().unwrap().refused,
        3,
        "a forgotten era is probed again"
    );
}

#[tokio::test]
async fn dropping_the_last_transport_clone_ends_the_session() {
    let (addr, seen) = legacy_server(Refusal::BadRequest).await;
    let client = connect(addr, &Asked::default(), EraMode::Session)
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().deletes, 0);
    drop(client);
    for _ in 0..500 {
        if seen.lock().unwrap().deletes == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no DELETE after the client was dropped");
}

#[tokio::test]
async fn a_legacy_only_server_without_sessions_fails_discovery_clearly() {
    // A server that refuses the probe with 400 and then refuses initialize too.
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(|| async { json_response(400, &json!({"error": "no"})) }),
    );
    let addr = serve_app(app).await;
    let err = connect(addr, &Asked::default(), EraMode::Auto)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(err.to_string().contains("400"), "{err}");
}

// ---------------------------------------------------------------------------------------
// The server's session rules, with a raw HTTP client.

#[tokio::test]
async fn initialize_opens_a_session_that_later_requests_name() {
    let addr = serve(HttpServer::new(provisioner())).await;
    let session = open_session(addr).await;
    assert_eq!(session.len(), 32, "{session}");
    assert_ne!(session, open_session(addr).await, "every session is new");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(
        addr,
        &legacy_headers(Some(&session)),
        &initialized.to_string(),
    )
    .await;
    assert_eq!(r.status, 202, "{r:?}");

    let ping = legacy_body(2, "ping", json!({}));
    let r = post(addr, &legacy_headers(Some(&session)), &ping).await;
    assert_eq!(
        (r.status, r.json()["result"].clone()),
        (200, json!({})),
        "{r:?}"
    );

    let r = post(addr, &legacy_headers(None), &ping).await;
    assert_eq!(
        (r.status, r.error_code()),
        (400, Some(-32600)),
        "no session: {r:?}"
    );
    let r = post(addr, &legacy_headers(Some("not-a-session")), &ping).await;
    assert_eq!(
        (r.status, r.error_code()),
        (404, Some(-32600)),
        "unknown: {r:?}"
    );
    let mut other_version = legacy_headers(Some(&session));
    set(
        &mut other_version,
        "MCP-Protocol-Version",
        Some("2025-06-18"),
    );
    let r = post(addr, &other_version, &ping).await;
    assert_eq!(
        (r.status, r.error_code()),
        (400, Some(-32600)),
        "version: {r:?}"
    );
}

#[tokio::test]
async fn a_session_request_for_an_unknown_method_is_a_200_error_not_a_404() {
    // A 404 would tell a 2025-11-25 client its session is gone.
    let addr = serve(HttpServer::new(provisioner())).await;
    let session = open_session(addr).await;
    let r = post(
        addr,
        &legacy_headers(Some(&session)),
        &legacy_body(3, "prompts/list", json!({})),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (200, Some(-32601)), "{r:?}");
}

#[tokio::test]
async fn delete_ends_a_session() {
    let addr = serve(HttpServer::new(provisioner())).await;
    let session = open_session(addr).await;
    let r = send(addr, "DELETE", &legacy_headers(Some(&session)), "").await;
    assert_eq!(r.status, 200, "{r:?}");
    let ping = legacy_body(2, "ping", json!({}));
    let r = post(addr, &legacy_headers(Some(&session)), &ping).await;
    assert_eq!(r.status, 404, "{r:?}");
    let r = send(addr, "DELETE", &legacy_headers(Some(&session)), "").await;
    assert_eq!(r.status, 404, "{r:?}");
    let r = send(addr, "DELETE", &legacy_headers(None), "").await;
    assert_eq!(r.status, 400, "{r:?}");
}

#[tokio::test]
async fn a_tool_asking_a_client_that_takes_no_stream_fails_at_once() {
    let addr = serve(HttpServer::new(provisioner())).await;
    let session = open_session(addr).await;
    let mut json_only = legacy_headers(Some(&session));
    set(&mut json_only, "Accept", Some("application/json"));
    let call = legacy_body(
        4,
        "tools/call",
        json!({"name": "provision", "arguments": {}}),
    );
    let r = tokio::time::timeout(Duration::from_secs(5), post(addr, &json_only, &call))
        .await
        .expect("answered without waiting for an answer that cannot come");
    assert_eq!((r.status, r.error_code()), (200, Some(-32603)), "{r:?}");
}

#[tokio::test]
async fn a_stateless_only_endpoint_has_no_sessions() {
    let addr = serve(HttpServer::new(provisioner()).stateless_only()).await;
    let r = post(addr, &legacy_headers(None), &initialize_body()).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{r:?}");
    assert_eq!(r.header("mcp-session-id"), None);
    for verb in ["GET", "DELETE"] {
        let r = send(addr, verb, &legacy_headers(None), "").await;
        assert_eq!(r.status, 405, "{verb}: {r:?}");
    }
}

/// A tool that streams "started" and then works for a minute; `stopped` fires when its
/// handler ends or is dropped, whichever comes first.
fn slow_streamer(stopped: Option<oneshot::Sender<()>>) -> Server {
    let stopped = Arc::new(Mutex::new(stopped));
    Server::builder("slow", "1")
        .handle::<method::CallTool, _, _>(move |ctx: RequestContext, _params| {
            let guard = Stopped(stopped.lock().unwrap().take());
            async move {
                let _guard = guard;
                // Stream something first, so the test knows the handler is running.
                ctx.notify::<method::LoggingMessage>(
                    tern_mcp::types::v2026_07_28::LoggingMessageNotificationParams::new(
                        json!("started"),
                        tern_mcp::types::v2026_07_28::LoggingLevel::Info,
                    ),
                );
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(CallToolResult::new(vec![ask::text("never sent")]).into())
            }
        })
        .build()
        .unwrap()
}

/// Calls the slow tool (request id 9) on `session`; returns its open stream once the
/// handler runs.
async fn start_slow_call(addr: SocketAddr, session: &str) -> tokio::net::TcpStream {
    use tokio::io::AsyncReadExt;
    let call = legacy_body(9, "tools/call", json!({"name": "slow", "arguments": {}}));
    let mut stream = http_support::open(addr, "POST", &legacy_headers(Some(session)), &call).await;
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("started") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream closed early");
        seen.extend_from_slice(&buf[..n]);
    }
    stream
}

#[tokio::test]
async fn a_full_endpoint_whose_sessions_are_all_busy_refuses_new_ones_with_503() {
    let addr = serve(
        HttpServer::new(slow_streamer(None))
            .limits(tern_tests::tuned(|l: &mut HttpLimits| l.max_sessions = 1)),
    )
    .await;
    let session = open_session(addr).await;
    let busy = start_slow_call(addr, &session).await;
    let r = post(addr, &legacy_headers(None), &initialize_body()).await;
    assert_eq!(r.status, 503, "{r:?}");
    // A dropped stream is not a cancellation on a session (the client may resume it):
    // once the client withdraws the call, the idle session makes room (the cap evicts it).
    drop(busy);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "gone"}});
    let r = post(addr, &legacy_headers(Some(&session)), &cancel.to_string()).await;
    assert_eq!(r.status, 202, "{r:?}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = post(addr, &legacy_headers(None), &initialize_body()).await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_sessions_cancelled_notification_stops_the_named_request() {
    let (stopped_tx, stopped_rx) = oneshot::channel::<()>();
    let addr = serve(HttpServer::new(slow_streamer(Some(stopped_tx)))).await;
    let session = open_session(addr).await;
    let stream = start_slow_call(addr, &session).await;
    // The stream stays open; the client withdraws the call by its JSON-RPC id.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "changed my mind"}});
    let r = post(addr, &legacy_headers(Some(&session)), &cancel.to_string()).await;
    assert_eq!(r.status, 202, "{r:?}");
    tokio::time::timeout(Duration::from_secs(5), stopped_rx)
        .await
        .expect("the handler was not stopped")
        .unwrap();
    drop(stream);
}

/// What a session server saw, in order: its requests, and when its standalone stream
/// opened.
#[derive(Clone, Default)]
struct Opening(Arc<Mutex<Vec<String>>>);

impl Opening {
    fn note(&self, what: &str) {
        self.0.lock().unwrap().push(what.to_owned());
    }
}

async fn opening_post(State(seen): State<Opening>, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).unwrap();
    let method = message["method"].as_str().unwrap_or("response").to_owned();
    seen.note(&method);
    match method.as_str() {
        "initialize" => Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .header("mcp-session-id", "s-1")
            .body(Body::from(
                json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "opening", "version": "0"}}})
                .to_string(),
            ))
            .unwrap(),
        "notifications/initialized" => Response::builder().status(202).body(Body::empty()).unwrap(),
        _ => json_response(
            200,
            &json!({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}),
        ),
    }
}

/// The standalone stream, slow to open: its head goes out after 300 ms.
async fn opening_get(State(seen): State<Opening>) -> Response {
    tokio::time::sleep(Duration::from_millis(300)).await;
    seen.note("standalone stream open");
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures_util::stream::pending::<
            Result<String, std::convert::Infallible>,
        >()))
        .unwrap()
}

#[tokio::test]
async fn a_session_starts_once_its_standalone_stream_is_open() {
    // A server sends to the session outside any request (a tool's elicitation) on the
    // standalone stream, and drops what it has no stream for: the client's first
    // request must not reach the server before that stream is open.
    let seen = Opening::default();
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(opening_post).get(opening_get))
        .with_state(seen.clone());
    let addr = serve_app(app).await;
    let client = connect(addr, &Asked::default(), EraMode::Session)
        .await
        .unwrap();
    client.list::<ListTools>(None).await.unwrap();
    assert_eq!(
        *seen.0.lock().unwrap(),
        [
            "initialize",
            "notifications/initialized",
            "standalone stream open",
            "tools/list"
        ]
    );
}
