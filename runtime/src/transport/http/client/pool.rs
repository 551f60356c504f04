//! The transport's keep-alive connections to its one endpoint, each one speaking
//! HTTP/1.1 through [`h1`](super::super::h1) in the task that sends on it.
//!
//! A transport talks to a single endpoint, so its pool is a stack of idle connections,
//! not a map keyed by host: a request takes the most recently used one (or connects),
//! and the response's body gives it back once it has been read to the end. A body
//! dropped before its end closes its connection, which is how an abandoned request
//! reaches the server. A connection the server closed while it sat idle is noticed
//! before a request is written on it, and replaced; connections idle for longer than
//! the idle timeout are closed.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HOST;
use http::{HeaderMap, HeaderValue, Request, Uri};
use tower_service::Service;

use super::super::h1::{self, Answer, Conn, Outgoing, Recycle};
use super::Connector;
use crate::util::lock;

/// Why a request could not be sent.
#[derive(Debug)]
pub(super) enum PoolError {
    /// No connection could be made.
    Connect(Box<dyn std::error::Error + Send + Sync>),
    /// The connection failed while the request was sent or its answer awaited.
    Send(h1::Error),
}

impl PoolError {
    /// The connector failed (its error type depends on whether TLS is built in).
    fn connect(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Connect(e.into())
    }
}

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Worded as hyper-util's client worded them, which callers may have matched.
        match self {
            Self::Connect(_) => f.write_str("client error (Connect)"),
            Self::Send(_) => f.write_str("client error (SendRequest)"),
        }
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Connect(e) => Some(e.as_ref()),
            Self::Send(e) => Some(e),
        }
    }
}

/// The connections to one endpoint. Cheap to clone; clones share the connections.
#[derive(Clone)]
pub(super) struct Pool(Arc<Shared>);

struct Shared {
    connector: Connector,
    /// Where to connect: the endpoint URL.
    endpoint: Uri,
    /// The endpoint as a request target (its path and query).
    target: String,
    /// The `Host` header of every request.
    host: Option<HeaderValue>,
    idle_timeout: Duration,
    idle: Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    /// Connections whose last answer was read to the end, the most recent last.
    connections: Vec<(Conn, Instant)>,
    /// Whether the task that closes connections idle too long is running.
    reaping: bool,
}

impl Recycle for Shared {
    fn recycle(self: Arc<Self>, conn: Conn) {
        let mut idle = lock(&self.idle);
        idle.connections.push((conn, Instant::now()));
        if !idle.reaping {
            idle.reaping = true;
            tokio::spawn(reap(Arc::downgrade(&self)));
        }
    }
}

/// Closes connections idle for longer than the pool's idle timeout, until none is
/// left idle or the pool is gone.
async fn reap(pool: Weak<Shared>) {
    loop {
        let Some(timeout) = pool.upgrade().map(|p| p.idle_timeout) else {
            return;
        };
        tokio::time::sleep(timeout).await;
        let Some(pool) = pool.upgrade() else { return };
        let mut idle = lock(&pool.idle);
        idle.connections
            .retain(|(_, since)| since.elapsed() < timeout);
        if idle.connections.is_empty() {
            idle.reaping = false;
            return;
        }
    }
}

impl Pool {
    pub(super) fn new(connector: Connector, endpoint: Uri, idle_timeout: Duration) -> Self {
        let target = endpoint
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        Self(Arc::new(Shared {
            connector,
            host: host_value(&endpoint),
            endpoint,
            target,
            idle_timeout,
            idle: Mutex::default(),
        }))
    }

    /// Sends `request` (to the endpoint, whatever its URI says), with the `Host` field
    /// when it has none, on an idle connection or a new one. The response's body gives
    /// the connection back when read to its end.
    pub(super) async fn send(&self, request: Request<Bytes>) -> Result<Answer, PoolError> {
        self.send_outgoing(self.outgoing(request)).await
    }

    /// `request` as written, with the `Host` field when it has none.
    pub(super) fn outgoing(&self, mut request: Request<Bytes>) -> Outgoing {
        self.with_host(request.headers_mut());
        Outgoing::from(request)
    }

    /// Adds the endpoint's `Host` field to `headers` when they have none.
    pub(super) fn with_host(&self, headers: &mut HeaderMap) {
        if let Some(host) = &self.0.host {
            headers.entry(HOST).or_insert_with(|| host.clone());
        }
    }

