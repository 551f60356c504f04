//! The HTTP endpoint under slow and greedy clients: every connection phase has a time
//! budget, and at the connection cap the longest-waiting idle connection makes room, so
//! well-behaved clients keep completing flows while an attacker holds sockets open.

use crate::http_support;
use tern_mcp::http::HttpLimits;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::client::Client;
use tern_mcp::http::HttpServer;
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{CallToolOutcome, method};
use tern_tests::seed;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use http_support::{body, mcp_headers, serve, url};

async fn provision() -> Server {
    seed::provision_server().build().unwrap()
}

async fn client(addr: std::net::SocketAddr) -> Client {
    let transport = HttpClientTransport::builder(url(addr)).build().unwrap();
    Client::builder("budget-test", "1.0")
        .on_elicitation(|_ctx, _params| async { Ok(seed::answer_region()) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

async fn one_flow(client: &Client) {
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .expect("the flow completes");
    assert!(!tern_tests::text_of(&result).is_empty());
}

/// The seed's server at a cap of `max_connections`, with a long header timeout: it is
/// the cap's eviction, not a timeout, that makes room.
async fn capped(max_connections: usize) -> std::net::SocketAddr {
    serve(
        HttpServer::new(provision().await).limits(tern_tests::tuned(|l: &mut HttpLimits| {
            l.header_timeout = Duration::from_secs(60);
            l.max_connections = max_connections;
        })),
    )
    .await
}

/// Reads until the server closes the connection; how long that took.
async fn until_closed(stream: &mut TcpStream, within: Duration) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server kept the connection open past {within:?}"
    );
    start.elapsed()
}

/// An open connection that has sent part of a request head.
async fn half_a_head(addr: std::net::SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .await
        .unwrap();
    stream
}

#[tokio::test]
async fn a_slowloris_connection_is_closed_within_the_header_timeout() {
    let budget = Duration::from_millis(300);
    let addr = serve(HttpServer::new(provision().await).limits(tern_tests::tuned(
        |l: &mut HttpLimits| l.header_timeout = budget,
    )))
    .await;
    let mut stream = half_a_head(addr).await;
    // A byte every 50 ms: steady progress, never a whole head.
    let dripping = {
        let mut writer = TcpStream::connect(addr).await.unwrap();
        tokio::spawn(async move {
            let _ = writer.write_all(b"POST /mcp HTTP/1.1\r\n").await;
            let start = Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                if writer.write_all(b"x").await.is_err() {
                    return start.elapsed();
                }
            }
        })
    };
    let took = until_closed(&mut stream, budget * 4).await;
    assert!(took >= budget / 2, "closed too early: {took:?}");
    let dripped = tokio::time::timeout(budget * 8, dripping)
        .await
        .expect("the dripping connection is closed too")
        .unwrap();
    // Closed within the header budget (plus a reaper tick and a drip or two).
    assert!(dripped < budget * 4, "{dripped:?}");
}

#[tokio::test]
async fn a_silent_connection_is_closed_within_the_header_timeout() {
    let budget = Duration::from_millis(300);
    let addr = serve(HttpServer::new(provision().await).limits(tern_tests::tuned(
        |l: &mut HttpLimits| l.header_timeout = budget,
    )))
    .await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    until_closed(&mut stream, budget * 4).await;
}

