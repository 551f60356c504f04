//! The budgets an HTTP endpoint holds its connections, requests and sessions to.

use std::time::Duration;

/// What an [`HttpServer`](super::HttpServer) allows each connection, request and
/// 2025-11-25 session: plain data, read when the endpoint starts. Start from
/// [`Default`] and change what you need:
///
/// ```
/// use std::time::Duration;
/// use tern_mcp::http::HttpLimits;
///
/// let mut limits = HttpLimits::default();
/// limits.request_timeout = Some(Duration::from_secs(30));
/// limits.max_connections = 200;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// How long a connection may take to send a request's head, counted from its opening
    /// or from the first byte of a later request (default 10 s). This is what ends a
    /// slowloris connection. Enforced by [`serve`](super::HttpServer::serve); an app
    /// embedding [`router`](super::HttpServer::router) sets its own.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive once its head is in (default 30 s).
    pub body_timeout: Duration,
    /// How long a keep-alive connection may wait between requests (default 60 s).
    pub idle_timeout: Duration,
    /// How long a request may take from its body's last byte to its response's last byte
    /// (default 5 minutes; `None` for no limit): past it the handler is dropped and its
    /// cancellation token fires. Long work belongs in a task, which answers at once.
    pub request_timeout: Option<Duration>,
    /// Connections held open at once (default 1,000; keep it under the process's
    /// file-descriptor limit). At the cap a new connection closes a kept-alive one idle
    /// between requests (the longest idle), else the one that has waited longest in its
    /// head (at least a second: its first request may be on its way); when none can go, the
    /// new connection's request is answered 503 with `Retry-After`. A
    /// [`router`](super::HttpServer::router) holds at most this many requests under way.
    pub max_connections: usize,
    /// Bodies larger than this get 413 (default 4 MiB).
    pub max_body_bytes: usize,
    /// A 2025-11-25 session ends after this long without a request (default one hour).
    pub session_idle_timeout: Duration,
    /// 2025-11-25 sessions held at once (default 10,000). At the cap, `initialize` ends
    /// the least recently used session that is serving nothing; only when every session
    /// is busy is it refused (503).
    pub max_sessions: usize,
    /// With a token verifier, sessions held per caller (default 100): a caller at its cap
    /// gives up its own least recently used session, so one caller cannot push the
    /// others out.
    pub max_sessions_per_principal: usize,
    /// The `retry` every session stream's priming event tells the client to wait before
    /// reconnecting (default 1 s).
    pub sse_retry: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            request_timeout: Some(Duration::from_secs(300)),
            max_connections: 1_000,
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(60 * 60),
            max_sessions: 10_000,
            max_sessions_per_principal: 100,
            sse_retry: Duration::from_secs(1),
        }
    }
}
