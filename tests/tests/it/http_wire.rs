//! The endpoint's HTTP/1.1 as raw clients see it: request framings (length, chunks,
//! `Expect`), pipelining, HTTP/1.0, absolute-form targets, and the heads and bodies it
//! refuses (400, 413, 431, 501), each answered before the connection closes.

use crate::http_support;
use tern_mcp::http::HttpLimits;

use std::net::SocketAddr;
use std::time::Duration;

use tern_mcp::http::HttpServer;
use tern_tests::seed;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use http_support::{Raw, body, parse_raw, serve};

async fn endpoint(http: impl FnOnce(HttpServer) -> HttpServer) -> SocketAddr {
    serve(http(HttpServer::new(
        seed::provision_server().build().unwrap(),
    )))
    .await
}

/// The head fields of a well-formed `tools/list` POST to `addr`, without framing.
fn fields(addr: SocketAddr) -> String {
    format!(
        "Host: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n"
    )
}

/// A request line, the fields every MCP POST carries, `extra` fields, and `body` with its
/// `Content-Length`.
fn post(addr: SocketAddr, line: &str, extra: &str, body: &str) -> String {
    format!(
        "{line}\r\n{}Content-Length: {}\r\n{extra}\r\n{body}",
        fields(addr),
        body.len()
    )
}

/// `raw` is the 200 answer to `list(id)`.
fn assert_listed(raw: &Raw, id: i64) {
    assert_eq!(raw.status, 200);
    assert_eq!(raw.json()["id"], id);
}

fn list(id: i64) -> String {
    body(id, "tools/list", serde_json::json!({}))
}

/// Writes `bytes` and reads until the server closes (at most 10 s).
async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    until_closed(&mut stream).await
}

async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("the server closes the connection")
        .expect("the connection closes cleanly");
    raw
}

/// Reads one answer off a connection kept open: its head, then the bytes its
/// `Content-Length` says (a read may return any part of them).
async fn next_answer(stream: &mut TcpStream) -> Raw {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let len: usize = parse_raw(&raw[..end + 4])
                .header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if raw.len() >= end + 4 + len {
                return parse_raw(&raw[..end + 4 + len]);
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .expect("the answer comes whole")
            .unwrap();
        assert!(n > 0, "the server closed a connection it should keep");
        raw.extend_from_slice(&chunk[..n]);
    }
}

/// Sends `request` on a connection kept open and reads its answer: a 200 whose
/// `Content-Length` is its body's.
async fn answered(stream: &mut TcpStream, request: &str) -> Raw {
    stream.write_all(request.as_bytes()).await.unwrap();
    let raw = next_answer(stream).await;
    assert_eq!(raw.status, 200);
    assert_eq!(
        raw.header("content-length"),
        Some(raw.body.len().to_string().as_str())
    );
    raw
}

/// The answers in `raw`, in order (each framed by its `Content-Length`).
fn answers(raw: &[u8]) -> Vec<Raw> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = parse_raw(&rest[..end + 4]);
        let len: usize = head
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let whole = (end + 4 + len).min(rest.len());
        out.push(parse_raw(&rest[..whole]));
        rest = &rest[whole..];
    }
    out
}

fn one(raw: &[u8]) -> Raw {
    let mut all = answers(raw);
    assert_eq!(all.len(), 1, "{}", String::from_utf8_lossy(raw));
    all.remove(0)
}

#[tokio::test]
async fn answers_carry_their_length_and_date_and_keep_the_connection() {
    let addr = endpoint(|h| h).await;
    let text = list(1);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = post(addr, "POST /mcp HTTP/1.1", "", &text);
    // The same connection twice: kept alive between requests.
    for _ in 0..2 {
        let raw = answered(&mut stream, &request).await;
        assert!(raw.header("date").is_some_and(|d| d.ends_with(" GMT")));
        assert!(raw.json()["result"]["tools"].is_array());
    }
}

#[tokio::test]
async fn an_answer_goes_to_its_id_as_the_client_wrote_it() {
    let addr = endpoint(|h| h).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let string_id = serde_json::json!("a \"quoted\" \\ id, caf\u{e9}");
    for id in [
        serde_json::json!(-7),
        serde_json::json!(i64::MAX),
        string_id,
    ] {
        let mut text: serde_json::Value = serde_json::from_str(&list(0)).unwrap();
        text["id"] = id.clone();
        let text = text.to_string();
        let request = post(addr, "POST /mcp HTTP/1.1", "", &text);
        let raw = answered(&mut stream, &request).await;
        let answer = raw.json();
        assert_eq!(answer["id"], id, "{}", raw.body);
        assert_eq!(answer["jsonrpc"], "2.0");
        assert!(answer["result"]["tools"].is_array());
    }
}