#[tokio::test]
async fn a_body_that_stops_half_way_is_closed_within_the_body_timeout() {
    let budget = Duration::from_millis(300);
    let addr = serve(HttpServer::new(provision().await).limits(tern_tests::tuned(
        |l: &mut HttpLimits| {
            l.header_timeout = Duration::from_secs(30);
            l.body_timeout = budget;
        },
    )))
    .await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 100\r\n");
    for (n, v) in mcp_headers("tools/list", None) {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n{\"jsonrpc\":");
    stream.write_all(head.as_bytes()).await.unwrap();
    until_closed(&mut stream, budget * 4).await;
}

#[tokio::test]
async fn a_keep_alive_connection_is_closed_after_the_idle_timeout_and_not_before() {
    let idle = Duration::from_millis(400);
    let addr = serve(HttpServer::new(provision().await).limits(tern_tests::tuned(
        |l: &mut HttpLimits| l.idle_timeout = idle,
    )))
    .await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = body(1, "tools/list", json!({}));
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        request.len()
    );
    for (n, v) in mcp_headers("tools/list", None) {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(&request);
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let n = stream.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let took = until_closed(&mut stream, idle * 5).await;
    assert!(took >= idle / 2, "closed before the idle timeout: {took:?}");
}

#[tokio::test]
async fn a_handler_over_the_request_timeout_is_dropped_and_its_connection_closed() {
    let (cancelled_tx, cancelled) = tokio::sync::oneshot::channel();
    let cancelled_tx = Arc::new(std::sync::Mutex::new(Some(cancelled_tx)));
    let server = Server::builder("slow", "1.0")
        .handle::<method::CallTool, _, _>(move |ctx: RequestContext, _params| {
            let cancelled_tx = Arc::clone(&cancelled_tx);
            let token = ctx.cancellation().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                if let Some(tx) = cancelled_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
            });
            // Never answers: only the request timeout ends it.
            std::future::pending::<Result<CallToolOutcome, tern_mcp::jsonrpc::RpcError>>()
        })
        .build()
        .unwrap();
    let budget = Duration::from_millis(300);
    let addr = serve(
        HttpServer::new(server).limits(tern_tests::tuned(|l: &mut HttpLimits| {
            l.request_timeout = Some(budget)
        })),
    )
    .await;
    let started = Instant::now();
    let raw = http_support::post(
        addr,
        &mcp_headers("tools/call", Some("anything")),
        &body(
            1,
            "tools/call",
            json!({"name": "anything", "arguments": {}}),
        ),
    )
    .await;
    assert_eq!(raw.status, 0, "no answer: the connection was closed");
    assert!(started.elapsed() < budget * 5, "{:?}", started.elapsed());
    tokio::time::timeout(Duration::from_secs(5), cancelled)
        .await
        .expect("the handler saw its cancellation")
        .unwrap();
}

#[tokio::test]
async fn good_flows_complete_while_two_thousand_slow_connections_are_open() {
    let addr = capped(500).await;
    let mut slow = Vec::with_capacity(2_000);
    for _ in 0..2_000 {
        slow.push(half_a_head(addr).await);
    }
    let client = client(addr).await;
    let started = Instant::now();
    for _ in 0..20 {
        tokio::time::timeout(Duration::from_secs(10), one_flow(&client))
            .await
            .expect("a good flow is not starved by slow connections");
    }
    // 20 flows in well under the header timeout: nobody waited for one to expire.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The attacker's connections beyond the cap were closed to make room.
    let mut closed = 0;
    for stream in &mut slow {
        let mut buf = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(1), stream.read(&mut buf)).await
        {
            closed += 1;
        }
    }
    assert!(
        closed >= 1_500,
        "only {closed} of 2,000 slow connections were closed"
    );
}

#[tokio::test]
async fn a_new_connection_evicted_before_its_first_byte_refuses_a_late_request_with_503() {
    let addr = capped(1).await;
    let mut late = TcpStream::connect(addr).await.unwrap();
    // Past the time a connection may wait in its head before the cap closes it for a
    // newer one.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let text = body(
        7,
        "tools/call",
        json!({"name": "provision", "arguments": {"name": "orders"}}),
    );
    let headers = mcp_headers("tools/call", Some("provision"));
    let newer = http_support::post(addr, &headers, &text).await;
    assert_ne!(
        newer.status, 503,
        "the newer connection took the place: {}",
        newer.body
    );
    // The evicted connection's request, sent only now (as a client's request on its
    // way when the cap chose it would arrive): refused, not reset.
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in &headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    ));
    late.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), late.read_to_end(&mut raw))
        .await
        .expect("answered in time")
        .expect("answered, not reset");
    let refused = http_support::parse_raw(&raw);
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["id"], 7);
}

/// The outcome of a caller's flows while its server shuts down.
#[derive(Debug, Default)]
struct Tally {
    completed: usize,
    refused: usize,
    lost: Vec<String>,
}

