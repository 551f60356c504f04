//! The transport's keep-alive connections to its one endpoint, on hyper's HTTP/1
//! connection API.
//!
//! A transport talks to a single endpoint, so its pool is a stack of idle connections,
//! not a map keyed by host: a request takes the most recently used one (or connects),
//! and gives it back once its answer has been read to the end. This is what the general
//! pool of `hyper_util` did for it, without that pool's per-request checkout race, key
//! hashing and the task it spawned to wait for each connection to become ready again.
//! As there, a request refused unread by a connection that the server closed while it
//! sat idle goes once more on a new one, and connections idle for longer than the idle
//! timeout are closed.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HOST;
use http::{HeaderValue, Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use tower_service::Service;

use super::Connector;
use crate::util::lock;

type Sender = SendRequest<Full<Bytes>>;

/// Why a request could not be sent.
#[derive(Debug)]
pub(super) enum PoolError {
    /// No connection could be made.
    Connect(Box<dyn std::error::Error + Send + Sync>),
    /// The connection failed while the request was sent or its answer awaited.
    Send(hyper::Error),
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
    origin: Uri,
    /// The `Host` header of every request.
    host: Option<HeaderValue>,
    idle_timeout: Duration,
    idle: Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    /// Connections whose last answer was read to the end, the most recent last.
    connections: Vec<(Sender, Instant)>,
    /// Whether the task that closes connections idle too long is running.
    reaping: bool,
}

/// A connection lent to one request: given back with [`Lease::release`] once the answer
/// has been read to the end, else closed when dropped (which is how an abandoned
/// request reaches the server: its connection goes).
pub(super) struct Lease {
    pool: Pool,
    sender: Sender,
}

impl Lease {
    /// Gives the connection back for the next request.
    pub(super) fn release(self) {
        if self.sender.is_closed() {
            return;
        }
        let mut idle = lock(&self.pool.0.idle);
        idle.connections.push((self.sender, Instant::now()));
        if !idle.reaping {
            idle.reaping = true;
            tokio::spawn(reap(Arc::downgrade(&self.pool.0)));
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
        let origin = endpoint
            .path_and_query()
            .and_then(|p| Uri::try_from(p.as_str()).ok())
            .unwrap_or_else(|| Uri::from_static("/"));
        Self(Arc::new(Shared {
            connector,
            host: host_value(&endpoint),
            endpoint,
            origin,
            idle_timeout,
            idle: Mutex::default(),
        }))
    }

    /// Sends `request` (to the endpoint, whatever its URI says) on an idle connection
    /// or a new one.
    pub(super) async fn send(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(Response<Incoming>, Lease), PoolError> {
        *request.uri_mut() = self.0.origin.clone();
        if let Some(host) = &self.0.host {
            request
                .headers_mut()
                .entry(HOST)
                .or_insert_with(|| host.clone());
        }
        loop {
            let (mut sender, reused) = match self.idle().await {
                Some(sender) => (sender, true),
                // Boxed: connecting is rare, and its future would otherwise make every
                // send (and each exchange around it) that much larger to move.
                None => (Box::pin(self.connect()).await?, false),
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let lease = Lease {
                        pool: self.clone(),
                        sender,
                    };
                    return Ok((response, lease));
                }
                Err(mut refused) => match refused.take_message() {
                    // Never written: the server had closed the idle connection.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(PoolError::Send(refused.into_error())),
                },
            }
        }
    }

    /// The most recently used idle connection that is still open, ready for a request.
    async fn idle(&self) -> Option<Sender> {
        loop {
            let (mut sender, since) = lock(&self.0.idle).connections.pop()?;
            if sender.is_closed() || since.elapsed() >= self.0.idle_timeout {
                continue;
            }
            // Given back as soon as its answer was read; the connection may still be
            // settling into its next request.
            if sender.is_ready() || sender.ready().await.is_ok() {
                return Some(sender);
            }
        }
    }

    /// A new connection, its I/O driven by a task of its own.
    async fn connect(&self) -> Result<Sender, PoolError> {
        let mut connector = self.0.connector.clone();
        std::future::poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(PoolError::connect)?;
        let io = connector
            .call(self.0.endpoint.clone())
            .await
            .map_err(PoolError::connect)?;
        let (sender, connection) = http1::handshake(io).await.map_err(PoolError::Send)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "an HTTP connection ended with an error");
            }
        });
        Ok(sender)
    }
}

/// The `Host` header for `uri`: its host, and its port unless the scheme's default.
pub(super) fn host_value(uri: &Uri) -> Option<HeaderValue> {
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
        let request = Request::new(Full::new(Bytes::new()));
        let (response, lease) = pool.send(request).await.unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        lease.release();
        body
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
        let (response, lease) = pool
            .send(Request::new(Full::new(Bytes::new())))
            .await
            .unwrap();
        drop((response, lease));
        get(&pool).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }
}
