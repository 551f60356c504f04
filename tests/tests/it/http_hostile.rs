//! The HTTP endpoint and the message loop against what goes wrong inside them or
//! around them: a panic in a request's task (its handler, a layer, the token verifier)
//! is answered 500 with -32603 to the request's id and the connection serves its next
//! request; at the connection cap an idle kept-alive connection makes room at once;
//! listeners that never read hold up no other listener; a listen stream keeps about
//! what it asked for; the `everything` example drains on SIGTERM.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::http::{HttpLimits, HttpServer};
use tern_mcp::server::middleware::{Dispatch, Dispatched, Downstream, Middleware};
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::BoxFuture;
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, CallToolResult, method};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::http_support::{Raw, body, mcp_headers, serve};

/// A server whose `boom` tool panics and whose other tools answer.
fn touchy_server() -> tern_mcp::server::ServerBuilder {
    Server::builder("touchy", "1").handle::<method::CallTool, _, _>(
        |_ctx: RequestContext, params: CallToolRequestParams| async move {
            if params.name == "boom" {
                panic!("the boom tool panicked");
            }
            Ok(CallToolResult::new(vec![tern_mcp::ask::text("fine")]).into())
        },
    )
}

/// A layer that panics on calls of the `explode` tool, before the tool runs.
struct Explosive;

impl Middleware for Explosive {
    fn handle<'a>(
        &'a self,
        request: &'a Dispatch<'a>,
        next: Downstream<'a>,
    ) -> BoxFuture<'a, Dispatched> {
        Box::pin(async move {
            if request.target == Some("explode") {
                panic!("the layer panicked");
            }
            next.run().await
        })
    }
}

/// A token verifier that panics on the token `panic`, and accepts any other. The DPoP
/// check runs at the same place, in the request's task, and is caught by the same catch.
struct PanickyVerifier;

impl TokenVerifier for PanickyVerifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let panics = token == "panic";
        Box::pin(async move {
            if panics {
                panic!("the verifier panicked");
            }
            Ok(AuthInfo::new("a-client"))
        })
    }
}

/// One HTTP/1.1 connection kept alive across requests.
struct KeepAlive {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
}

impl KeepAlive {
    async fn connect(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.unwrap();
        Self {
            addr,
            reader: BufReader::new(stream),
        }
    }