#[tokio::test]
async fn a_sigterm_during_load_loses_no_request() {
    let (mut server, addr) = http_support::provision_child().await;
    let pid = server.id().unwrap();
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(client(addr).await);
    }
    let callers: Vec<_> = clients
        .into_iter()
        .map(|client| {
            tokio::spawn(async move {
                let mut tally = Tally::default();
                loop {
                    match client
                        .call_tool("provision", json!({"name": "orders"}))
                        .await
                    {
                        Ok(_) => tally.completed += 1,
                        // The listener is closed: this caller would go to another instance.
                        Err(tern_mcp::Error::Transport(e)) if e.message().contains("onnect") => {
                            tally.refused += 1;
                            return tally;
                        }
                        Err(other) => {
                            tally.lost.push(other.to_string());
                            return tally;
                        }
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    tern_tests::signal(pid, "-TERM");
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("the server drains and exits")
        .unwrap();
    let mut total = Tally::default();
    for caller in callers {
        let tally = tokio::time::timeout(Duration::from_secs(30), caller)
            .await
            .expect("every caller ends once the server is gone")
            .unwrap();
        total.completed += tally.completed;
        total.refused += tally.refused;
        total.lost.extend(tally.lost);
    }
    println!("SIGTERM under load: {total:?}");
    assert!(
        status.success(),
        "the server drained and exited cleanly: {status:?}"
    );
    assert!(total.completed > 0);
    assert_eq!(
        total.refused, 8,
        "each caller ended on a refused connection"
    );
    assert!(total.lost.is_empty(), "lost: {:?}", total.lost);
}

/// A SIGTERM sent on the word that the endpoint listens must drain it, never kill the
/// process: `shutdown_signal()` watches from the call, not from the first poll (which
/// comes after the announcement). Had it not, this SIGTERM would end the test process.
#[tokio::test]
async fn a_sigterm_before_the_first_poll_is_not_lost() {
    let shutdown = tern_mcp::server::shutdown_signal();
    tern_tests::signal(std::process::id(), "-TERM");
    tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .expect("the SIGTERM sent before the first poll resolves it");
}

/// `http` as an app serves it: its router, under axum's server, on loopback.
async fn serve_router(http: HttpServer) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = http.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// A tool that takes `for_` to answer.
pub(crate) fn slow(for_: Duration) -> Server {
    Server::builder("slow", "1")
        .handle::<method::CallTool, _, _>(move |_ctx: RequestContext, _params| async move {
            tokio::time::sleep(for_).await;
            Ok(tern_mcp::types::v2026_07_28::CallToolResult::new(Vec::new()).into())
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_router_holds_a_request_to_the_body_and_request_budgets() {
    let http = HttpServer::new(slow(Duration::from_secs(30))).limits(tern_tests::tuned(
        |l: &mut HttpLimits| {
            l.body_timeout = Duration::from_millis(300);
            l.request_timeout = Some(Duration::from_millis(300));
        },
    ));
    let addr = serve_router(http).await;
    // A body announced and never sent: 400 at the body budget.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let start = Instant::now();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("answered within the body budget")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // A handler past the request budget: 503 with -32001.
    let start = Instant::now();
    let text = body(1, "tools/call", json!({"name": "x", "arguments": {}}));
    let raw = http_support::post(addr, &mcp_headers("tools/call", Some("x")), &text).await;
    assert_eq!(raw.status, 503, "{}", raw.body);
    assert_eq!(raw.error_code(), Some(-32001));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn the_router_refuses_requests_past_its_cap_with_503_and_retry_after() {
    let http = HttpServer::new(slow(Duration::from_secs(2))).limits(tern_tests::tuned(
        |l: &mut HttpLimits| l.max_connections = 1,
    ));
    let addr = serve_router(http).await;
    let text = body(1, "tools/call", json!({"name": "x", "arguments": {}}));
    let headers = mcp_headers("tools/call", Some("x"));
    let busy = {
        let (headers, text) = (headers.clone(), text.clone());
        tokio::spawn(async move { http_support::post(addr, &headers, &text).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = http_support::post(addr, &headers, &text).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.error_code(), Some(-32000));
    // The request holding the slot is answered, and the slot freed.
    assert_eq!(busy.await.unwrap().status, 200);
    assert_eq!(http_support::post(addr, &headers, &text).await.status, 200);
}
