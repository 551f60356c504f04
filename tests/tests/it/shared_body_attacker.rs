//! Fixed resource contents (`ResourceBuilder::contents`), written as JSON once and shared
//! by every `resources/read`, attacked as a hostile client or a careless server author
//! would. The oracle throughout is a twin resource whose function returns the same
//! result, read the ordinary way: a shared answer must be, member for member, the twin's.
//! Every answer is parsed strictly (a repeated member fails it; the strict reader is
//! itself checked). The attacks:
//!
//! - ids that need escapes (quotes, backslashes, control characters, U+2028, non-BMP),
//!   a 100 KB string id, and the integer extremes (`0`, `-1`, `i64::MIN`, `i64::MAX`);
//! - bodies: escapes and unicode, empty text, bytes (small and 200 KiB, every byte value),
//!   a `ReadResourceResult` with no contents, results that already set `ttlMs`,
//!   `cacheScope`, both, `_meta`, unknown members (one of them spelled `ttlMs`), several
//!   contents, an extension's `resultType`; a URI and MIME type that need escapes;
//! - all of it over HTTP/1.1 (one keep-alive connection), HTTP/2, a 2025-11-25 session
//!   over HTTP, the in-memory transport and a line (stdio) transport in both eras, with
//!   and without the server's caching configured (`McpServer::cache`);
//! - `tern_mcp::client::Client::read_resource` over memory and stdio in both eras;
//! - the sizes `resources/list` gives (a body's bytes, not its JSON's or its base64's);
//! - bodies whose written text straddles the 64 KiB straight-write threshold, on one
//!   keep-alive HTTP/1.1 connection and one HTTP/2 connection;
//! - keep-alive reuse after a large straight-written answer, with a chunked request
//!   between; pipelined large reads; HEAD before and after a large answer on the same
//!   connection; HTTP/1.0 clients with and without keep-alive;
//! - an SSE-preferring client with a progress token;
//! - readers that take part of a 15 MiB answer and close or reset mid-body (in a child
//!   server, whose stderr is watched for a panic), over HTTP/1.1 and HTTP/2;
//! - fifty concurrent slow readers of a 2 MiB body (more than the sockets hold) over
//!   HTTP/1.1, HTTP/2, and both over TLS, a fresh reader answered while they stall;
//! - the resident memory of a child server held by fifty slow HTTP/1.1 readers and by
//!   eight HTTP/2 readers that never read, of a 15 MiB skill file.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::TokioIo;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{IntoReadResult, McpServer, ResourceBody};
use tern_mcp::server::Server;
use tern_mcp::transport::stdio::LineTransport;
use tern_mcp::transport::{MessageSink, MessageSource, MessageTransport, memory};
use tern_mcp::types::v2026_07_28::{
    AnyResourceContents, BlobResourceContents, CacheScope, ReadResourceResult, ResultMetaObject,
    ResultType, TextResourceContents,
};
use tern_tests::wire::meta;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::http_support;
use crate::http_tls::{serve_on_loopback, tls_config, tls_connector};
use crate::skills::{NOTES, large_skill_dir, slow_readers};

// ---------------------------------------------------------------------------------------
// Strict JSON: a repeated member is an error, not the last one winning.

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("member {key:?} repeated")));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// `text` as one JSON value, no member repeated; panics saying where it is not.
fn strict(text: &[u8]) -> Value {
    match serde_json::from_slice::<Strict>(text) {
        Ok(Strict(v)) => v,
        Err(e) => {
            let shown = String::from_utf8_lossy(&text[..text.len().min(600)]);
            panic!("not strict JSON ({e}): {shown}")
        }
    }
}

// ---------------------------------------------------------------------------------------
// The fixed resources attacked, each with a twin read the ordinary way.

const ESCAPES: &str = "q\"b\\s/\u{0}\u{1}\u{1f}\u{7f}\u{2028}\u{2029}é😀\r\n\t</script>";

/// Deterministic bytes covering every value.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x1234_5678;
    (0..len)
        .map(|i| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            if i < 256 { i as u8 } else { (x >> 24) as u8 }
        })
        .collect()
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn text(t: &str, uri: &str) -> AnyResourceContents {
    TextResourceContents::new(t, uri).into()
}

/// What a case registers: a body (`String`, bytes, `ResourceBody`) or a whole result.
#[derive(Clone)]
enum Fixed {
    Text(String),
    Bytes(Vec<u8>),
    Body(ResourceBody),
    Result(Box<ReadResourceResult>),
}

struct Case {
    uri: String,
    mime: Option<&'static str>,
    fixed: Fixed,
    /// The bytes `resources/list` should give as its size.
    size: usize,
}

