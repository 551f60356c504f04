//! HTTP/2 against `HttpServer::serve`: hyper's HTTP/2 client completes the MRTR flow
//! over TLS (ALPN `h2`) and in clear with prior knowledge, and an HTTP/2 connection and
//! its streams are held to the budgets an HTTP/1.1 connection is: the header budget
//! until its first request, the idle budget between requests, the body and request
//! budgets per stream.

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tern_mcp::http::HttpLimits;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tern_mcp::http::HttpServer;
use tokio::net::TcpStream;

use crate::http_budgets::slow;
use crate::http_support::{body, mcp_headers};
use crate::http_tls::{serve_on_loopback, server, tls_config, tls_connector};

pub(crate) type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// An HTTP/2 connection to `addr` over TLS, ALPN `h2`, trusting `cert`; and whether the
/// connection has ended.
async fn h2_over_tls(
    addr: SocketAddr,
    cert: rustls::pki_types::CertificateDer<'static>,
) -> (SendRequest<Body>, tokio::task::JoinHandle<()>) {
    let connector = tls_connector(cert, b"h2");
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = connector.connect(name, tcp).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    handshake(TokioIo::new(tls)).await
}

/// An HTTP/2 connection to `addr` in clear, by prior knowledge.
async fn h2c(addr: SocketAddr) -> (SendRequest<Body>, tokio::task::JoinHandle<()>) {
    handshake(TokioIo::new(TcpStream::connect(addr).await.unwrap())).await
}

/// An HTTP/2 connection over `io`, driven by a task of its own; and that task.
pub(crate) async fn handshake<T>(io: T) -> (SendRequest<Body>, tokio::task::JoinHandle<()>)
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
        .await
        .unwrap();
    let driving = tokio::spawn(async move {
        let _ = conn.await;
    });
    (sender, driving)
}

/// POSTs `text` as a `tools/call` of `tool` on the stream's connection; the status and
/// the JSON body.
async fn call(sender: &mut SendRequest<Body>, uri: &str, tool: &str, text: String) -> (u16, Value) {
    let mut request = hyper::Request::post(uri);
    for (name, value) in mcp_headers("tools/call", Some(tool)) {
        request = request.header(name, value);
    }
    let request = request.body(Full::new(Bytes::from(text)).boxed()).unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// The MRTR flow by hand: the call, the server's question, the retry with the answer
/// and the echoed state, the result.
async fn mrtr_flow(sender: &mut SendRequest<Body>, uri: &str) {
    let first = body(
        1,
        "tools/call",
        json!({"name": "provision", "arguments": {}}),
    );
    let (status, answer) = call(sender, uri, "provision", first).await;
    assert_eq!(status, 200, "{answer}");
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert!(result["inputRequests"]["region"].is_object(), "{answer}");
    let retry = body(
        2,
        "tools/call",
        json!({
            "name": "provision",
            "arguments": {},
            "inputResponses": {"region": {"action": "accept", "content": {"region": "eu"}}},
            "requestState": result["requestState"],
        }),
    );
    let (status, answer) = call(sender, uri, "provision", retry).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "done over 2026-07-28",
        "{answer}"
    );
}

#[tokio::test]
async fn an_http2_client_completes_the_mrtr_flow_over_tls() {
    let (config, _, cert) = tls_config();
    let addr = serve_on_loopback(HttpServer::new(server()).tls(config)).await;
    let (mut sender, _conn) = h2_over_tls(addr, cert).await;
    let uri = format!("https://localhost:{}/mcp", addr.port());
    mrtr_flow(&mut sender, &uri).await;
}

#[tokio::test]
async fn an_http2_client_with_prior_knowledge_completes_the_flow_in_clear() {
    let addr = serve_on_loopback(HttpServer::new(server())).await;
    let (mut sender, _conn) = h2c(addr).await;
    let uri = format!("http://localhost:{}/mcp", addr.port());
    mrtr_flow(&mut sender, &uri).await;
    // The same listener still serves HTTP/1.1.
    let first = body(
        3,
        "tools/call",
        json!({"name": "provision", "arguments": {}}),
    );
    let headers = mcp_headers("tools/call", Some("provision"));
    let raw = crate::http_support::post(addr, &headers, &first).await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.json()["result"]["resultType"], "input_required");
}

#[tokio::test]
async fn an_http2_host_is_checked_from_its_authority() {
    let addr = serve_on_loopback(HttpServer::new(server())).await;
    let (mut sender, _conn) = h2c(addr).await;
    let mut request = hyper::Request::post(format!("http://evil.example:{}/mcp", addr.port()));
    for (name, value) in mcp_headers("tools/list", None) {
        request = request.header(name, value);
    }
    let text = body(1, "tools/list", json!({}));
    let request = request.body(Full::new(Bytes::from(text)).boxed()).unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 403);
}

/// How long until the connection driven by `conn` ends, at most `within`.
async fn until_ended(conn: tokio::task::JoinHandle<()>, within: Duration) -> Duration {
    let start = Instant::now();
    tokio::time::timeout(within, conn)
        .await
        .expect("the server kept the HTTP/2 connection open")
        .unwrap();
    start.elapsed()
}

