//! The tern client against servers that misbehave on purpose: one that goes silent
//! mid-stream, streams that never end (a notification every half second, a byte a
//! second, progress forever), one whose SSE event is 16 MiB, one that asks 100,000 questions in a round,
//! one that answers with another request's id, and one whose `server/discover` result
//! has a `resultType` nobody defined. Each is a raw socket server here, so it can do what
//! no real SDK would.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tern_mcp::transport::http::client::HttpTimeouts;

use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{ElicitResult, ElicitResultAction};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the raw server does with a request: the id of the request and the bytes after
/// the head.
type Script = Arc<dyn Fn(Value) -> Reply + Send + Sync>;

enum Reply {
    /// `200 application/json` with this body.
    Json(String),
    /// `200 text/event-stream`: these chunks, then the connection stays open and silent.
    SseThenSilence(Vec<Vec<u8>>),
    /// `200 text/event-stream`: `chunk` every `every`, `count` times (forever when
    /// `None`), then `last`.
    SseDrip {
        every: Duration,
        chunk: Vec<u8>,
        count: Option<usize>,
        last: Vec<u8>,
    },
}

async fn write_chunk(stream: &mut TcpStream, chunk: &[u8]) -> std::io::Result<()> {
    stream
        .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
        .await?;
    stream.write_all(chunk).await?;
    stream.write_all(b"\r\n").await
}

/// Serves `script` on a loopback port, one request per connection.
async fn hostile(script: Script) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let script = Arc::clone(&script);
            tokio::spawn(async move {
                let _ = answer(stream, script).await;
            });
        }
    });
    addr
}

async fn answer(mut stream: TcpStream, script: Script) -> std::io::Result<()> {
    loop {
        let Some((_, request)) = read_request(&mut stream).await? else {
            return Ok(());
        };
        match script(request) {
            Reply::Json(body) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).await?;
                stream.write_all(body.as_bytes()).await?;
            }
            Reply::SseThenSilence(chunks) => {
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .await?;
                for chunk in chunks {
                    write_chunk(&mut stream, &chunk).await?;
                }
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Reply::SseDrip {
                every,
                chunk,
                count,
                last,
            } => {
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .await?;
                for _ in 0..count.unwrap_or(usize::MAX) {
                    write_chunk(&mut stream, &chunk).await?;
                    tokio::time::sleep(every).await;
                }
                write_chunk(&mut stream, &last).await?;
                write_chunk(&mut stream, b"").await?;
            }
        }
    }
}

/// Reads one request: its head (lowercase) and its JSON body (by Content-Length;
/// `null` when it is not JSON).
pub(crate) async fn read_request(
    stream: &mut TcpStream,
) -> std::io::Result<Option<(String, Value)>> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while raw.len() < head_end + length {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let body = serde_json::from_slice(&raw[head_end..head_end + length]).unwrap_or_default();
    Ok(Some((head, body)))
}

fn response(request: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string()
}

