//! What a 2025-11-25 session hears besides its results, against the notifier in a
//! child process (`session_server`) over loopback HTTP and over stdio: progress and log
//! notifications on a call's stream, `logging/setLevel` filtering them, resource
//! updates reaching exactly the subscribers of a URI (in both eras), the session's GET
//! stream resumed with `Last-Event-ID`, and the opt-in direct-form shim.

use crate::http_support;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_tests::text_of;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use http_support::{
    SseSocket, body, initialize_body, legacy_body, legacy_headers, mcp_headers, post, set,
};

/// The notifier serving HTTP in a child process (killed on drop).
pub(crate) async fn http_child(args: &[&str]) -> (tokio::process::Child, SocketAddr) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_session_server"));
    command.args(["--http", "127.0.0.1:0"]).args(args);
    http_support::listening_child(command, "listening on http://").await
}

/// Opens a session (initialize, initialized); its id.
pub(crate) async fn session(addr: SocketAddr) -> String {
    let mut h = legacy_headers(None);
    set(&mut h, "MCP-Protocol-Version", None);
    let r = post(addr, &h, &initialize_body()).await;
    assert_eq!(r.status, 200, "{r:?}");
    let id = r.header("mcp-session-id").unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(addr, &legacy_headers(Some(&id)), &initialized.to_string()).await;
    assert_eq!(r.status, 202, "{r:?}");
    id
}

pub(crate) async fn call(
    addr: SocketAddr,
    session: &str,
    id: i64,
    method: &str,
    params: Value,
) -> Value {
    let r = post(
        addr,
        &legacy_headers(Some(session)),
        &legacy_body(id, method, params),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

/// `report` called with a progress token: the messages of its SSE stream.
async fn report(addr: SocketAddr, session: &str, id: i64) -> Vec<Value> {
    let params = json!({"name": "report", "arguments": {}, "_meta": {"progressToken": "p"}});
    let r = post(
        addr,
        &legacy_headers(Some(session)),
        &legacy_body(id, "tools/call", params),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.events()
}

fn progress_of(messages: &[Value]) -> Vec<(Value, Value)> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            (
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].clone(),
            )
        })
        .collect()
}

fn log_levels(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn progress_and_logs_reach_a_session_over_http_and_set_level_filters_the_logs() {
    let (_child, addr) = http_child(&[]).await;
    let id = session(addr).await;
    let messages = report(addr, &id, 2).await;
    // `_meta` with only a progress token is a session request, not a 2026-07-28 one.
    assert_eq!(
        progress_of(&messages),
        [1, 2, 3]
            .map(|n| (json!("p"), json!(f64::from(n))))
            .to_vec()
    );
    assert_eq!(log_levels(&messages), ["debug", "info", "warning"]);
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 2);
    assert_eq!(last["result"]["content"][0]["text"], "reported");

    let set = call(addr, &id, 3, "logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(set["result"], json!({}), "{set}");
    assert_eq!(log_levels(&report(addr, &id, 4).await), ["info", "warning"]);
    call(addr, &id, 5, "logging/setLevel", json!({"level": "error"})).await;
    assert!(log_levels(&report(addr, &id, 6).await).is_empty());
    let bad = call(addr, &id, 7, "logging/setLevel", json!({"level": "loud"})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test]
async fn progress_and_logs_reach_a_session_over_stdio_and_set_level_filters_the_logs() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_session_server"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    // Reads messages up to the response with `id`.
    async fn until(
        lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
        id: i64,
    ) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            let done = message["id"] == id && message.get("method").is_none();
            seen.push(message);
            if done {
                return seen;
            }
        }
    }
    send(serde_json::from_str(&initialize_body()).unwrap()).await;
    until(&mut lines, 1).await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let report = json!({"name": "report", "arguments": {}, "_meta": {"progressToken": 9}});
    send(serde_json::from_str(&legacy_body(2, "tools/call", report.clone())).unwrap()).await;
    let messages = until(&mut lines, 2).await;
    assert_eq!(
        progress_of(&messages),
        [1, 2, 3].map(|n| (json!(9), json!(f64::from(n)))).to_vec()
    );
    assert_eq!(log_levels(&messages), ["debug", "info", "warning"]);
    send(
        serde_json::from_str(&legacy_body(
            3,
            "logging/setLevel",
            json!({"level": "warning"}),
        ))
        .unwrap(),
    )
    .await;
    assert_eq!(
        until(&mut lines, 3).await.last().unwrap()["result"],
        json!({})
    );
    send(serde_json::from_str(&legacy_body(4, "tools/call", report)).unwrap()).await;
    assert_eq!(log_levels(&until(&mut lines, 4).await), ["warning"]);
}