#[tokio::test]
async fn a_chunked_request_is_read_whole_whatever_its_chunks() {
    let addr = endpoint(|h| h).await;
    let text = list(7);
    let (a, b) = text.split_at(10);
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
         {:x}\r\n{a}\r\n{:x};ext=1\r\n{b}\r\n0\r\nX-Trailer: yes\r\n\r\n",
        fields(addr),
        a.len(),
        b.len()
    );
    assert_listed(&one(&exchange(addr, request.as_bytes()).await), 7);
}

#[tokio::test]
async fn a_client_expecting_100_continue_gets_it_before_it_sends_the_body() {
    let addr = endpoint(|h| h).await;
    let text = list(3);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\n{}Content-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        fields(addr),
        text.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut interim = [0u8; 25];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut interim))
        .await
        .expect("100 Continue before the body")
        .unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(text.as_bytes()).await.unwrap();
    assert_listed(&one(&until_closed(&mut stream).await), 3);
}

#[tokio::test]
async fn answers_on_one_connection_carry_only_their_own_bytes() {
    // A connection writes each answer in the room the last one took: a long answer,
    // shorter ones of other kinds, then the long one again, each whole on its own.
    let addr = endpoint(|h| h).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let first = answered(&mut stream, &post(addr, "POST /mcp HTTP/1.1", "", &list(1))).await;
    assert_listed(&first, 1);
    let missing = format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.write_all(missing.as_bytes()).await.unwrap();
    let missing = next_answer(&mut stream).await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.header("content-length"),
        Some(missing.body.len().to_string().as_str())
    );
    let bad = post(addr, "POST /mcp HTTP/1.1", "", "{");
    stream.write_all(bad.as_bytes()).await.unwrap();
    let bad = next_answer(&mut stream).await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], -32700);
    let again = answered(&mut stream, &post(addr, "POST /mcp HTTP/1.1", "", &list(2))).await;
    assert_listed(&again, 2);
    assert_eq!(again.json()["result"], first.json()["result"]);
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let addr = endpoint(|h| h).await;
    let mut bytes = Vec::new();
    for (id, last) in [(1, false), (2, false), (3, true)] {
        let text = list(id);
        let close = if last { "Connection: close\r\n" } else { "" };
        bytes.extend_from_slice(post(addr, "POST /mcp HTTP/1.1", close, &text).as_bytes());
    }
    let all = answers(&exchange(addr, &bytes).await);
    let ids: Vec<_> = all.iter().map(|raw| raw.json()["id"].clone()).collect();
    assert_eq!(ids, [1, 2, 3]);
}

#[tokio::test]
async fn an_http_1_0_client_is_answered_and_the_connection_closed() {
    let addr = endpoint(|h| h).await;
    let text = list(4);
    let request = post(addr, "POST /mcp HTTP/1.0", "", &text);
    assert_listed(&one(&exchange(addr, request.as_bytes()).await), 4);
}

#[tokio::test]
async fn an_http_1_0_close_wins_over_keep_alive_in_any_order() {
    // h1_requests found tern reading a second request where hyper had closed: both
    // tokens said, in separate fields, and `keep-alive` last.
    let addr = endpoint(|h| h).await;
    let mut bytes = Vec::new();
    let fields = "Connection: close\r\nConnection: keep-alive\r\n";
    bytes.extend_from_slice(post(addr, "POST /mcp HTTP/1.0", fields, &list(6)).as_bytes());
    bytes.extend_from_slice(post(addr, "POST /mcp HTTP/1.1", "", &list(7)).as_bytes());
    let all = answers(&exchange(addr, &bytes).await);
    let ids: Vec<_> = all.iter().map(|raw| raw.json()["id"].clone()).collect();
    assert_eq!(ids, [6]);
}

#[tokio::test]
async fn an_absolute_form_target_reaches_the_endpoint() {
    let addr = endpoint(|h| h).await;
    let text = list(5);
    let line = format!("POST http://{addr}/mcp?x=1 HTTP/1.1");
    let request = post(addr, &line, "Connection: close\r\n", &text);
    assert_eq!(one(&exchange(addr, request.as_bytes()).await).status, 200);
}