fn cases() -> Vec<Case> {
    let big_text = format!("{ESCAPES} line of notes\n").repeat(4_000);
    assert!(big_text.len() > 150 << 10);
    let small_bytes = noise(256);
    let big_bytes = noise(200 << 10);
    let uri = |n: usize| format!("file:///case/{n}");
    let mut out = vec![
        Case {
            uri: "file:///we\"ird\\path".to_owned(),
            mime: Some("text/x-\"q\"\\"),
            size: ESCAPES.len(),
            fixed: Fixed::Text(ESCAPES.to_owned()),
        },
        Case {
            uri: uri(1),
            mime: Some("text/markdown"),
            size: big_text.len(),
            fixed: Fixed::Text(big_text.clone()),
        },
        Case {
            uri: uri(2),
            mime: None,
            size: 0,
            fixed: Fixed::Text(String::new()),
        },
        Case {
            uri: uri(3),
            mime: Some("application/octet-stream"),
            size: 256,
            fixed: Fixed::Bytes(small_bytes),
        },
        Case {
            uri: uri(4),
            mime: None,
            size: big_bytes.len(),
            fixed: Fixed::Body(ResourceBody::Blob(big_bytes.clone())),
        },
        Case {
            uri: uri(5),
            mime: None,
            size: 0,
            fixed: Fixed::Result(Box::new(ReadResourceResult::new(vec![]))),
        },
    ];
    let mut both = ReadResourceResult::new(vec![text("cached by the author", &uri(6))]);
    both.ttl_ms = Some(5);
    both.cache_scope = Some(CacheScope::Public);
    let mut ttl_only = ReadResourceResult::new(vec![text(&big_text, &uri(7))]);
    ttl_only.ttl_ms = Some(7);
    let mut scope_only = ReadResourceResult::new(vec![text("scoped", &uri(8))]);
    scope_only.cache_scope = Some(CacheScope::Private);
    let mut with_meta = ReadResourceResult::new(vec![text(&big_text, &uri(9))]);
    let mut extra = Map::new();
    extra.insert("example.com/note".into(), json!({"x": ESCAPES}));
    with_meta.meta = Some(ResultMetaObject {
        server_info: None,
        extra,
    });
    let mut unknown = ReadResourceResult::new(vec![text("unknown members", &uri(10))]);
    unknown.extra.insert("ttlMs".into(), json!(9));
    unknown
        .extra
        .insert("x-custom".into(), json!([ESCAPES, 1, null]));
    let mut many_text = TextResourceContents::new(&big_text, "file:///case/11/a");
    many_text.mime_type = Some("text/plain; charset=\"utf-8\"".into());
    many_text.extra.insert("x-extra".into(), json!(ESCAPES));
    let mut many_blob = BlobResourceContents::new(b64(&big_bytes), "file:///case/11/b");
    many_blob.mime_type = Some("image/png".into());
    let many = ReadResourceResult::new(vec![
        many_text.into(),
        many_blob.into(),
        text("", "file:///case/11/c"),
    ]);
    let mut other = ReadResourceResult::new(vec![text("odd", &uri(12))]);
    other.result_type = ResultType::Other("x-\"odd\"".into());
    for (n, result) in [
        (6, both),
        (7, ttl_only),
        (8, scope_only),
        (9, with_meta),
        (10, unknown),
        (11, many),
        (12, other),
    ] {
        let size = match n {
            7 | 9 => big_text.len(),
            11 => big_text.len() + big_bytes.len(),
            _ => match &result.contents[..] {
                [AnyResourceContents::Text(t)] => t.text.len(),
                _ => unreachable!(),
            },
        };
        out.push(Case {
            uri: uri(n),
            mime: None,
            size,
            fixed: Fixed::Result(Box::new(result)),
        });
    }
    out
}

fn twin_uri(uri: &str) -> String {
    format!("twin:{uri}")
}

/// The expected result of `case`, as the twin's function returns it.
fn expected(case: &Case) -> ReadResourceResult {
    let (uri, mime) = (case.uri.as_str(), case.mime);
    match case.fixed.clone() {
        Fixed::Text(t) => t.into_read_result(uri, mime),
        Fixed::Bytes(b) => b.into_read_result(uri, mime),
        Fixed::Body(b) => b.into_read_result(uri, mime),
        Fixed::Result(r) => *r,
    }
}

/// A server with every case as fixed contents and as a twin function; `cache` sets the
/// server's caching fields.
fn attacked(cache: Option<(u64, bool)>) -> McpServer {
    let mut mcp = McpServer::new("docs", "1");
    if let Some((ttl, public)) = cache {
        mcp = mcp.cache(ttl, public);
    }
    for (n, case) in cases().into_iter().enumerate() {
        let mut fixed = mcp.resource(&case.uri, format!("fixed {n}"));
        let mut twin = mcp.resource(twin_uri(&case.uri), format!("twin {n}"));
        if let Some(mime) = case.mime {
            fixed = fixed.mime_type(mime);
            twin = twin.mime_type(mime);
        }
        let result = expected(&case);
        twin.read(move || {
            let result = result.clone();
            async move { Ok(result) }
        });
        match case.fixed {
            Fixed::Text(t) => fixed.contents(t),
            Fixed::Bytes(b) => fixed.contents(b),
            Fixed::Body(b) => fixed.contents(b),
            Fixed::Result(r) => fixed.contents(*r),
        }
    }
    mcp
}

fn hostile_ids() -> Vec<Value> {
    vec![
        json!(format!("id {ESCAPES}")),
        json!("ид-😀-\u{10ffff}"),
        json!("x\"".repeat(50_000)),
        json!(0),
        json!(-1),
        json!(i64::MIN),
        json!(i64::MAX),
    ]
}

/// A 2026-07-28 `resources/read` of `uri` with `id`.
fn read_2026(id: &Value, uri: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
        "params": {"uri": uri, "_meta": meta(json!({}))}})
    .to_string()
}

/// A 2025-11-25 `resources/read` of `uri` with `id`.
fn read_2025(id: &Value, uri: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
        .to_string()
}