#[tokio::test]
async fn an_http2_connection_is_closed_at_its_header_and_idle_budgets() {
    let http = HttpServer::new(server()).limits(tern_tests::tuned(|l: &mut HttpLimits| {
        l.header_timeout = Duration::from_millis(400);
        l.idle_timeout = Duration::from_millis(400);
    }));
    let addr = serve_on_loopback(http).await;
    // Connected, HTTP/2 settings exchanged, no request: the header budget.
    let (_sender, silent) = h2c(addr).await;
    let waited = until_ended(silent, Duration::from_secs(5)).await;
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    // One flow, then nothing: the idle budget.
    let (mut sender, conn) = h2c(addr).await;
    mrtr_flow(
        &mut sender,
        &format!("http://localhost:{}/mcp", addr.port()),
    )
    .await;
    let waited = until_ended(conn, Duration::from_secs(5)).await;
    assert!(waited < Duration::from_secs(2), "{waited:?}");
}

#[tokio::test]
async fn an_http2_stream_is_held_to_the_body_and_request_budgets() {
    let http = HttpServer::new(slow(Duration::from_secs(30))).limits(tern_tests::tuned(
        |l: &mut HttpLimits| {
            l.body_timeout = Duration::from_millis(300);
            l.request_timeout = Some(Duration::from_millis(300));
        },
    ));
    let addr = serve_on_loopback(http).await;
    let (mut sender, _conn) = h2c(addr).await;
    let uri = format!("http://localhost:{}/mcp", addr.port());

    // A body that starts and never ends: 400 at the body budget, the connection kept.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<hyper::body::Frame<Bytes>, _>>(1);
    tx.send(Ok(hyper::body::Frame::data(Bytes::from_static(
        b"{\"jsonrpc\"",
    ))))
    .await
    .unwrap();
    let stream = tokio_stream_of(rx);
    let mut request = hyper::Request::post(&uri);
    for (name, value) in mcp_headers("tools/call", Some("x")) {
        request = request.header(name, value);
    }
    let request = request.body(StreamBody::new(stream).boxed()).unwrap();
    let start = Instant::now();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 400);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    drop(tx);

    // A handler that outlives the request budget: 503 with -32001, on the same connection.
    let slow_call = body(2, "tools/call", json!({"name": "x", "arguments": {}}));
    let start = Instant::now();
    let (status, answer) = call(&mut sender, &uri, "x", slow_call).await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

/// The receiving end of `rx` as a stream of frames.
fn tokio_stream_of<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[tokio::test]
async fn a_draining_server_finishes_the_http2_streams_in_flight_then_closes() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let http = HttpServer::new(slow(Duration::from_millis(500)));
    let serving = tokio::spawn(http.serve(listener, async move {
        let _ = stopped.await;
    }));
    let (mut sender, conn) = h2c(addr).await;
    let uri = format!("http://localhost:{}/mcp", addr.port());
    let in_flight = tokio::spawn(async move {
        let text = body(1, "tools/call", json!({"name": "x", "arguments": {}}));
        call(&mut sender, &uri, "x", text).await
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    stop.send(()).unwrap();
    let (status, answer) = in_flight.await.unwrap();
    assert_eq!(status, 200, "{answer}");
    assert!(answer["result"]["content"].is_array(), "{answer}");
    until_ended(conn, Duration::from_secs(5)).await;
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server did not stop")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn http2_connections_count_against_the_connection_cap() {
    let http = HttpServer::new(slow(Duration::from_secs(2))).limits(tern_tests::tuned(
        |l: &mut HttpLimits| l.max_connections = 2,
    ));
    let addr = serve_on_loopback(http).await;
    let uri = format!("http://localhost:{}/mcp", addr.port());
    let mut busy = Vec::new();
    for id in 0..2 {
        let (mut sender, _conn) = h2c(addr).await;
        let uri = uri.clone();
        busy.push(tokio::spawn(async move {
            let text = body(id, "tools/call", json!({"name": "x", "arguments": {}}));
            let answered = call(&mut sender, &uri, "x", text).await;
            drop(_conn);
            answered
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Both connections are serving: the third is refused, not dropped.
    let text = body(9, "tools/call", json!({"name": "x", "arguments": {}}));
    let refused =
        crate::http_support::post(addr, &mcp_headers("tools/call", Some("x")), &text).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    for answered in busy {
        assert_eq!(answered.await.unwrap().0, 200);
    }
}

/// A fixed resource's contents are written once and shared by every answer: each
/// connection writes its own envelope around them, whole, over HTTP/2 and HTTP/1.1.
#[tokio::test]
async fn a_fixed_resource_is_answered_whole_over_both_versions() {
    let mcp = tern_mcp::mcp::McpServer::new("docs", "1");
    let text = "fixed \"contents\"\tof a file\n".repeat(10_000);
    mcp.resource("file:///fixed.md", "fixed")
        .mime_type("text/markdown")
        .contents(text.clone());
    let addr = serve_on_loopback(HttpServer::new(mcp.server().unwrap())).await;
    let read = body(7, "resources/read", json!({"uri": "file:///fixed.md"}));
    let headers = mcp_headers("resources/read", Some("file:///fixed.md"));

    let (mut sender, _conn) = h2c(addr).await;
    let mut request = hyper::Request::post(format!("http://localhost:{}/mcp", addr.port()));
    for (name, value) in &headers {
        request = request.header(name, value);
    }
    let request = request
        .body(Full::new(Bytes::from(read.clone())).boxed())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let over_h2: Value = serde_json::from_slice(&bytes).unwrap();

    let over_h1 = crate::http_support::post(addr, &headers, &read)
        .await
        .json();
    for answer in [over_h2, over_h1] {
        assert_eq!(answer["id"], 7);
        let result = &answer["result"];
        assert_eq!(result["resultType"], "complete", "{result}");
        assert_eq!(result["contents"][0]["text"], text.as_str());
        assert_eq!(result["contents"][0]["uri"], "file:///fixed.md");
    }
}