async fn client_of(addr: SocketAddr, idle: Duration) -> Client {
    let transport = HttpClientTransport::builder(format!("http://{addr}/mcp"))
        .timeouts(tern_tests::tuned(|t: &mut HttpTimeouts| t.idle = idle))
        .build()
        .unwrap();
    Client::builder("victim", "1.0")
        .on_elicitation(|_ctx, _params| async { Ok(ElicitResult::new(ElicitResultAction::Accept)) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

/// Calls a tool on the hostile server; the error the client reports.
async fn failed_call(addr: SocketAddr, idle: Duration) -> Error {
    client_of(addr, idle)
        .await
        .call_tool("anything", json!({}))
        .await
        .unwrap_err()
}

fn transport_message(error: &Error) -> String {
    match error {
        Error::Transport(t) => t.to_string(),
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_silent_sse_stream_fails_the_client_within_its_idle_timeout() {
    let addr = hostile(Arc::new(|_request| {
        // A comment, then nothing: never the response.
        Reply::SseThenSilence(vec![b": working\n\n".to_vec()])
    }))
    .await;
    let idle = Duration::from_millis(300);
    let started = Instant::now();
    let error = failed_call(addr, idle).await;
    assert!(started.elapsed() < idle * 6, "{:?}", started.elapsed());
    assert!(
        transport_message(&error).contains("idle timeout"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_fails_the_client_within_its_idle_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Accepts, reads, and never writes a byte.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let error = failed_call(addr, Duration::from_millis(300)).await;
    assert!(
        transport_message(&error).contains("idle timeout"),
        "{error}"
    );
}

#[tokio::test]
async fn a_sixteen_mebibyte_sse_event_is_read_whole() {
    let addr = hostile(Arc::new(|request| {
        let text = "x".repeat(16 << 20);
        let result = json!({"resultType": "complete", "content": [{"type": "text", "text": text}]});
        let event = format!("event: message\ndata: {}\n\n", response(&request, result));
        // Cut in 16 KiB chunks, the way a network delivers a big event.
        Reply::SseThenSilence(
            event
                .into_bytes()
                .chunks(16 << 10)
                .map(<[u8]>::to_vec)
                .collect(),
        )
    }))
    .await;
    let started = Instant::now();
    let result = client_of(addr, Duration::from_secs(30))
        .await
        .call_tool("big", json!({}))
        .await
        .unwrap();
    assert_eq!(tern_tests::text_of(&result).len(), 16 << 20);
    // Linear: well under what the old rescanning reader took (14.5 s).
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_round_of_a_hundred_thousand_input_requests_fails_with_the_typed_error() {
    let addr = hostile(Arc::new(|request| {
        let asks: serde_json::Map<String, Value> = (0..100_000)
            .map(|i| {
                let ask = json!({"method": "elicitation/create", "params": {
                    "mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}}});
                (format!("q{i}"), ask)
            })
            .collect();
        let result = json!({"resultType": "input_required", "inputRequests": asks, "requestState": "s"});
        Reply::Json(response(&request, result))
    }))
    .await;
    let error = client_of(addr, Duration::from_secs(30))
        .await
        .call_tool("greedy", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Input(tern_mcp::InputError::TooManyRequests {
                asked: 100_000,
                max: 64
            })
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_json_answer_carrying_another_requests_id_is_refused() {
    let addr = hostile(Arc::new(|_request| {
        Reply::Json(
            json!({"jsonrpc": "2.0", "id": 999_999, "result": {"resultType": "complete", "content": []}})
                .to_string(),
        )
    }))
    .await;
    let error = failed_call(addr, Duration::from_secs(5)).await;
    assert!(
        transport_message(&error).contains("another request's id"),
        "{error}"
    );
}

#[tokio::test]
async fn a_result_followed_by_other_members_is_read_where_it_ends() {
    // The client takes a result that closes its message as such, unscanned: here an
    // object follows it, so what closes the message is no result, and is not read as one.
    let addr = hostile(Arc::new(|request| {
        let result =
            json!({"resultType": "complete", "content": [{"type": "text", "text": "ok }}"}]});
        Reply::Json(format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{result},"x":{{"y":{{}}}}}}"#,
            request["id"]
        ))
    }))
    .await;
    let client = client_of(addr, Duration::from_secs(5)).await;
    let result = client.call_tool("anything", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{"type": "text", "text": "ok }}"}])
    );
}

#[tokio::test]
async fn an_unknown_result_type_in_server_discover_is_refused() {
    let addr = hostile(Arc::new(|request| {
        let result = json!({"resultType": "teleport", "supportedVersions": ["2026-07-28"],
            "capabilities": {}, "serverInfo": {"name": "odd", "version": "1"}});
        Reply::Json(response(&request, result))
    }))
    .await;
    let transport = HttpClientTransport::builder(format!("http://{addr}/mcp"))
        .build()
        .unwrap();
    let error = Client::builder("victim", "1.0")
        .era(EraMode::Auto)
        .connect(Arc::new(transport))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Protocol(tern_mcp::ProtocolError::UnknownResultType(t)) if t == "teleport"),
        "{error:?}"
    );
}

fn event(message: &Value) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}

fn progress(n: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": "t", "progress": n}})
}

/// A client whose request timeout is `timeout` (pushed back by progress up to `max`),
/// with a long idle timeout, so only the deadline can end a call.
async fn client_with_deadline(addr: SocketAddr, timeout: Duration, max: Duration) -> Client {
    let transport = HttpClientTransport::builder(format!("http://{addr}/mcp"))
        .timeouts(tern_tests::tuned(|l: &mut HttpTimeouts| {
            l.idle = Duration::from_secs(60);
            l.request = timeout;
            l.max_request = max;
        }))
        .build()
        .unwrap();
    Client::builder("victim", "1.0")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

/// How long the client took to give up on a call to `script`'s server, and its error.
async fn given_up(script: Script, timeout: Duration, max: Duration) -> (Duration, String) {
    let addr = hostile(script).await;
    let client = client_with_deadline(addr, timeout, max).await;
    let started = Instant::now();
    let error = client.call_tool("anything", json!({})).await.unwrap_err();
    let took = started.elapsed();
    (took, transport_message(&error))
}

#[tokio::test]
async fn a_stream_of_notifications_that_never_answers_is_given_up_on_at_the_deadline() {
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "data": "still here"}});
    let script: Script = Arc::new(move |_| Reply::SseDrip {
        every: Duration::from_millis(500),
        chunk: event(&log),
        count: None,
        last: Vec::new(),
    });
    let (took, error) = given_up(script, Duration::from_secs(2), Duration::from_secs(60)).await;
    println!("a notification every 0.5 s, never the response: given up after {took:?}");
    assert!(error.contains("request timeout"), "{error}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_stream_that_drips_a_byte_a_second_is_given_up_on_at_the_deadline() {
    let script: Script = Arc::new(|_| Reply::SseDrip {
        every: Duration::from_secs(1),
        chunk: b":".to_vec(),
        count: None,
        last: Vec::new(),
    });
    let (took, error) = given_up(script, Duration::from_secs(2), Duration::from_secs(60)).await;
    println!("a byte a second, never the response: given up after {took:?}");
    assert!(error.contains("request timeout"), "{error}");
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[tokio::test]
async fn a_message_dripped_a_byte_a_second_is_given_up_on_at_the_minimum_rate() {
    // A deadline of a minute: the rate, not the deadline, ends it.
    let script: Script = Arc::new(|_| Reply::SseDrip {
        every: Duration::from_secs(1),
        chunk: b"d".to_vec(),
        count: None,
        last: Vec::new(),
    });
    let (took, error) = given_up(script, Duration::from_secs(60), Duration::from_secs(600)).await;
    println!("an event dripped a byte a second: given up after {took:?}");
    assert!(error.contains("under the minimum"), "{error}");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(13),
        "{took:?}"
    );
}

#[tokio::test]
async fn progress_pushes_the_deadline_back_up_to_the_hard_maximum() {
    // Progress every half second for 3 s, then the answer: past a 1 s timeout.
    let script: Script = Arc::new(|request| Reply::SseDrip {
        every: Duration::from_millis(500),
        chunk: event(&progress(1)),
        count: Some(6),
        last: event(&serde_json::from_str(&response(&request, json!({"content": []}))).unwrap()),
    });
    let addr = hostile(script).await;
    let client = client_with_deadline(addr, Duration::from_secs(1), Duration::from_secs(60)).await;
    client.call_tool("anything", json!({})).await.unwrap();
    // Progress forever: the hard maximum ends it.
    let script: Script = Arc::new(|_| Reply::SseDrip {
        every: Duration::from_millis(200),
        chunk: event(&progress(1)),
        count: None,
        last: Vec::new(),
    });
    let (took, error) = given_up(script, Duration::from_secs(1), Duration::from_secs(3)).await;
    println!("progress forever: given up after {took:?} (hard maximum 3 s)");
    assert!(error.contains("longest a request may take"), "{error}");
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(5),
        "{took:?}"
    );
}