/// Checks an answer to a read of a fixed resource against the answer to its twin: both
/// strict, both echo their ids, the same result; in a 2025-11-25 answer no 2026-07-28
/// members.
fn check_pair(what: &str, id: &Value, fixed: &Value, twin: &Value, session: bool) {
    assert_eq!(fixed["jsonrpc"], "2.0", "{what}");
    assert_eq!(&fixed["id"], id, "{what}: the id echoed");
    assert!(fixed.get("error").is_none(), "{what}: {fixed}");
    assert_eq!(
        fixed["result"], twin["result"],
        "{what}: shared answer differs"
    );
    if session {
        let result = &fixed["result"];
        for member in ["resultType", "ttlMs", "cacheScope"] {
            assert!(result.get(member).is_none(), "{what}: {member} in {result}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// HTTP/1.1 by hand, over any stream.

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

struct H1 {
    version: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl std::fmt::Debug for H1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = String::from_utf8_lossy(&self.body[..self.body.len().min(600)]);
        write!(
            f,
            "{} {} {:?} {body}",
            self.version, self.status, self.headers
        )
    }
}

impl H1 {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message the body holds, as JSON or as an SSE stream's message.
    fn message(&self) -> Value {
        let sse = self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if sse {
            sse_message(&self.body)
        } else {
            strict(&self.body)
        }
    }
}

/// Writes `request` on `conn` and reads its answer (its head alone when `head_only`).
async fn exchange<S: Io>(conn: &mut BufReader<S>, head_only: bool, request: Vec<u8>) -> H1 {
    conn.get_mut().write_all(&request).await.unwrap();
    read_h1(conn, head_only).await
}

/// Reads one answer off `r`: its head, and unless `head_only` its body as framed.
async fn read_h1<S: AsyncRead + Unpin>(r: &mut BufReader<S>, head_only: bool) -> H1 {
    tokio::time::timeout(Duration::from_secs(10), read_h1_now(r, head_only))
        .await
        .expect("an answer within 10 s")
}

async fn read_h1_now<S: AsyncRead + Unpin>(r: &mut BufReader<S>, head_only: bool) -> H1 {
    let mut line = String::new();
    let n = r.read_line(&mut line).await.unwrap();
    assert!(n > 0, "the connection closed before an answer");
    let mut parts = line.trim_end().splitn(3, ' ');
    let version = parts.next().unwrap().to_owned();
    let status = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).await.unwrap();
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        let (name, value) = l.split_once(':').expect("a header field");
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut answer = H1 {
        version,
        status,
        headers,
        body: Vec::new(),
    };
    if head_only {
        return answer;
    }
    let chunked = answer
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).await.unwrap();
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap(), 16)
                .unwrap_or_else(|_| panic!("a chunk size, not {line:?}"));
            if size == 0 {
                line.clear();
                r.read_line(&mut line).await.unwrap();
                assert_eq!(line, "\r\n");
                break;
            }
            let start = answer.body.len();
            answer.body.resize(start + size, 0);
            r.read_exact(&mut answer.body[start..]).await.unwrap();
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf).await.unwrap();
            assert_eq!(&crlf, b"\r\n");
        }
    } else if let Some(len) = answer.header("content-length") {
        answer.body.resize(len.parse().unwrap(), 0);
        r.read_exact(&mut answer.body).await.unwrap();
    } else {
        r.read_to_end(&mut answer.body).await.unwrap();
    }
    answer
}

/// A request's bytes: `line` (`POST /mcp HTTP/1.1`), `fields`, `extra` raw fields, `body`
/// framed by its length.
fn h1_request(line: &str, fields: &[(String, String)], extra: &str, body: &str) -> Vec<u8> {
    let mut head = format!("{line}\r\nHost: localhost\r\n");
    for (n, v) in fields {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n{extra}\r\n", body.len()));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

fn read_fields(uri: &str) -> Vec<(String, String)> {
    http_support::mcp_headers("resources/read", Some(uri))
}

/// The answer to a 2026-07-28 read of `uri` with `id` on a kept-alive connection.
async fn read_kept<S: Io>(conn: &mut BufReader<S>, id: &Value, uri: &str) -> Value {
    let request = h1_request(
        "POST /mcp HTTP/1.1",
        &read_fields(uri),
        "",
        &read_2026(id, uri),
    );
    conn.get_mut().write_all(&request).await.unwrap();
    let answer = read_h1(conn, false).await;
    assert_eq!(answer.status, 200, "{uri}: {answer:?}");
    strict(&answer.body)
}

/// A connection to `addr` that writes each piece at once (no Nagle wait on the
/// client's side).
async fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

async fn tcp(addr: SocketAddr) -> BufReader<TcpStream> {
    BufReader::new(connect(addr).await)
}

// ---------------------------------------------------------------------------------------
// HTTP/2 with hyper.

use crate::http2::Body as H2Body;

async fn h2<S: Io + 'static>(io: S) -> SendRequest<H2Body> {
    crate::http2::handshake(TokioIo::new(io)).await.0
}

fn h2_request(
    addr: SocketAddr,
    fields: &[(String, String)],
    body: String,
) -> hyper::Request<H2Body> {
    let mut request = hyper::Request::post(format!("http://localhost:{}/mcp", addr.port()));
    for (name, value) in fields {
        request = request.header(name, value);
    }
    request.body(Full::new(Bytes::from(body)).boxed()).unwrap()
}

async fn h2_read(
    sender: &mut SendRequest<H2Body>,
    addr: SocketAddr,
    id: &Value,
    uri: &str,
) -> Value {
    sender.ready().await.unwrap();
    let response = sender
        .send_request(h2_request(addr, &read_fields(uri), read_2026(id, uri)))
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{uri}");
    strict(&response.into_body().collect().await.unwrap().to_bytes())
}

// ---------------------------------------------------------------------------------------
// TLS clients.

async fn tls_connect(
    connector: &tokio_rustls::TlsConnector,
    addr: SocketAddr,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    connector.connect(name, connect(addr).await).await.unwrap()
}

// ---------------------------------------------------------------------------------------
// Message transports, raw.

struct TextPeer {
    sink: Box<dyn MessageSink>,
    source: Box<dyn MessageSource>,
}

impl TextPeer {
    fn new<T: MessageTransport>(transport: T) -> Self {
        let (sink, source) = transport.split();
        Self { sink, source }
    }

    /// Sends `text` and returns the strict answer with `id`.
    async fn call(&mut self, id: &Value, text: String) -> Value {
        self.sink.send(text).await.unwrap();
        loop {
            let got = tokio::time::timeout(Duration::from_secs(10), self.source.recv())
                .await
                .expect("an answer within 10 s")
                .expect("the transport is open")
                .unwrap();
            let message = strict(got.as_bytes());
            let refused = message["id"].is_null() && message.get("error").is_some();
            if message.get("method").is_none() && (&message["id"] == id || refused) {
                return message;
            }
        }
    }

    /// `initialize` and `notifications/initialized`, in 2025-11-25.
    async fn open_session(&mut self) {
        let id = json!("init");
        let init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}});
        let answer = self.call(&id, init.to_string()).await;
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-11-25",
            "{answer}"
        );
        self.sink
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await
            .unwrap();
    }
}