    /// Sends `request`, whose fields are written as they are (its `Host` included).
    pub(super) async fn send_outgoing(&self, request: Outgoing) -> Result<Answer, PoolError> {
        let conn = match self.idle() {
            Some(conn) => conn,
            // Boxed: connecting is rare, and its future would otherwise make every
            // send (and each exchange around it) that much larger to move.
            None => Box::pin(self.connect()).await?,
        };
        let recycle: Arc<dyn Recycle> = self.0.clone();
        conn.send(&request, &self.0.target, recycle)
            .await
            .map_err(PoolError::Send)
    }

    /// The most recently used idle connection that is still open.
    fn idle(&self) -> Option<Conn> {
        loop {
            let (mut conn, since) = lock(&self.0.idle).connections.pop()?;
            if since.elapsed() < self.0.idle_timeout && !conn.is_closed() {
                return Some(conn);
            }
        }
    }

    /// A new connection.
    async fn connect(&self) -> Result<Conn, PoolError> {
        let mut connector = self.0.connector.clone();
        std::future::poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(PoolError::connect)?;
        let io = connector
            .call(self.0.endpoint.clone())
            .await
            .map_err(PoolError::connect)?;
        Ok(stream(io))
    }
}

/// The connector's stream as Tokio's: plain TCP, or TLS over it.
#[cfg(feature = "http-client-tls")]
fn stream(
    io: hyper_rustls::MaybeHttpsStream<hyper_util::rt::TokioIo<tokio::net::TcpStream>>,
) -> Conn {
    match io {
        hyper_rustls::MaybeHttpsStream::Http(tcp) => Conn::new(tcp.into_inner()),
        hyper_rustls::MaybeHttpsStream::Https(tls) => Conn::new(tls.into_inner()),
    }
}

/// The connector's stream as Tokio's.
#[cfg(not(feature = "http-client-tls"))]
fn stream(io: hyper_util::rt::TokioIo<tokio::net::TcpStream>) -> Conn {
    Conn::new(io.into_inner())
}

/// The `Host` header for `uri`: its host, and its port unless the scheme's default.
fn host_value(uri: &Uri) -> Option<HeaderValue> {
    let host = uri.host()?;
    let default_port = if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    match uri.port_u16().filter(|p| *p != default_port) {
        Some(port) => HeaderValue::try_from(format!("{host}:{port}")).ok(),
        None => HeaderValue::try_from(host).ok(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http_body_util::BodyExt as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    use super::*;

    /// A server answering `{}` to every request, closing each connection after
    /// `answers_per_connection` answers; counts the connections it accepted.
    async fn server(answers_per_connection: usize) -> (Uri, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri: Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&accepted);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    for _ in 0..answers_per_connection {
                        // Requests here have no body: the head ends the request.
                        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
                            let mut chunk = [0u8; 1024];
                            match socket.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                        }
                        buffer.clear();
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
                        if socket.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (uri, accepted)
    }

    fn pool(uri: Uri, idle_timeout: Duration) -> Pool {
        #[cfg(feature = "http-client-tls")]
        let connector = super::super::builder::connector(Duration::from_secs(5), Vec::new());
        #[cfg(not(feature = "http-client-tls"))]
        let connector = super::super::builder::connector(Duration::from_secs(5));
        Pool::new(connector.unwrap(), uri, idle_timeout)
    }

    async fn get(pool: &Pool) -> Bytes {
        let response = pool.send(Request::new(Bytes::new())).await.unwrap();
        response.body.collect().await.unwrap().to_bytes()
    }

    #[tokio::test]
    async fn sequential_requests_share_one_connection() {
        let (uri, accepted) = server(usize::MAX).await;
        let pool = pool(uri, Duration::from_secs(90));
        for _ in 0..3 {
            assert_eq!(get(&pool).await, "{}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_replaced_unnoticed() {
        let (uri, accepted) = server(1).await;
        let pool = pool(uri, Duration::from_secs(90));
        for round in 0..6 {
            assert_eq!(get(&pool).await, "{}");
            // Let the close arrive, or not: either way the next request succeeds.
            if round % 2 == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 6);
    }

    #[tokio::test]
    async fn a_connection_idle_past_the_timeout_is_not_reused() {
        let (uri, accepted) = server(usize::MAX).await;
        let pool = pool(uri, Duration::from_millis(50));
        get(&pool).await;
        tokio::time::sleep(Duration::from_millis(120)).await;
        get(&pool).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
        assert!(lock(&pool.0.idle).connections.len() <= 1);
    }

    #[tokio::test]
    async fn an_abandoned_answer_closes_its_connection() {
        let (uri, accepted) = server(usize::MAX).await;
        let pool = pool(uri, Duration::from_secs(90));
        let response = pool.send(Request::new(Bytes::new())).await.unwrap();
        drop(response);
        get(&pool).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }
}