    /// POSTs `text` with `headers` and reads its whole answer, leaving the connection
    /// open; within 10 s.
    async fn post(&mut self, headers: &[(String, String)], text: &str) -> Raw {
        let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n{text}", text.len()));
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes()).await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.answer())
            .await
            .expect("an answer within 10 s")
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).await.unwrap();
        assert!(!line.is_empty(), "the server closed the connection");
        line.trim_end().to_owned()
    }

    async fn answer(&mut self) -> Raw {
        let status_line = self.line().await;
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let line = self.line().await;
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        let raw = Raw {
            status,
            headers,
            body: String::new(),
        };
        let mut body = Vec::new();
        if let Some(len) = raw.header("content-length") {
            body.resize(len.parse().unwrap(), 0);
            self.reader.read_exact(&mut body).await.unwrap();
        } else {
            assert_eq!(raw.header("transfer-encoding"), Some("chunked"), "{raw:?}");
            loop {
                let size = usize::from_str_radix(&self.line().await, 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).await.unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        Raw {
            body: String::from_utf8(body).unwrap(),
            ..raw
        }
    }

    /// Whether the server closes the connection within `within` (reading what comes).
    async fn closed_within(&mut self, within: Duration) -> bool {
        let mut sink = Vec::new();
        matches!(
            tokio::time::timeout(within, self.reader.read_to_end(&mut sink)).await,
            Ok(Ok(_) | Err(_))
        )
    }
}

fn call(id: i64, tool: &str) -> String {
    body(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

/// A call of `tool`, as id `id`, on `conn`: its answer.
async fn call_on(conn: &mut KeepAlive, id: i64, tool: &str, extra: &[(&str, &str)]) -> Raw {
    let mut headers = mcp_headers("tools/call", Some(tool));
    headers.extend(extra.iter().map(|(n, v)| ((*n).into(), (*v).into())));
    conn.post(&headers, &call(id, tool)).await
}

/// 500 with -32603 to request `id`.
fn assert_panic_answered(raw: &Raw, id: i64) {
    assert_eq!(raw.status, 500, "{raw:?}");
    let answer = raw.json();
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
}

fn assert_fine(raw: &Raw, id: i64) {
    assert_eq!(raw.status, 200, "{raw:?}");
    let answer = raw.json();
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "fine", "{answer}");
}

#[tokio::test]
async fn a_handler_that_panics_is_answered_500_and_its_connection_serves_the_next_request() {
    let addr = serve(HttpServer::new(touchy_server().build().unwrap())).await;
    let mut conn = KeepAlive::connect(addr).await;
    assert_panic_answered(&call_on(&mut conn, 1, "boom", &[]).await, 1);
    assert_fine(&call_on(&mut conn, 2, "calm", &[]).await, 2);
    // Once more: the first catch left nothing broken behind it.
    assert_panic_answered(&call_on(&mut conn, 3, "boom", &[]).await, 3);
    assert_fine(&call_on(&mut conn, 4, "calm", &[]).await, 4);
}

#[tokio::test]
async fn a_handler_that_panics_on_a_stream_ends_it_with_internal_error() {
    let addr = serve(HttpServer::new(touchy_server().build().unwrap())).await;
    let mut conn = KeepAlive::connect(addr).await;
    // A client that takes only a stream gets its answer as one, whatever happens.
    let only_sse = [("Accept", "text/event-stream")];
    let mut headers = mcp_headers("tools/call", Some("boom"));
    crate::http_support::set(&mut headers, "Accept", Some(only_sse[0].1));
    let raw = conn.post(&headers, &call(1, "boom")).await;
    assert_eq!(raw.status, 200, "the stream had begun: {raw:?}");
    let answer = raw.events().pop().expect("the stream's last event");
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert_fine(&call_on(&mut conn, 2, "calm", &[]).await, 2);
}

#[tokio::test]
async fn a_layer_that_panics_is_answered_500_and_its_connection_serves_the_next_request() {
    let server = touchy_server().layer(Explosive).build().unwrap();
    let addr = serve(HttpServer::new(server)).await;
    let mut conn = KeepAlive::connect(addr).await;
    assert_panic_answered(&call_on(&mut conn, 7, "explode", &[]).await, 7);
    assert_fine(&call_on(&mut conn, 8, "calm", &[]).await, 8);
}

#[tokio::test]
async fn a_token_verifier_that_panics_is_answered_500_and_its_connection_serves_the_next_request() {
    let http =
        HttpServer::new(touchy_server().build().unwrap()).token_verifier(Arc::new(PanickyVerifier));
    let addr = serve(http).await;
    let mut conn = KeepAlive::connect(addr).await;
    let panics = [("Authorization", "Bearer panic")];
    assert_panic_answered(&call_on(&mut conn, 11, "calm", &panics).await, 11);
    let good = [("Authorization", "Bearer good")];
    assert_fine(&call_on(&mut conn, 12, "calm", &good).await, 12);
}

#[tokio::test]
async fn over_http2_a_handler_that_panics_is_answered_500_and_the_connection_serves_on() {
    use bytes::Bytes;
    use http_body_util::{BodyExt as _, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let addr = serve(HttpServer::new(touchy_server().build().unwrap())).await;
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    tokio::spawn(conn);
    let uri = format!("http://{addr}/mcp");
    for (id, tool) in [(1, "boom"), (2, "calm")] {
        let mut request = hyper::Request::post(&uri);
        for (name, value) in mcp_headers("tools/call", Some(tool)) {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(call(id, tool))))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        if tool == "boom" {
            assert_eq!((status, &answer["error"]["code"]), (500, &json!(-32603)));
        } else {
            assert_eq!(status, 200, "{answer}");
        }
    }
}

#[tokio::test]
async fn on_a_message_transport_a_handler_that_panics_is_answered_and_the_loop_serves_on() {
    use tern_tests::wire::{RawPeer, meta};
    let (client_end, server_end) = tern_mcp::transport::memory::pair();
    let server = touchy_server().build().unwrap();
    tokio::spawn(async move { server.serve(server_end).await });
    let mut peer = RawPeer::new(client_end);
    for (id, tool) in [(1, "boom"), (2, "calm"), (3, "boom"), (4, "calm")] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": meta(json!({}))}});
        let answer = tokio::time::timeout(Duration::from_secs(10), peer.call(request))
            .await
            .expect("an answer within 10 s");
        assert_eq!(answer["id"], id, "{answer}");
        if tool == "boom" {
            assert_eq!(answer["error"]["code"], -32603, "{answer}");
        } else {
            assert_eq!(answer["result"]["content"][0]["text"], "fine", "{answer}");
        }
    }
}

#[tokio::test]
async fn at_the_cap_an_idle_kept_alive_connection_makes_room_at_once() {
    let cap = 8;
    let limits = tern_tests::tuned(|l: &mut HttpLimits| {
        l.max_connections = cap;
        l.idle_timeout = Duration::from_secs(60);
        l.header_timeout = Duration::from_secs(60);
    });
    let addr = serve(HttpServer::new(touchy_server().build().unwrap()).limits(limits)).await;
    // Every place taken by a connection that was answered and stays open, idle for
    // less than a second.
    let mut idle = Vec::new();
    for id in 0..cap as i64 {
        let mut conn = KeepAlive::connect(addr).await;
        assert_fine(&call_on(&mut conn, id, "calm", &[]).await, id);
        idle.push(conn);
    }
    // New clients are served, not refused 503: an idle one closes for each, the
    // longest idle first.
    let mut fresh = Vec::new();
    for id in 100..100 + cap as i64 {
        let mut conn = KeepAlive::connect(addr).await;
        assert_fine(&call_on(&mut conn, id, "calm", &[]).await, id);
        fresh.push(conn);
        let oldest = &mut idle[(id - 100) as usize];
        assert!(oldest.closed_within(Duration::from_secs(5)).await);
    }
}

const PROMPTS: &str = "notifications/prompts/list_changed";
const RESOURCES: &str = "notifications/resources/list_changed";

/// A verifier that takes each token as a client of its own, so that many streams are
/// not one caller's (a caller holds at most 16).
struct EachTokenAClient;

impl TokenVerifier for EachTokenAClient {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let info = AuthInfo::new(token);
        Box::pin(async move { Ok(info) })
    }
}