/// `resources/updated` notifications among `messages`, by URI.
pub(crate) fn updated(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| m["params"]["uri"].as_str().unwrap().to_owned())
        .collect()
}

pub(crate) fn get_headers(session: &str, last_event_id: Option<&str>) -> Vec<(String, String)> {
    let mut h = legacy_headers(Some(session));
    set(&mut h, "Accept", Some("text/event-stream"));
    set(&mut h, "Last-Event-ID", last_event_id);
    h
}

pub(crate) async fn touch(addr: SocketAddr, session: &str, id: i64, uri: &str) {
    let r = call(
        addr,
        session,
        id,
        "tools/call",
        json!({"name": "touch", "arguments": {"uri": uri}}),
    )
    .await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        format!("touched {uri}"),
        "{r}"
    );
}

#[tokio::test]
async fn a_session_subscribed_to_one_uri_hears_its_updates_and_not_anothers() {
    let (_child, addr) = http_child(&[]).await;
    let id = session(addr).await;
    let other = session(addr).await;
    let r = call(
        addr,
        &id,
        2,
        "resources/subscribe",
        json!({"uri": "note://a"}),
    )
    .await;
    assert_eq!(r["result"], json!({}), "{r}");
    call(
        addr,
        &other,
        2,
        "resources/subscribe",
        json!({"uri": "note://b"}),
    )
    .await;
    let mut stream = SseSocket::open(addr, "GET", &get_headers(&id, None), "").await;
    assert_eq!(stream.status, 200);
    let priming = stream.next().await.unwrap();
    assert!(
        priming.id.is_some() && priming.retry.is_some(),
        "{priming:?}"
    );
    touch(addr, &id, 3, "note://b").await;
    touch(addr, &id, 4, "note://a").await;
    let (_, heard) = stream.next_message().await.unwrap();
    assert_eq!(updated(&[heard]), ["note://a"]);
    assert!(
        stream.quiet_for(Duration::from_millis(300)).await,
        "note://b reached a's stream"
    );

    // Unsubscribed, the session hears nothing more.
    call(
        addr,
        &id,
        5,
        "resources/unsubscribe",
        json!({"uri": "note://a"}),
    )
    .await;
    touch(addr, &id, 6, "note://a").await;
    assert!(stream.quiet_for(Duration::from_millis(300)).await);
}

#[tokio::test]
async fn a_listen_stream_hears_the_uris_it_named_and_not_others() {
    let (_child, addr) = http_child(&[]).await;
    let params = json!({"notifications": {"resourceSubscriptions": ["note://a"]}});
    let mut h = mcp_headers("subscriptions/listen", None);
    set(&mut h, "Accept", Some("text/event-stream"));
    let mut stream =
        SseSocket::open(addr, "POST", &h, &body(1, "subscriptions/listen", params)).await;
    let (_, ack) = stream.next_message().await.unwrap();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["note://a"])
    );
    for (n, uri) in [(2, "note://b"), (3, "note://a")] {
        let args = json!({"name": "touch", "arguments": {"uri": uri}});
        let r = post(
            addr,
            &mcp_headers("tools/call", Some("touch")),
            &body(n, "tools/call", args),
        )
        .await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let (_, heard) = stream.next_message().await.unwrap();
    assert_eq!(updated(&[heard]), ["note://a"]);
    assert!(stream.quiet_for(Duration::from_millis(300)).await);
}

#[tokio::test]
async fn a_dropped_get_stream_resumed_with_last_event_id_loses_nothing_and_repeats_nothing() {
    let (_child, addr) = http_child(&[]).await;
    let id = session(addr).await;
    call(
        addr,
        &id,
        2,
        "resources/subscribe",
        json!({"uri": "note://a"}),
    )
    .await;
    let mut stream = SseSocket::open(addr, "GET", &get_headers(&id, None), "").await;
    stream.next().await.unwrap(); // priming
    for n in 0..3 {
        touch(addr, &id, 10 + n, "note://a").await;
    }
    let mut last = None;
    for _ in 0..2 {
        let (event_id, message) = stream.next_message().await.unwrap();
        assert_eq!(updated(&[message]), ["note://a"]);
        last = event_id;
    }
    // The client goes away mid-stream, after two of three; three more happen meanwhile.
    drop(stream);
    for n in 0..3 {
        touch(addr, &id, 20 + n, "note://a").await;
    }
    let last = last.expect("every event has an id");
    let mut resumed = SseSocket::open(addr, "GET", &get_headers(&id, Some(&last)), "").await;
    assert_eq!(resumed.status, 200);
    let mut ids = Vec::new();
    for _ in 0..4 {
        let (event_id, message) = resumed.next_message().await.unwrap();
        assert_eq!(updated(&[message]), ["note://a"]);
        ids.push(event_id.unwrap());
    }
    assert!(
        resumed.quiet_for(Duration::from_millis(300)).await,
        "no duplicate, nothing extra"
    );
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(unique.len(), 4, "{ids:?}");
    assert!(!ids.contains(&last), "{ids:?} repeats {last}");
}

