//! What the HTTP tests share: a tern server on a loopback port, a raw HTTP/1.1 client
//! that sends exactly the headers a test names, and well-formed request bodies.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;

use serde_json::{Value, json};
use tern_mcp::http::HttpServer;
use tern_mcp::server::Server;
use tern_tests::wire::meta;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Serves `http` on a fresh loopback port; returns the address.
pub async fn serve(http: HttpServer) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(http.serve(listener, std::future::pending()));
    addr
}

/// Serves `server` with default settings.
pub async fn serve_default(server: Server) -> SocketAddr {
    serve(HttpServer::new(server)).await
}

/// The endpoint URL.
pub fn url(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

/// An HTTP answer as it came off the socket.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Raw {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }

    /// The `data:` payloads of an SSE body.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            // A priming event (an id and a retry) carries no message.
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    /// The JSON-RPC error code in the body.
    pub fn error_code(&self) -> Option<i64> {
        self.json()["error"]["code"].as_i64()
    }
}

/// The headers a well-behaved client sends for `method` (and `name`, when it has one).
pub fn mcp_headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".into(), "application/json".into()),
        (
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("MCP-Protocol-Version".into(), "2026-07-28".into()),
        ("Mcp-Method".into(), method.into()),
    ];
    if let Some(n) = name {
        h.push(("Mcp-Name".into(), n.into()));
    }
    h
}

/// Replaces (or with `None` removes) header `name`.
pub fn set(headers: &mut Vec<(String, String)>, name: &str, value: Option<&str>) {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        headers.push((name.into(), v.into()));
    }
}

/// A well-formed request body.
pub fn body(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = meta(json!({"elicitation": {}}));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Sends a raw HTTP/1.1 request (`Connection: close`) and reads the whole answer.
pub async fn send(addr: SocketAddr, verb: &str, headers: &[(String, String)], body: &str) -> Raw {
    let mut stream = open(addr, verb, headers, body).await;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    parse(&raw)
}

/// POSTs `body` with `headers`.
pub async fn post(addr: SocketAddr, headers: &[(String, String)], body: &str) -> Raw {
    send(addr, "POST", headers, body).await
}

/// Writes a request and returns the open socket, for tests that read part of an answer.
pub async fn open(
    addr: SocketAddr,
    verb: &str,
    headers: &[(String, String)],
    body: &str,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = request_head(addr, verb, headers, body, "Connection: close\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    stream
}

/// POSTs `body` with `headers` (`Connection: close`) from a socket bound to address
/// `from` (a loopback address of its own, so the server sees another caller), and
/// reads the whole answer, within ten seconds.
pub async fn post_from(
    from: std::net::IpAddr,
    addr: SocketAddr,
    headers: &[(String, String)],
    body: &str,
) -> Raw {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let head = request_head(addr, "POST", headers, body, "Connection: close\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut raw),
    )
    .await
    .expect("answered within 10 s")
    .unwrap();
    parse(&raw)
}

/// The head of a request for `/mcp` on `addr` with `headers` (a `Host` unless they give
/// one) and `extra` fields, for `body`.
fn request_head(
    addr: SocketAddr,
    verb: &str,
    headers: &[(String, String)],
    body: &str,
    extra: &str,
) -> String {
    let mut head = format!("{verb} /mcp HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n{extra}\r\n", body.len()));
    head
}

/// One keep-alive connection, for several requests in turn.
pub struct KeepAlive {
    addr: SocketAddr,
    stream: TcpStream,
}

impl KeepAlive {
    /// A connection to `addr`.
    pub async fn open(addr: SocketAddr) -> Self {
        Self {
            addr,
            stream: TcpStream::connect(addr).await.unwrap(),
        }
    }

    /// Sends one request; `None` if the connection closed without a whole answer.
    pub async fn send(
        &mut self,
        verb: &str,
        headers: &[(String, String)],
        body: &str,
    ) -> Option<Raw> {
        let head = request_head(self.addr, verb, headers, body, "") + body;
        self.stream.write_all(head.as_bytes()).await.ok()?;
        self.answer().await
    }

    /// Writes `bytes` as they are (a request of the test's own making).
    pub async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// Reads one answer (within 30 s): its head, then a `Content-Length` or chunked
    /// body.
    pub async fn answer(&mut self) -> Option<Raw> {
        let mut raw = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        let read = async {
            loop {
                if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok());
                    let whole = match length {
                        Some(length) => raw.len() >= end + 4 + length,
                        None => raw.ends_with(b"\r\n0\r\n\r\n"),
                    };
                    if whole {
                        return Some(());
                    }
                }
                let n = self.stream.read(&mut buf).await.ok()?;
                if n == 0 {
                    return None;
                }
                raw.extend_from_slice(&buf[..n]);
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), read)
            .await
            .ok()
            .flatten()?;
        Some(parse(&raw))
    }
}