fn listen_headers(token: &str) -> Vec<(String, String)> {
    let mut headers = mcp_headers("subscriptions/listen", None);
    headers.push(("Authorization".into(), format!("Bearer {token}")));
    headers
}

fn listen_body(notifications: Value) -> String {
    body(
        1,
        "subscriptions/listen",
        json!({ "notifications": notifications }),
    )
}

#[tokio::test]
async fn a_listener_that_reads_hears_the_next_change_while_forty_others_never_read() {
    use crate::http_support::SseSocket;
    use tern_mcp::mcp::McpServer;
    use tern_mcp::server::ServerEvent;

    let mcp = McpServer::new("listened", "1");
    let http = HttpServer::new(mcp.server().unwrap()).token_verifier(Arc::new(EachTokenAClient));
    let addr = serve(http).await;
    // Forty listeners that send their request and never read a byte of the answer,
    // with a receive buffer so small that the server's writes to them soon stall.
    let mut deaf = Vec::new();
    for n in 0..40 {
        deaf.push(deaf_listener(addr, &format!("deaf-{n}")).await);
    }
    // One that reads, and hears prompt and resource list changes the others do not.
    let text = listen_body(json!({"toolsListChanged": true, "promptsListChanged": true,
        "resourcesListChanged": true}));
    let mut reader = SseSocket::open(addr, "POST", &listen_headers("reader"), &text).await;
    assert_eq!(reader.status, 200);
    let (_, ack) = reader.next_message().await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some((_, message)) = reader.next_message().await {
            if heard_tx.send(message["method"].clone()).is_err() {
                return;
            }
        }
    });
    let mut heard_next = async |marker: &str| {
        while let Some(method) = heard.recv().await {
            if method == marker {
                return true;
            }
        }
        false
    };
    // Updates of the deaf listeners' resource, 64 KiB each, enough to fill their sockets
    // many times over; then more tool changes than the server's backlog of events. In
    // batches the reader keeps up with: each ends with a prompt change it waits to hear.
    let big: Arc<str> = Arc::from(deaf_uri());
    for batch in 0..10 {
        for _ in 0..256 {
            if batch < 4 {
                mcp.publish(ServerEvent::ResourceUpdated(Arc::clone(&big)));
            } else {
                mcp.publish(ServerEvent::ToolsChanged);
            }
        }
        mcp.publish(ServerEvent::PromptsChanged);
        let batch = tokio::time::timeout(Duration::from_secs(10), heard_next(PROMPTS));
        assert!(batch.await.unwrap_or(false), "the reader heard a batch");
    }
    mcp.publish(ServerEvent::ResourcesChanged);
    let heard_it = heard_next(RESOURCES);
    let within = Duration::from_secs(3);
    assert!(
        tokio::time::timeout(within, heard_it)
            .await
            .unwrap_or(false),
        "the reading listener did not hear the change within {within:?}"
    );
    // A deaf listener read at last: it was ended, not fed on with a gap it cannot see
    // (its client listens again, afresh).
    let mut raw = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), deaf[0].read_to_end(&mut raw));
    read.await
        .expect("a listener that fell behind is ended")
        .unwrap();
    let answer = crate::http_support::parse_raw(&raw);
    assert_eq!(answer.status, 200, "{answer:?}");
    let last = answer.events().pop().expect("the stream's events");
    assert_eq!(
        (&last["id"], &last["result"]["resultType"]),
        (&json!(1), &json!("complete"))
    );
}