#[tokio::test]
async fn a_session_call_whose_stream_drops_goes_on_and_its_response_is_resumed() {
    let (_child, addr) = http_child(&[]).await;
    let id = session(addr).await;
    let call = legacy_body(7, "tools/call", json!({"name": "wait", "arguments": {}}));
    let mut stream = SseSocket::open(addr, "POST", &legacy_headers(Some(&id)), &call).await;
    let (last, started) = stream.next_message().await.unwrap();
    assert_eq!(started["params"]["data"], "started", "{started}");
    // The connection drops before the response: on a session that is no cancellation.
    drop(stream);
    let last = last.expect("every event has an id");
    let mut resumed = SseSocket::open(addr, "GET", &get_headers(&id, Some(&last)), "").await;
    let (_, response) = resumed.next_message().await.unwrap();
    assert_eq!(response["id"], 7, "{response}");
    assert_eq!(response["result"]["content"][0]["text"], "waited");
    // The call's stream ends with its response.
    assert!(resumed.next().await.is_none());
}

#[tokio::test]
async fn get_without_a_session_or_sse_is_refused_and_a_stateless_only_endpoint_has_none() {
    let (_child, addr) = http_child(&[]).await;
    let id = session(addr).await;
    let mut h = get_headers(&id, None);
    set(&mut h, "Accept", Some("application/json"));
    assert_eq!(http_support::send(addr, "GET", &h, "").await.status, 406);
    let mut h = get_headers(&id, None);
    set(
        &mut h,
        "Mcp-Session-Id",
        Some("0123456789abcdef0123456789abcdef"),
    );
    assert_eq!(http_support::send(addr, "GET", &h, "").await.status, 404);
    set(&mut h, "Mcp-Session-Id", None);
    assert_eq!(http_support::send(addr, "GET", &h, "").await.status, 400);

    let modern =
        tern_mcp::http::HttpServer::new(tern_tests::notifier::notifier(true).server().unwrap())
            .stateless_only();
    let addr = http_support::serve(modern).await;
    let r = http_support::send(addr, "GET", &get_headers(&id, None), "").await;
    assert_eq!(r.status, 405);
}

async fn session_client(addr: SocketAddr) -> Client {
    let transport = HttpClientTransport::builder(http_support::url(addr).as_str())
        .build()
        .unwrap();
    Client::builder("c", "1")
        .on_elicitation(|_ctx, params| async move {
            let tern_mcp::types::v2026_07_28::ElicitRequestParams::Form(form) = params else {
                return Ok(tern_mcp::ask::decline());
            };
            let field = form
                .requested_schema
                .properties
                .keys()
                .next()
                .cloned()
                .unwrap_or_default();
            let value = if field == "name" { "Ada" } else { "teal" };
            Ok(tern_mcp::ask::accept([(field.as_str(), value)]))
        })
        .era(EraMode::Session)
        .connect(std::sync::Arc::new(transport))
        .await
        .unwrap()
}

#[tokio::test]
async fn the_opt_in_shim_runs_a_direct_form_multi_round_tool_on_a_session() {
    let (_child, addr) = http_child(&[]).await;
    let client = session_client(addr).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    let done = client.call_tool("two_questions", json!({})).await.unwrap();
    assert_eq!(text_of(&done), "Ada likes teal");
}

#[tokio::test]
async fn without_the_shim_the_same_tool_is_an_internal_error_on_a_session() {
    let (_child, addr) = http_child(&["--no-fulfil"]).await;
    let client = session_client(addr).await;
    let err = client
        .call_tool("two_questions", json!({}))
        .await
        .unwrap_err();
    let tern_mcp::Error::Rpc(rpc) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(rpc.code, -32603, "{err}");
}