/// An HTTP answer read off a socket whole.
pub fn parse_raw(raw: &[u8]) -> Raw {
    parse(raw)
}

fn parse(raw: &[u8]) -> Raw {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Raw {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].strip_prefix("\r\n").unwrap_or(&tail[n..]);
    }
    out
}

/// The headers of a 2025-11-25 client on `session` (none before `initialize`).
pub fn legacy_headers(session: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".into(), "application/json".into()),
        (
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("MCP-Protocol-Version".into(), "2025-11-25".into()),
    ];
    if let Some(s) = session {
        h.push(("Mcp-Session-Id".into(), s.into()));
    }
    h
}

/// A JSON-RPC request without 2026-07-28 `_meta`.
pub fn legacy_body(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A 2025-11-25 `initialize` that declares elicitation.
pub fn initialize_body() -> String {
    legacy_body(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "1"}}),
    )
}

/// Opens a 2025-11-25 session; its id.
pub async fn open_session(addr: SocketAddr) -> String {
    let mut h = legacy_headers(None);
    set(&mut h, "MCP-Protocol-Version", None);
    let r = post(addr, &h, &initialize_body()).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    r.header("mcp-session-id")
        .expect("initialize names the session")
        .to_owned()
}

/// The `provision` example serving HTTP on a port it picks, as a child process (killed
/// on drop). Its stdout is read on after the listening line: the example narrates each
/// call there, and a full pipe would block it.
pub async fn provision_child() -> (tokio::process::Child, SocketAddr) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_provision"));
    command.args(["serve", "--http", "127.0.0.1:0"]);
    listening_child(command, "serving on http://").await
}

/// Spawns `command` (killed on drop) and waits for its first stdout line,
/// `<prefix>ADDR/mcp`; its later stdout is read and dropped, so a full pipe cannot block
/// it.
pub async fn listening_child(
    mut command: tokio::process::Command,
    prefix: &str,
) -> (tokio::process::Child, SocketAddr) {
    use tokio::io::AsyncBufReadExt;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().unwrap();
    let addr = line
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("the child said {line:?}"))
        .parse()
        .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}

/// One SSE event as it came off a socket.
#[derive(Debug, Default, Clone)]
pub struct SseEvent {
    pub id: Option<String>,
    pub retry: Option<u64>,
    /// The message, or `None` for a priming event.
    pub data: Option<Value>,
}

/// An SSE response read event by event as it arrives, on a raw socket.
pub struct SseSocket {
    lines: tokio::io::Lines<tokio::io::BufReader<TcpStream>>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl SseSocket {
    /// Sends the request and reads the answer's head.
    pub async fn open(
        addr: SocketAddr,
        verb: &str,
        headers: &[(String, String)],
        body: &str,
    ) -> Self {
        use tokio::io::AsyncBufReadExt;
        let stream = open(addr, verb, headers, body).await;
        let mut lines = tokio::io::BufReader::new(stream).lines();
        let status_line = lines.next_line().await.unwrap().unwrap_or_default();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut head = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.is_empty() {
                break;
            }
            if let Some((n, v)) = line.split_once(':') {
                head.push((n.trim().to_owned(), v.trim().to_owned()));
            }
        }
        Self {
            lines,
            status,
            headers: head,
        }
    }

    /// The next event, within 10 s; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<SseEvent> {
        tokio::time::timeout(std::time::Duration::from_secs(10), self.read_event())
            .await
            .expect("an SSE event within 10 s")
    }

    /// Whether no event comes within `wait`.
    pub async fn quiet_for(&mut self, wait: std::time::Duration) -> bool {
        tokio::time::timeout(wait, self.read_event()).await.is_err()
    }

    async fn read_event(&mut self) -> Option<SseEvent> {
        let mut event = SseEvent::default();
        let mut any = false;
        loop {
            let line = self.lines.next_line().await.ok()??;
            let line = line.trim_end_matches('\r');
            // Chunk-size lines and the chunks' own line endings carry no field.
            let Some((field, value)) = line.split_once(':') else {
                if line.is_empty() && any {
                    return Some(event);
                }
                continue;
            };
            let value = value.strip_prefix(' ').unwrap_or(value);
            any = true;
            match field {
                "id" => event.id = Some(value.to_owned()),
                "retry" => event.retry = value.parse().ok(),
                "data" if !value.is_empty() => {
                    event.data = Some(serde_json::from_str(value).unwrap())
                }
                _ => {}
            }
        }
    }

    /// The next event that carries a message.
    pub async fn next_message(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            let event = self.next().await?;
            if let Some(data) = event.data {
                return Some((event.id, data));
            }
        }
    }
}

/// A figure of process `pid`'s memory from `/proc`, in KiB: `VmRSS` (resident now) or
/// `VmHWM` (its peak).
pub fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}