/// The resource the deaf listeners subscribe to: its URI 64 KiB long.
fn deaf_uri() -> String {
    format!("note://{}", "x".repeat(64 * 1024))
}

/// A `subscriptions/listen` request of a client of its own that reads nothing: its
/// socket, with a receive buffer of 4 KiB.
async fn deaf_listener(addr: SocketAddr, token: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let text =
        listen_body(json!({"toolsListChanged": true, "resourceSubscriptions": [deaf_uri()]}));
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in listen_headers(token) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    ));
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The `everything` example's executable, built as the workspace builds (every
/// feature, so the build is shared).
fn everything_example() -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["build", "-q", "-p", "tern-mcp", "--all-features"])
        .args(["--example", "everything", "--message-format=json"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("cargo runs");
    let messages: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let rendered: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["message"]["rendered"].as_str())
        .collect();
    assert!(
        out.status.success(),
        "building the everything example failed:\n{}",
        rendered.join("\n")
    );
    messages
        .iter()
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "everything")
        .find_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
        .expect("cargo names the example's executable")
}

#[tokio::test]
async fn the_everything_example_answers_its_request_in_flight_and_exits_0_on_sigterm() {
    use crate::http_support::{SseSocket, listening_child};

    let mut command = tokio::process::Command::new(everything_example());
    command.args(["--port", "0"]);
    let (mut child, addr) = listening_child(command, "listening on http://").await;
    // A call that reports progress, pauses 1.5 s, and answers.
    let mut params = json!({"name": "fleet_pause", "arguments": {"ms": 1500}});
    params["_meta"] = tern_tests::wire::meta(json!({}));
    params["_meta"]["progressToken"] = json!("pause");
    let text = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let headers = mcp_headers("tools/call", Some("fleet_pause"));
    let mut call = SseSocket::open(addr, "POST", &headers, &text.to_string()).await;
    assert_eq!(call.status, 200);
    let (_, first) = call.next_message().await.expect("the first progress step");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    // The call is in flight: SIGTERM.
    tern_tests::signal(child.id().unwrap(), "-TERM");
    let answer = loop {
        let (_, message) = call.next_message().await.expect("the call's answer");
        if message.get("id").is_some() {
            break message;
        }
    };
    assert_eq!(answer["result"]["content"][0]["text"], "paused", "{answer}");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the example exits once drained")
        .unwrap();
    assert!(status.success(), "the example exited {status}");
}