/// A line (stdio) transport pair over an in-process pipe: the server's end and the client's.
fn line_pair() -> (impl MessageTransport, impl MessageTransport) {
    let (a, b) = tokio::io::duplex(64 << 10);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    (LineTransport::new(ar, aw), LineTransport::new(br, bw))
}

/// Reads every case, fixed and twin, with every hostile id over `peer`, checked.
async fn attack_peer(peer: &mut TextPeer, what: &str, session: bool) {
    for case in cases() {
        for id in hostile_ids() {
            let read = if session { read_2025 } else { read_2026 };
            let fixed = peer.call(&id, read(&id, &case.uri)).await;
            let twin = peer.call(&id, read(&id, &twin_uri(&case.uri))).await;
            check_pair(&format!("{what} {}", case.uri), &id, &fixed, &twin, session);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The answers, member for member.

#[tokio::test]
async fn every_shared_answer_over_http_1_1_is_its_twins_for_hostile_ids_and_bodies() {
    for cache in [None, Some((60_000, true))] {
        let addr = http_support::serve_default(attacked(cache).server().unwrap()).await;
        let mut conn = tcp(addr).await;
        for case in cases() {
            for id in hostile_ids() {
                let fixed = read_kept(&mut conn, &id, &case.uri).await;
                let twin = read_kept(&mut conn, &id, &twin_uri(&case.uri)).await;
                check_pair(
                    &format!("{cache:?} {}", case.uri),
                    &id,
                    &fixed,
                    &twin,
                    false,
                );
                let result = &fixed["result"];
                let want = expected(&case);
                assert_eq!(
                    result["contents"],
                    serde_json::to_value(&want.contents).unwrap()
                );
                // The author's caching members win; the server's fill what is missing.
                let ttl = want.ttl_ms.unwrap_or(cache.map_or(0, |c| c.0));
                let scope = want.cache_scope.map_or(
                    if cache.is_some() { "public" } else { "private" },
                    |s| {
                        if s == CacheScope::Public {
                            "public"
                        } else {
                            "private"
                        }
                    },
                );
                if !want.extra.contains_key("ttlMs") {
                    assert_eq!(result["ttlMs"], ttl, "{}: {result}", case.uri);
                }
                assert_eq!(result["cacheScope"], scope, "{}", case.uri);
                assert_eq!(
                    result["resultType"],
                    want.result_type.as_str(),
                    "{}",
                    case.uri
                );
            }
        }
    }
}

#[tokio::test]
async fn every_shared_answer_over_http_2_is_its_twins() {
    for cache in [None, Some((1, false))] {
        let addr = serve_on_loopback(HttpServer::new(attacked(cache).server().unwrap())).await;
        let mut sender = h2(connect(addr).await).await;
        for case in cases() {
            for id in hostile_ids() {
                let fixed = h2_read(&mut sender, addr, &id, &case.uri).await;
                let twin = h2_read(&mut sender, addr, &id, &twin_uri(&case.uri)).await;
                check_pair(
                    &format!("h2 {cache:?} {}", case.uri),
                    &id,
                    &fixed,
                    &twin,
                    false,
                );
            }
        }
    }
}

#[tokio::test]
async fn a_2025_11_25_session_over_http_is_answered_in_its_eras_form() {
    let addr = http_support::serve_default(attacked(Some((5, true))).server().unwrap()).await;
    let session = http_support::open_session(addr).await;
    let fields = http_support::legacy_headers(Some(&session));
    let mut conn = tcp(addr).await;
    for case in cases() {
        for id in hostile_ids() {
            let mut answers = Vec::new();
            for uri in [case.uri.clone(), twin_uri(&case.uri)] {
                let answer = exchange(
                    &mut conn,
                    false,
                    h1_request("POST /mcp HTTP/1.1", &fields, "", &read_2025(&id, &uri)),
                )
                .await;
                assert_eq!(answer.status, 200, "{answer:?}");
                answers.push(answer.message());
            }
            check_pair(
                &format!("session {}", case.uri),
                &id,
                &answers[0],
                &answers[1],
                true,
            );
        }
    }
}

/// The one message of an SSE body, strict.
fn sse_message(body: &[u8]) -> Value {
    let text = std::str::from_utf8(body).unwrap();
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .filter(|d| !d.is_empty())
        .collect();
    assert_eq!(
        data.len(),
        1,
        "one message in {:?}",
        &text[..text.len().min(400)]
    );
    strict(data[0].as_bytes())
}

#[tokio::test]
async fn every_shared_answer_over_memory_and_stdio_is_its_twins_in_both_eras() {
    let server: Server = attacked(Some((3, false))).server().unwrap();
    for session in [false, true] {
        let (client_end, server_end) = memory::pair();
        let serving = server.clone();
        tokio::spawn(async move { serving.serve(server_end).await });
        let mut peer = TextPeer::new(client_end);
        if session {
            peer.open_session().await;
        }
        attack_peer(&mut peer, &format!("memory session={session}"), session).await;

        let (server_end, client_end) = line_pair();
        let serving = server.clone();
        tokio::spawn(async move { serving.serve(server_end).await });
        let mut peer = TextPeer::new(client_end);
        if session {
            peer.open_session().await;
        }
        attack_peer(&mut peer, &format!("stdio session={session}"), session).await;
    }
}

#[tokio::test]
async fn the_client_reads_fixed_contents_whole_over_memory_and_stdio_in_both_eras() {
    let server: Server = attacked(None).server().unwrap();
    for era in [EraMode::Stateless, EraMode::Session] {
        for stdio in [false, true] {
            let client = if stdio {
                let (server_end, client_end) = line_pair();
                let serving = server.clone();
                tokio::spawn(async move { serving.serve(server_end).await });
                Client::builder("host", "1")
                    .era(era)
                    .connect(client_end)
                    .await
            } else {
                let (client_end, server_end) = memory::pair();
                let serving = server.clone();
                tokio::spawn(async move { serving.serve(server_end).await });
                Client::builder("host", "1")
                    .era(era)
                    .connect(client_end)
                    .await
            }
            .unwrap();
            for case in cases() {
                if matches!(&case.fixed, Fixed::Result(r) if r.result_type != ResultType::Complete)
                {
                    continue;
                }
                let what = format!("{era:?} stdio={stdio} {}", case.uri);
                let got = client
                    .read_resource(&case.uri)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let twin = client.read_resource(twin_uri(&case.uri)).await.unwrap();
                assert_eq!(got, twin, "{what}");
                assert_eq!(got.contents, expected(&case).contents, "{what}");
            }
        }
    }
}

#[tokio::test]
async fn resources_list_gives_a_bodys_bytes_as_its_size() {
    let mut peer = {
        let (client_end, server_end) = memory::pair();
        let server = attacked(None).server().unwrap();
        tokio::spawn(async move { server.serve(server_end).await });
        TextPeer::new(client_end)
    };
    let mut sizes = std::collections::HashMap::new();
    let mut cursor: Option<Value> = None;
    for page in 0.. {
        assert!(page < 20);
        let id = json!(format!("list {page}"));
        let mut params = json!({"_meta": meta(json!({}))});
        if let Some(c) = &cursor {
            params["cursor"] = c.clone();
        }
        let list =
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/list", "params": params});
        let answer = peer.call(&id, list.to_string()).await;
        for r in answer["result"]["resources"].as_array().unwrap() {
            sizes.insert(
                r["uri"].as_str().unwrap().to_owned(),
                r.get("size").cloned(),
            );
        }
        cursor = answer["result"].get("nextCursor").cloned();
        if cursor.is_none() {
            break;
        }
    }
    for case in cases() {
        assert_eq!(
            sizes.get(&case.uri),
            Some(&Some(json!(case.size))),
            "{}",
            case.uri
        );
    }
}

// ---------------------------------------------------------------------------------------
// The 64 KiB threshold, and connections reused after a straight-written answer.

/// Text resources whose written text straddles 64 KiB, each of its own length.
fn edge_server() -> (McpServer, Vec<(String, String)>) {
    let mcp = McpServer::new("edges", "1");
    let mut edges = Vec::new();
    for len in (65_536 - 300)..=(65_536 + 20) {
        let uri = format!("file:///edge/{len}");
        let unit = "ab\"é";
        let mut t = unit.repeat(len / unit.len());
        while t.len() < len {
            t.push('z');
        }
        mcp.resource(&uri, "edge").contents(t.clone());
        edges.push((uri, t));
    }
    (mcp, edges)
}

#[tokio::test]
async fn bodies_straddling_the_straight_write_threshold_come_whole_on_one_connection() {
    let (mcp, edges) = edge_server();
    let addr = serve_on_loopback(HttpServer::new(mcp.server().unwrap())).await;
    let mut conn = tcp(addr).await;
    let mut sender = h2(connect(addr).await).await;
    for (n, (uri, t)) in edges.iter().enumerate() {
        let id = json!(n);
        for answer in [
            read_kept(&mut conn, &id, uri).await,
            h2_read(&mut sender, addr, &id, uri).await,
        ] {
            assert_eq!(answer["id"], id);
            assert_eq!(answer["result"]["contents"][0]["text"], t.as_str(), "{uri}");
            assert_eq!(answer["result"]["ttlMs"], 0, "{uri}");
        }
    }
}

fn big_uri() -> String {
    "file:///case/1".to_owned()
}

fn big_text() -> String {
    match expected(&cases()[1]).contents.remove(0) {
        AnyResourceContents::Text(t) => t.text,
        AnyResourceContents::Blob(_) => unreachable!(),
    }
}

#[tokio::test]
async fn a_kept_alive_connection_serves_on_after_a_large_answer_and_a_chunked_request() {
    let addr = http_support::serve_default(attacked(None).server().unwrap()).await;
    let big = big_text();
    let mut conn = tcp(addr).await;
    let first = read_kept(&mut conn, &json!(1), &big_uri()).await;
    assert_eq!(first["result"]["contents"][0]["text"], big.as_str());
    // A chunked request after it, then a small answer, then the large one again.
    let body = read_2026(&json!("chunked"), "file:///case/2");
    let (a, b) = body.split_at(body.len() / 2);
    let mut head =
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n".to_owned();
    for (n, v) in read_fields("file:///case/2") {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    let request = format!(
        "{head}\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    );
    conn.get_mut().write_all(request.as_bytes()).await.unwrap();
    let answer = read_h1(&mut conn, false).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let answer = strict(&answer.body);
    assert_eq!(answer["id"], "chunked");
    assert_eq!(answer["result"]["contents"][0]["text"], "");
    for id in 2..5 {
        let again = read_kept(&mut conn, &json!(id), &big_uri()).await;
        assert_eq!(again["id"], id);
        assert_eq!(again["result"]["contents"][0]["text"], big.as_str());
    }
}

#[tokio::test]
async fn pipelined_large_reads_are_answered_in_order_and_whole() {
    let addr = http_support::serve_default(attacked(None).server().unwrap()).await;
    let uris = [
        big_uri(),
        "file:///case/4".to_owned(),
        big_uri(),
        "file:///case/2".to_owned(),
        "file:///case/11".to_owned(),
    ];
    let mut bytes = Vec::new();
    for (id, uri) in uris.iter().enumerate() {
        let last = id + 1 == uris.len();
        let extra = if last { "Connection: close\r\n" } else { "" };
        bytes.extend(h1_request(
            "POST /mcp HTTP/1.1",
            &read_fields(uri),
            extra,
            &read_2026(&json!(id), uri),
        ));
    }
    let mut conn = tcp(addr).await;
    conn.get_mut().write_all(&bytes).await.unwrap();
    let all_cases = cases();
    for (id, uri) in uris.iter().enumerate() {
        let answer = read_h1(&mut conn, false).await;
        assert_eq!(answer.status, 200);
        let answer = strict(&answer.body);
        assert_eq!(answer["id"], id);
        let case = all_cases.iter().find(|c| &c.uri == uri).unwrap();
        assert_eq!(
            answer["result"]["contents"],
            serde_json::to_value(expected(case).contents).unwrap()
        );
    }
    let mut rest = Vec::new();
    conn.read_to_end(&mut rest).await.unwrap();
    assert!(
        rest.is_empty(),
        "{} bytes after the last answer",
        rest.len()
    );
}

#[tokio::test]
async fn head_between_large_answers_gets_no_body_and_the_connection_serves_on() {
    let addr = http_support::serve_default(attacked(None).server().unwrap()).await;
    let big = big_text();
    let mut conn = tcp(addr).await;
    conn.get_mut()
        .write_all(b"HEAD /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let head = read_h1(&mut conn, true).await;
    assert!(head.status >= 400, "{head:?}");
    let first = read_kept(&mut conn, &json!(1), &big_uri()).await;
    assert_eq!(first["result"]["contents"][0]["text"], big.as_str());
    // HEAD with a read's fields and body, as a careless client might send it.
    let head = exchange(
        &mut conn,
        true,
        h1_request(
            "HEAD /mcp HTTP/1.1",
            &read_fields(&big_uri()),
            "",
            &read_2026(&json!(2), &big_uri()),
        ),
    )
    .await;
    assert_ne!(head.status, 200, "HEAD is not a read: {head:?}");
    // Whatever the server says next is a whole answer, or it closed the connection.
    let closes = head
        .header("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
    if !closes {
        let again = read_kept(&mut conn, &json!(3), &big_uri()).await;
        assert_eq!(again["id"], 3);
        assert_eq!(again["result"]["contents"][0]["text"], big.as_str());
    }
}

#[tokio::test]
async fn http_1_0_clients_get_a_large_answer_framed_for_them() {
    let addr = http_support::serve_default(attacked(None).server().unwrap()).await;
    let big = big_text();
    // Without keep-alive: answered, framed by length or by the close, and closed.
    let mut conn = tcp(addr).await;
    let answer = exchange(
        &mut conn,
        false,
        h1_request(
            "POST /mcp HTTP/1.0",
            &read_fields(&big_uri()),
            "",
            &read_2026(&json!("ten"), &big_uri()),
        ),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        answer.header("transfer-encoding").is_none(),
        "{:?}",
        answer.headers
    );
    let json = strict(&answer.body);
    assert_eq!(json["id"], "ten");
    assert_eq!(json["result"]["contents"][0]["text"], big.as_str());
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut rest))
        .await
        .expect("an HTTP/1.0 connection is closed")
        .unwrap();
    assert!(rest.is_empty());

    // With keep-alive asked for: if kept, framed by length, and the next read answered.
    let mut conn = tcp(addr).await;
    let answer = exchange(
        &mut conn,
        false,
        h1_request(
            "POST /mcp HTTP/1.0",
            &read_fields(&big_uri()),
            "Connection: keep-alive\r\n",
            &read_2026(&json!(10), &big_uri()),
        ),
    )
    .await;
    assert!(answer.version.starts_with("HTTP/1."), "{}", answer.version);
    assert!(
        answer.header("transfer-encoding").is_none(),
        "{:?}",
        answer.headers
    );
    assert_eq!(
        strict(&answer.body)["result"]["contents"][0]["text"],
        big.as_str()
    );
    let kept = answer
        .header("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("keep-alive"));
    if kept {
        assert!(answer.header("content-length").is_some());
        let answer = exchange(
            &mut conn,
            false,
            h1_request(
                "POST /mcp HTTP/1.0",
                &read_fields(&big_uri()),
                "",
                &read_2026(&json!(11), &big_uri()),
            ),
        )
        .await;
        let json = strict(&answer.body);
        assert_eq!(json["id"], 11);
        assert_eq!(json["result"]["contents"][0]["text"], big.as_str());
    }
}

#[tokio::test]
async fn an_sse_preferring_client_with_a_progress_token_gets_the_whole_answer() {
    let addr = http_support::serve_default(attacked(None).server().unwrap()).await;
    let big = big_text();
    let mut fields = read_fields(&big_uri());
    http_support::set(
        &mut fields,
        "Accept",
        Some("text/event-stream, application/json"),
    );
    let mut body: Value = serde_json::from_str(&read_2026(&json!("sse"), &big_uri())).unwrap();
    body["params"]["_meta"]["progressToken"] = json!("p\"1");
    let mut conn = tcp(addr).await;
    let answer = exchange(
        &mut conn,
        false,
        h1_request("POST /mcp HTTP/1.1", &fields, "", &body.to_string()),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let json = answer.message();
    assert_eq!(json["id"], "sse");
    assert_eq!(json["result"]["contents"][0]["text"], big.as_str());
}

// ---------------------------------------------------------------------------------------
// Slow readers, readers that leave, and what they cost.

/// A skill directory with a 15 MiB `notes.md` (quotes and tabs in it); its text.
/// `skills_server` over `dir`, its stderr collected.
async fn skills_child(
    dir: &std::path::Path,
) -> (tokio::process::Child, SocketAddr, Arc<Mutex<String>>) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skills_server"));
    command.arg(dir).stderr(std::process::Stdio::piped());
    let (mut child, addr) = http_support::listening_child(command, "serving on http://").await;
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stderr.take().unwrap();
    let collected = Arc::clone(&stderr);
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            collected
                .lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    (child, addr, stderr)
}

/// Reads the 15 MiB file whole over a fresh HTTP/1.1 connection, checked.
async fn read_notes_whole(addr: SocketAddr, text: &str) {
    let answer = http_support::post(
        addr,
        &read_fields(NOTES),
        &http_support::body(99, "resources/read", json!({ "uri": NOTES })),
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["result"]["contents"][0]["text"], text);
}

#[tokio::test]
async fn readers_that_leave_mid_body_do_not_stop_the_server() {
    let (dir, text) = large_skill_dir();
    let (mut child, addr, stderr) = skills_child(dir.path()).await;
    let read = http_support::body(1, "resources/read", json!({ "uri": NOTES }));
    let mut leavers = Vec::new();
    for n in 0..24 {
        leavers.push(tokio::spawn({
            let read = read.clone();
            async move {
                let mut socket = http_support::open(addr, "POST", &read_fields(NOTES), &read).await;
                // Some leave after the head, some well into the body.
                let mut taken = vec![0u8; if n % 2 == 0 { 16 } else { 300 << 10 }];
                socket.read_exact(&mut taken).await.unwrap();
                assert!(taken.starts_with(b"HTTP/1.1 200"));
                if n % 3 == 0 {
                    // A reset, not a close.
                    socket.set_zero_linger().unwrap();
                }
                drop(socket);
            }
        }));
    }
    // And over HTTP/2: streams and connections dropped mid-body.
    for _ in 0..6 {
        let mut sender = h2(connect(addr).await).await;
        let response = sender
            .send_request(h2_request(addr, &read_fields(NOTES), read.clone()))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        let frame = body.frame().await.unwrap().unwrap();
        assert!(frame.data_ref().is_some_and(|d| !d.is_empty()));
        drop(body);
        drop(sender);
    }
    for leaver in leavers {
        leaver.await.unwrap();
    }
    read_notes_whole(addr, &text).await;
    read_notes_whole(addr, &text).await;
    assert!(child.try_wait().unwrap().is_none(), "the server exited");
    let said = stderr.lock().unwrap().clone();
    assert!(!said.contains("panicked"), "{said}");
}

/// The text of the large case, checked in each answer of `bodies`.
fn check_big(what: &str, bodies: Vec<Vec<u8>>, big: &str) {
    for (n, body) in bodies.into_iter().enumerate() {
        let answer = strict(&body);
        assert_eq!(answer["id"], n, "{what}");
        assert_eq!(
            answer["result"]["contents"][0]["text"], big,
            "{what} reader {n}"
        );
    }
}

const HUGE: &str = "file:///huge";

/// 2 MiB of text with escapes: more than the sockets between a reader and the server
/// hold, so a reader that stops reading stops the server's writing mid-body.
fn huge_text() -> String {
    format!("{ESCAPES} a line\n").repeat((2 << 20) / 40)
}

/// The attacked server, and [`HUGE`] as fixed contents.
fn slow_server() -> Server {
    let mcp = attacked(None);
    mcp.resource(HUGE, "huge").contents(huge_text());
    mcp.server().unwrap()
}

/// Fifty HTTP/1.1 readers over `connect`: each takes the head, all wait while a fresh
/// reader gets the answer whole, then each takes the rest slowly.
async fn fifty_slow_h1<S, F, Fut>(connect: F) -> Vec<Vec<u8>>
where
    S: Io + 'static,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = S>,
{
    let mut readers = Vec::new();
    for id in 0..50 {
        let mut conn = BufReader::with_capacity(1024, connect().await);
        let head = exchange(
            &mut conn,
            true,
            h1_request(
                "POST /mcp HTTP/1.1",
                &read_fields(HUGE),
                "",
                &read_2026(&json!(id), HUGE),
            ),
        )
        .await;
        assert_eq!(head.status, 200);
        readers.push((conn, head));
    }
    let mut fresh = BufReader::new(connect().await);
    let whole = read_kept(&mut fresh, &json!("fresh"), HUGE).await;
    assert_eq!(whole["result"]["contents"][0]["text"], huge_text().as_str());
    let tasks: Vec<_> = readers
        .into_iter()
        .map(|(mut conn, head)| {
            tokio::spawn(async move {
                let len: usize = head.header("content-length").unwrap().parse().unwrap();
                let mut body = vec![0u8; len];
                for piece in body.chunks_mut(32 << 10) {
                    conn.read_exact(piece).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                body
            })
        })
        .collect();
    joined(tasks).await
}

/// What each of `tasks` took, each within ten seconds.
async fn joined(tasks: Vec<tokio::task::JoinHandle<Vec<u8>>>) -> Vec<Vec<u8>> {
    let mut bodies = Vec::new();
    for task in tasks {
        let body = tokio::time::timeout(Duration::from_secs(10), task).await;
        bodies.push(body.unwrap().unwrap());
    }
    bodies
}

/// Fifty HTTP/2 streams, five to a connection made by `connect`, each stream slow to
/// take its body. (Each waits with its head alone: its first data may wait on the
/// connection's window, which the streams before it hold.)
async fn fifty_slow_h2<S, F, Fut>(addr: SocketAddr, connect: F) -> Vec<Vec<u8>>
where
    S: Io + 'static,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = S>,
{
    let mut senders = Vec::new();
    for _ in 0..10 {
        senders.push(h2(connect().await).await);
    }
    let mut bodies = Vec::new();
    for id in 0..50 {
        let sender = &mut senders[id % 10];
        sender.ready().await.unwrap();
        let response = sender
            .send_request(h2_request(
                addr,
                &read_fields(HUGE),
                read_2026(&json!(id), HUGE),
            ))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        bodies.push(response.into_body());
    }
    let mut fresh = h2(connect().await).await;
    let whole = h2_read(&mut fresh, addr, &json!("fresh"), HUGE).await;
    assert_eq!(whole["result"]["contents"][0]["text"], huge_text().as_str());
    let tasks: Vec<_> = bodies
        .into_iter()
        .map(|mut body| {
            tokio::spawn(async move {
                let mut all = Vec::new();
                while let Some(frame) = body.frame().await {
                    if let Ok(data) = frame.unwrap().into_data() {
                        all.extend_from_slice(&data);
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                all
            })
        })
        .collect();
    let out = joined(tasks).await;
    drop(senders);
    out
}

#[tokio::test]
async fn fifty_slow_readers_over_http_1_1_and_http_2_each_get_the_whole_answer() {
    let addr = serve_on_loopback(HttpServer::new(slow_server())).await;
    let big = huge_text();
    let bodies = fifty_slow_h1(|| async move { connect(addr).await }).await;
    check_big("h1", bodies, &big);
    let bodies = fifty_slow_h2(addr, || async move { connect(addr).await }).await;
    check_big("h2", bodies, &big);
}

#[tokio::test]
async fn fifty_slow_readers_over_tls_each_get_the_whole_answer() {
    let (config, _, cert) = tls_config();
    let addr = serve_on_loopback(HttpServer::new(slow_server()).tls(config)).await;
    let big = huge_text();
    let h1_tls = tls_connector(cert.clone(), b"http/1.1");
    let bodies = fifty_slow_h1(|| tls_connect(&h1_tls, addr)).await;
    check_big("h1 over TLS", bodies, &big);
    let h2_tls = tls_connector(cert, b"h2");
    let bodies = fifty_slow_h2(addr, || tls_connect(&h2_tls, addr)).await;
    check_big("h2 over TLS", bodies, &big);
}

#[tokio::test]
async fn fifty_slow_http_1_1_readers_of_a_large_skill_file_hold_no_copies_of_it() {
    let (dir, text) = large_skill_dir();
    let (child, addr, _) = skills_child(dir.path()).await;
    let pid = child.id().unwrap();
    read_notes_whole(addr, &text).await;
    let before = http_support::memory_kib(pid, "VmRSS");
    let _slow = slow_readers(addr, 50).await;
    let grew = http_support::memory_kib(pid, "VmRSS").saturating_sub(before);
    let file_kib = text.len() as u64 / 1024;
    println!("fifty slow HTTP/1.1 readers of a {file_kib} KiB file: RSS grew {grew} KiB");
    assert!(
        grew < file_kib / 2,
        "grew {grew} KiB for a {file_kib} KiB file"
    );
    read_notes_whole(addr, &text).await;
}

#[tokio::test]
async fn eight_http_2_readers_that_never_read_a_large_skill_file_hold_no_copies_of_it() {
    let (dir, text) = large_skill_dir();
    let (child, addr, _) = skills_child(dir.path()).await;
    let pid = child.id().unwrap();
    read_notes_whole(addr, &text).await;
    let read = http_support::body(1, "resources/read", json!({ "uri": NOTES }));
    let before = http_support::memory_kib(pid, "VmRSS");
    let mut slow = Vec::new();
    for _ in 0..8 {
        let mut sender = h2(connect(addr).await).await;
        let response = sender
            .send_request(h2_request(addr, &read_fields(NOTES), read.clone()))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        slow.push((sender, response));
    }
    let grew = http_support::memory_kib(pid, "VmRSS").saturating_sub(before);
    let file_kib = text.len() as u64 / 1024;
    println!("eight HTTP/2 readers that never read a {file_kib} KiB file: RSS grew {grew} KiB");
    assert!(
        grew < file_kib / 2,
        "grew {grew} KiB for a {file_kib} KiB file"
    );
    read_notes_whole(addr, &text).await;
}

#[test]
fn the_strict_reader_refuses_a_repeated_member() {
    assert_eq!(
        strict(br#"{"a":[{"b":1}],"c":"\""}"#),
        json!({"a": [{"b": 1}], "c": "\""})
    );
    for repeated in [&br#"{"a":1,"a":1}"#[..], br#"{"x":[{"b":1,"b":2}]}"#] {
        assert!(std::panic::catch_unwind(|| strict(repeated)).is_err());
    }
}