#[tokio::test]
async fn a_target_reaches_the_endpoint_by_its_path_alone() {
    let status = |addr: SocketAddr, target: &str| {
        let line = format!("POST {target} HTTP/1.1");
        let request = post(addr, &line, "Connection: close\r\n", &list(5));
        async move { one(&exchange(addr, request.as_bytes()).await).status }
    };
    let addr = endpoint(|h| h).await;
    for (target, expected) in [
        ("/mcp", 200),
        ("/mcp?x=1", 200),
        ("/mcp#top", 200),
        ("/mcpx", 404),
        ("/mc", 404),
        ("/MCP", 404),
        ("/", 404),
    ] {
        assert_eq!(status(addr, target).await, expected, "{target}");
    }
    // An endpoint path with a query mark is never a request's path, even to a target
    // that spells it byte for byte.
    let odd = endpoint(|h| h.path("/rpc?v=1")).await;
    assert_eq!(status(odd, "/rpc?v=1").await, 404);
}

#[tokio::test]
async fn head_is_answered_without_a_body() {
    let addr = endpoint(|h| h).await;
    let raw = exchange(
        addr,
        format!("HEAD /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await;
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 405 "), "{text}");
    assert!(text.ends_with("\r\n\r\n"), "{text}");
}

#[tokio::test]
async fn heads_that_break_the_grammar_are_answered_400_and_closed() {
    let addr = endpoint(|h| h).await;
    for head in [
        "GARBAGE\r\n\r\n".to_owned(),
        format!(
            "POST /mcp HTTP/1.1\r\n{}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{{}}",
            fields(addr)
        ),
        format!(
            "POST /mcp HTTP/1.1\r\n{}Content-Length: -1\r\n\r\n",
            fields(addr)
        ),
        // Framed two ways: how requests are smuggled past a proxy.
        format!(
            "POST /mcp HTTP/1.1\r\n{}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            fields(addr)
        ),
    ] {
        let raw = one(&exchange(addr, head.as_bytes()).await);
        assert_eq!(raw.status, 400, "{head:?}");
        assert_eq!(raw.header("connection"), Some("close"));
    }
}

#[tokio::test]
async fn a_body_coded_other_than_chunked_is_answered_501() {
    let addr = endpoint(|h| h).await;
    // `chunked,` ends in an empty element: hyper reads it as not chunked, so it is
    // refused rather than read as chunks (a second reader must not see another body).
    for codings in ["gzip, chunked", "chunked,", "chunked, ,"] {
        let request = format!(
            "POST /mcp HTTP/1.1\r\n{}Transfer-Encoding: {codings}\r\n\r\n0\r\n\r\n",
            fields(addr)
        );
        let status = one(&exchange(addr, request.as_bytes()).await).status;
        assert_eq!(status, 501, "{codings}");
    }
}

#[tokio::test]
async fn a_head_past_its_bound_is_answered_431() {
    let addr = endpoint(|h| h).await;
    let mut head = format!("POST /mcp HTTP/1.1\r\n{}", fields(addr));
    while head.len() < 80 * 1024 {
        head.push_str("X-Filler: 0123456789abcdef0123456789abcdef\r\n");
    }
    assert_eq!(one(&exchange(addr, head.as_bytes()).await).status, 431);
    let mut many = format!("POST /mcp HTTP/1.1\r\n{}", fields(addr));
    for i in 0..200 {
        many.push_str(&format!("X-{i}: 1\r\n"));
    }
    many.push_str("\r\n");
    assert_eq!(one(&exchange(addr, many.as_bytes()).await).status, 431);
}

#[tokio::test]
async fn bodies_over_the_limit_are_answered_413_whether_declared_or_chunked() {
    let addr = endpoint(|h| {
        h.limits(tern_tests::tuned(|l: &mut HttpLimits| {
            l.max_body_bytes = 1024
        }))
    })
    .await;
    // Declared: refused before a byte of it is read.
    let declared = format!(
        "POST /mcp HTTP/1.1\r\n{}Content-Length: 100000000\r\n\r\n",
        fields(addr)
    );
    let raw = one(&exchange(addr, declared.as_bytes()).await);
    assert_eq!(raw.status, 413);
    // Chunked: read up to the limit, then refused, and the connection closed.
    let mut chunked = format!(
        "POST /mcp HTTP/1.1\r\n{}Transfer-Encoding: chunked\r\n\r\n",
        fields(addr)
    );
    for _ in 0..8 {
        chunked.push_str(&format!("200\r\n{}\r\n", "a".repeat(0x200)));
    }
    chunked.push_str("0\r\n\r\n");
    let raw = one(&exchange(addr, chunked.as_bytes()).await);
    assert_eq!(raw.status, 413);
}

#[tokio::test]
async fn a_malformed_chunk_is_answered_400() {
    let addr = endpoint(|h| h).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{}Transfer-Encoding: chunked\r\n\r\nzz\r\n",
        fields(addr)
    );
    assert_eq!(one(&exchange(addr, request.as_bytes()).await).status, 400);
}