/// tern's client listening to tern's notifier: `subscriptions/listen` in 2026-07-28,
/// `resources/subscribe` and the session's GET stream in 2025-11-25; the same API.
async fn listens_to_one_uri(mode: EraMode, expected_version: &str) {
    let (_child, addr) = http_child(&[]).await;
    let transport = HttpClientTransport::builder(http_support::url(addr).as_str())
        .build()
        .unwrap();
    let client = Client::builder("c", "1")
        .era(mode)
        .connect(std::sync::Arc::new(transport))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), expected_version);
    let mut filter = tern_mcp::types::v2026_07_28::SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec!["note://a".into()]);
    let mut listener = client.listen(filter).await.unwrap();
    for uri in ["note://b", "note://a"] {
        client
            .call_tool("touch", json!({"uri": uri}))
            .await
            .unwrap();
    }
    let heard = tokio::time::timeout(Duration::from_secs(10), listener.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        heard,
        tern_mcp::client::Notice::ResourceUpdated("note://a".into())
    );
    let more = tokio::time::timeout(Duration::from_millis(300), listener.next()).await;
    assert!(more.is_err(), "heard more: {more:?}");
}

#[tokio::test]
async fn the_client_listens_to_one_uri_statelessly() {
    listens_to_one_uri(EraMode::Auto, "2026-07-28").await;
}

#[tokio::test]
async fn the_client_listens_to_one_uri_in_a_session() {
    listens_to_one_uri(EraMode::Session, "2025-11-25").await;
}

/// A low-level server whose `tools/call` asks for a region on every round (the direct
/// form), fulfilled on sessions under `policy`; the client's answers take `answer_delay`.
async fn always_asking_on_a_session(
    policy: tern_mcp::server::SessionInput,
    answer_delay: Duration,
) -> (tern_mcp::Error, usize) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let server = tern_mcp::server::Server::builder("asker", "1")
        .handle::<tern_mcp::types::v2026_07_28::method::CallTool, _, _>(|_ctx, _params| async {
            let form = tern_mcp::ask::elicit_form(
                "Region?",
                json!({"type": "object", "properties": {"region": {"type": "string"}}}),
            )
            .unwrap();
            Ok(tern_mcp::ask::input_required([("region", form)], Some("again")).into())
        })
        .fulfil_input_on_sessions(policy)
        .build()
        .unwrap();
    let (client_end, server_end) = tern_mcp::transport::memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    let asked = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&asked);
    let client = Client::builder("c", "1")
        .on_elicitation(move |_ctx, _params| {
            counter.fetch_add(1, Ordering::Relaxed);
            async move {
                tokio::time::sleep(answer_delay).await;
                Ok(tern_mcp::ask::accept([("region", "eu")]))
            }
        })
        .era(EraMode::Session)
        .connect(client_end)
        .await
        .unwrap();
    let err = client.call_tool("any", json!({})).await.unwrap_err();
    (err, asked.load(Ordering::Relaxed))
}

fn rpc_code(err: &tern_mcp::Error) -> i64 {
    match err {
        tern_mcp::Error::Rpc(rpc) => rpc.code,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_handler_that_never_stops_asking_on_a_session_is_stopped_at_the_round_cap() {
    let mut policy = tern_mcp::server::SessionInput::default();
    policy.max_rounds = 3;
    let (err, asked) = always_asking_on_a_session(policy, Duration::ZERO).await;
    assert_eq!(rpc_code(&err), -32603, "{err}");
    assert_eq!(asked, 3, "one question per round, three rounds");
}

#[tokio::test]
async fn a_session_client_that_never_answers_is_given_up_on_at_the_deadline() {
    let mut policy = tern_mcp::server::SessionInput::default();
    policy.max_rounds = 10;
    policy.timeout = Duration::from_millis(200);
    let started = std::time::Instant::now();
    let (err, asked) = always_asking_on_a_session(policy, Duration::from_secs(30)).await;
    assert_eq!(rpc_code(&err), -32603, "{err}");
    assert_eq!(asked, 1);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_listen_stream_naming_too_many_uris_is_refused() {
    let (_child, addr) = http_child(&[]).await;
    let uris: Vec<String> = (0..1001).map(|i| format!("note://{i}")).collect();
    let params = json!({"notifications": {"resourceSubscriptions": uris}});
    let r = post(
        addr,
        &mcp_headers("subscriptions/listen", None),
        &body(1, "subscriptions/listen", params),
    )
    .await;
    assert_eq!(r.error_code(), Some(-32602), "{r:?}");
}

#[tokio::test]
async fn a_draining_endpoint_ends_the_session_get_streams_instead_of_waiting_on_them() {
    let server = tern_mcp::mcp::McpServer::new("drain", "1")
        .server()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        tern_mcp::http::HttpServer::new(server).serve(listener, async {
            let _ = stopped.await;
        }),
    );
    let id = http_support::open_session(addr).await;
    let mut stream = SseSocket::open(addr, "GET", &get_headers(&id, None), "").await;
    assert_eq!(stream.status, 200);

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the drain ends the GET stream instead of waiting on it")
        .unwrap()
        .unwrap();
    // The stream was ended, not cut: what follows its priming event is its end.
    while stream.next().await.is_some() {}
}
