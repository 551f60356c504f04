//! The Streamable HTTP server: a [`Server`] on one endpoint, served by its own accept
//! loop ([`HttpServer::serve`]) or embedded in an axum app ([`HttpServer::router`]).
//!
//! ```no_run
//! # async fn demo(server: tern::server::Server) -> std::io::Result<()> {
//! use tern::server::http::HttpServer;
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! // Serves until `_stop` is used or dropped, then finishes the requests in flight.
//! HttpServer::new(server)
//!     .serve(listener, async move { let _ = stopped.await; })
//!     .await
//! # }
//! ```
//!
//! What a POST goes through, in order: the `Host`/`Origin` check (403), the bearer token
//! (401), the body size limit (413), JSON-RPC parsing (400), the metadata headers against
//! the body (400 with -32020), the method (404 with -32601), then the handler.
//!
//! **JSON or SSE.** A request is answered with one `application/json` object unless its
//! handler sends a notification (progress, log) on the request's stream before it
//! returns: the first notification switches the response to `text/event-stream`, which
//! carries the notifications as they come and ends with the response. A client whose
//! `Accept` lists only `text/event-stream` always gets a stream; one that does not list
//! it gets JSON, and its notifications are dropped.
//!
//! **Cancellation.** Closing the connection (or the SSE stream) of a 2026-07-28
//! request drops the handler's future and cancels its
//! [`CancellationToken`](tokio_util::sync::CancellationToken). On a 2025-11-25 session
//! a dropped stream is not a cancellation: the handler goes on, and the client resumes.
//!
//! **Both eras.** By default the endpoint also serves 2025-11-25 clients: a request
//! without the 2026-07-28 `_meta` (and without a 2026-07-28 `MCP-Protocol-Version`) is
//! of that era. `initialize` opens a session named in the `Mcp-Session-Id` response
//! header; later requests name it (400 without the header, 404 once it is gone: the
//! client then initializes again) and are served with the session's capabilities. A
//! handler's request to the client (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) goes out on the SSE stream of the request it serves, and the client
//! POSTs its answer (202). GET opens the session's standalone stream, where its
//! notifications outside any request go (list changes, updates of the resources it
//! subscribed to, [`Server::publish`]ed logs). Every session stream opens with a
//! priming event carrying `retry` and gives each event an id; a client that lost one
//! GETs with `Last-Event-ID` and gets what it missed from the [`EventStore`], then the
//! rest live. DELETE ends a session; idle ones expire
//! ([`with_session_idle_timeout`](HttpServer::with_session_idle_timeout)). Sessions
//! live in the process, so instances behind a load balancer need sticky routing on
//! `Mcp-Session-Id` for 2025-11-25 clients, while 2026-07-28 requests may land
//! anywhere. [`stateless_only`](HttpServer::stateless_only) turns sessions off.

mod app;
mod budget;
mod conn;
mod events;
mod guard;
#[cfg(feature = "http-server-h2")]
mod h2;
mod headers;
mod listen;
mod overload;
mod post;
mod protected;
mod reply;
mod sessions;
mod sse;
mod stream;
mod streams;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;

pub use events::{
    DEFAULT_EVENT_AGE, DEFAULT_EVENT_BYTES, DEFAULT_EVENT_BYTES_PER_SESSION,
    DEFAULT_EVENTS_PER_SESSION, EventStore, MemoryEventStore, Replay,
};
pub use guard::HostPolicy;
pub use protected::{ProtectedResource, RequiredScopes};
pub use sessions::{
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, DEFAULT_SESSION_IDLE_TIMEOUT,
};
pub use stream::DEFAULT_SSE_RETRY;

use crate::auth::TokenVerifier;
use crate::server::Server;
use crate::transport::http::ParamHeader;

/// The default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a connection may take to send a request's head (default 10 s). It starts
/// when the connection opens, or when the first byte of a later request arrives.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request's body may take to arrive once its head is in (default 30 s).
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a keep-alive connection may wait between requests (default 60 s).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a request may take from its body's last byte to its response's last byte
/// (default 5 minutes): the handler, its SSE stream, and the client reading it.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// How many connections [`HttpServer::serve`] holds open at once (default 1,000; keep
/// it under the process's file-descriptor limit).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1_000;

/// Looks up the `x-mcp-header` annotations of a tool by name.
pub type ToolHeaders = Arc<dyn Fn(&str) -> Option<Vec<ParamHeader>> + Send + Sync>;

/// A Streamable HTTP endpoint for a [`Server`]. Settings are `with_*` methods; then
/// [`router`](Self::router) to embed it in an axum app, or [`serve`](Self::serve).
#[derive(Clone)]
pub struct HttpServer {
    server: Server,
    path: String,
    max_body_bytes: usize,
    hosts: HostPolicy,
    hosts_explicit: bool,
    verifier: Option<Arc<dyn TokenVerifier>>,
    resource_metadata: Option<String>,
    protected: Option<Arc<ProtectedResource>>,
    required_scopes: Option<RequiredScopes>,
    tool_headers: Option<ToolHeaders>,
    /// `None` serves 2026-07-28 only; else the limits of 2025-11-25 sessions.
    sessions: Option<sessions::Limits>,
    budgets: conn::Budgets,
    max_connections: usize,
    #[cfg(feature = "http-server-tls")]
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("server", &self.server)
            .field("path", &self.path)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("hosts", &self.hosts)
            .field("authenticated", &self.verifier.is_some())
            .field("sessions", &self.sessions)
            .field("budgets", &self.budgets)
            .field("max_connections", &self.max_connections)
            .finish_non_exhaustive()
    }
}

/// What the request handler shares across requests.
pub(crate) struct Shared {
    pub(crate) server: Server,
    pub(crate) max_body_bytes: usize,
    pub(crate) hosts: HostPolicy,
    pub(crate) verifier: Option<Arc<dyn TokenVerifier>>,
    pub(crate) resource_metadata: Option<String>,
    pub(crate) protected: Option<Arc<ProtectedResource>>,
    pub(crate) required_scopes: Option<RequiredScopes>,
    pub(crate) tool_headers: Option<ToolHeaders>,
    pub(crate) sessions: Option<sessions::Sessions>,
    /// Cancelled when the endpoint starts draining: it ends the streams that never end
    /// on their own, `subscriptions/listen` and a session's GET stream.
    pub(crate) closing: tokio_util::sync::CancellationToken,
    /// Those streams, counted per caller and in all.
    pub(crate) streams: Arc<streams::Streams>,
}

impl HttpServer {
    /// An endpoint at `/mcp` for `server`, with a 4 MiB body limit, accepting only
    /// loopback `Host` and `Origin` values (see [`with_hosts`](Self::with_hosts)), and no
    /// authentication.
    pub fn new(server: Server) -> Self {
        Self {
            server,
            path: "/mcp".into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            hosts: HostPolicy::Loopback,
            hosts_explicit: false,
            verifier: None,
            resource_metadata: None,
            protected: None,
            required_scopes: None,
            tool_headers: None,
            sessions: Some(sessions::Limits {
                idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
                max: DEFAULT_MAX_SESSIONS,
                per_principal: DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
                store: Arc::new(events::MemoryEventStore::default()),
                retry: stream::DEFAULT_SSE_RETRY,
            }),
            budgets: conn::Budgets {
                header: DEFAULT_HEADER_TIMEOUT,
                body: DEFAULT_BODY_TIMEOUT,
                idle: DEFAULT_IDLE_TIMEOUT,
                request: Some(DEFAULT_REQUEST_TIMEOUT),
            },
            max_connections: DEFAULT_MAX_CONNECTIONS,
            #[cfg(feature = "http-server-tls")]
            tls: None,
        }
    }

    /// Closes a connection that takes longer than `timeout` to send a request's head,
    /// counted from the connection's opening or from the first byte of a later request
    /// (default [`DEFAULT_HEADER_TIMEOUT`]). This is what ends a slowloris connection.
    /// Enforced by [`serve`](Self::serve); an app embedding [`router`](Self::router)
    /// sets its own.
    pub fn with_header_timeout(mut self, timeout: Duration) -> Self {
        self.budgets.header = timeout;
        self
    }

    /// Closes a connection whose request body takes longer than `timeout` to arrive
    /// once its head is in (default [`DEFAULT_BODY_TIMEOUT`]).
    pub fn with_body_timeout(mut self, timeout: Duration) -> Self {
        self.budgets.body = timeout;
        self
    }

    /// Closes a keep-alive connection after `timeout` without a request (default
    /// [`DEFAULT_IDLE_TIMEOUT`]).
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.budgets.idle = timeout;
        self
    }

    /// Closes a connection whose request is not answered, to its last byte, within
    /// `timeout` of its body arriving (default [`DEFAULT_REQUEST_TIMEOUT`]; `None` for
    /// no limit): the handler is dropped and its cancellation token fires. Long work
    /// belongs in a task, which answers at once.
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.budgets.request = timeout;
        self
    }

    /// Holds at most `max` connections open (default [`DEFAULT_MAX_CONNECTIONS`]). At
    /// the cap a new connection closes the one that has waited longest (at least a
    /// second) without a request in flight; when none can go, the new connection's
    /// request is answered 503 with `Retry-After`. A [`router`](Self::router) holds at
    /// most `max` requests under way, and answers the next ones so.
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// Serves TLS (rustls) on every connection [`serve`](Self::serve) accepts: HTTP/2
    /// when the client's ALPN offers `h2` (with the `http-server-h2` feature), else
    /// HTTP/1.1. `config` keeps the ALPN protocols it names; without any, it offers
    /// `h2` and `http/1.1`. The handshake counts within the header budget.
    #[cfg(feature = "http-server-tls")]
    pub fn with_tls(mut self, mut config: rustls::ServerConfig) -> Self {
        if config.alpn_protocols.is_empty() {
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        }
        if !cfg!(feature = "http-server-h2") {
            config.alpn_protocols.retain(|p| p != b"h2");
        }
        self.tls = Some(Arc::new(config));
        self
    }

    /// Serves 2026-07-28 only: no 2025-11-25 sessions, and GET and DELETE get 405.
    pub fn stateless_only(mut self) -> Self {
        self.sessions = None;
        self
    }

    /// Where 2025-11-25 sessions' SSE events are kept for clients that reconnect with
    /// `Last-Event-ID` (default [`MemoryEventStore::default`]: 1,000 events per session,
    /// five minutes each).
    pub fn with_event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        if let Some(limits) = &mut self.sessions {
            limits.store = store;
        }
        self
    }

    /// The `retry` every session stream's priming event tells the client to wait
    /// before reconnecting (default [`DEFAULT_SSE_RETRY`]).
    pub fn with_sse_retry(mut self, retry: Duration) -> Self {
        if let Some(limits) = &mut self.sessions {
            limits.retry = retry;
        }
        self
    }

    /// Ends a 2025-11-25 session after `timeout` without a request (default one hour).
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        if let Some(limits) = &mut self.sessions {
            limits.idle_timeout = timeout;
        }
        self
    }

    /// Holds at most `max` 2025-11-25 sessions at once (default 10,000). At the cap,
    /// `initialize` ends the least recently used session that is serving nothing; only
    /// when every session is busy is it refused (503).
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        if let Some(limits) = &mut self.sessions {
            limits.max = max;
        }
        self
    }

    /// With a token verifier, holds at most `max` sessions per caller (default
    /// [`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`]): a caller at its cap gives up its own
    /// least recently used session, so one caller cannot push the others out.
    pub fn with_max_sessions_per_principal(mut self, max: usize) -> Self {
        if let Some(limits) = &mut self.sessions {
            limits.per_principal = max;
        }
        self
    }

    /// The endpoint's path (default `/mcp`).
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Bodies larger than `bytes` get 413.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Which `Host` and `Origin` values are accepted (DNS-rebinding protection). The
    /// default is [`HostPolicy::Loopback`]; [`serve`](Self::serve) relaxes it to
    /// [`HostPolicy::Any`] on a listener that is not bound to a loopback address, unless
    /// a policy was set here.
    pub fn with_hosts(mut self, hosts: HostPolicy) -> Self {
        self.hosts = hosts;
        self.hosts_explicit = true;
        self
    }

    /// Requires `Authorization: Bearer ...` on every request, checked by `verifier`.
    pub fn with_token_verifier(mut self, verifier: Arc<dyn TokenVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// The protected resource metadata URL advertised in `WWW-Authenticate` on a 401.
    pub fn with_resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// Serves `metadata` as the endpoint's Protected Resource Metadata (RFC 9728) at
    /// `/.well-known/oauth-protected-resource{path}` and at the root well-known URI,
    /// and points every 401 and 403 challenge to it (unless
    /// [`with_resource_metadata`](Self::with_resource_metadata) names another URL).
    pub fn with_protected_resource(mut self, metadata: ProtectedResource) -> Self {
        if self.resource_metadata.is_none() {
            self.resource_metadata = Some(metadata.well_known().1);
        }
        self.protected = Some(Arc::new(metadata));
        self
    }

    /// The scopes each request needs, by method and target (a tool or prompt name, a
    /// resource URI), such as [`McpServer::required_scopes`](crate::mcp::McpServer::required_scopes):
    /// with a token verifier, a request whose token lacks one gets 403
    /// `insufficient_scope` naming all it needs, before it is served.
    pub fn with_required_scopes(
        mut self,
        lookup: impl Fn(&str, Option<&str>) -> Option<Vec<String>> + Send + Sync + 'static,
    ) -> Self {
        self.required_scopes = Some(Arc::new(lookup));
        self
    }

    /// How to find a tool's `x-mcp-header` annotations, so `tools/call` requests have
    /// their `Mcp-Param-*` headers checked against the arguments. Without it only the
    /// standard headers are checked.
    pub fn with_tool_headers(
        mut self,
        lookup: impl Fn(&str) -> Option<Vec<ParamHeader>> + Send + Sync + 'static,
    ) -> Self {
        self.tool_headers = Some(Arc::new(lookup));
        self
    }

    /// The endpoint as an axum router, to serve alone or merge into an app. GET opens a
    /// 2025-11-25 session's standalone stream and DELETE ends the session (both 405 when
    /// [`stateless_only`](Self::stateless_only)); every other method gets 405.
    ///
    /// The router carries the body and request budgets and the cap (as requests under
    /// way, at most [`with_max_connections`](Self::with_max_connections)) as a tower
    /// layer: the header and idle budgets are the accepting server's to enforce (hyper's
    /// `header_read_timeout`, say), since they come before any request exists.
    pub fn router(self) -> Router {
        let path = self.path.clone();
        let limits = budget::Limits::new(self.budgets, self.max_connections);
        app::router(Arc::new(self.into_shared()), &path, limits)
    }

    /// Serves on `listener` until `shutdown` resolves, then stops accepting and waits for
    /// in-flight requests to finish (each within its budgets). Serves HTTP/1.1 on tern's
    /// own connections, and HTTP/2 (by TLS's ALPN, or in clear by prior knowledge)
    /// through hyper's, each with the header, body, idle and request timeouts and the
    /// connection cap set here; TLS if [`with_tls`](Self::with_tls) set it.
    pub async fn serve(
        mut self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        if !self.hosts_explicit && !listener.local_addr()?.ip().is_loopback() {
            self.hosts = HostPolicy::Any;
        }
        let path = self.path.clone();
        let registry = conn::Registry::new(self.budgets, self.max_connections);
        #[cfg(feature = "http-server-h2")]
        let limits = budget::Limits::new(self.budgets, self.max_connections);
        #[cfg(feature = "http-server-tls")]
        let tls = self.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        let shared = Arc::new(self.into_shared());
        let protocols = listen::Protocols {
            #[cfg(feature = "http-server-h2")]
            h2: app::router(Arc::clone(&shared), &path, limits),
            #[cfg(feature = "http-server-tls")]
            tls,
        };
        listen::serve(shared, path, listener, registry, protocols, shutdown).await
    }

    pub(crate) fn into_shared(self) -> Shared {
        Shared {
            server: self.server,
            max_body_bytes: self.max_body_bytes,
            hosts: self.hosts,
            verifier: self.verifier,
            resource_metadata: self.resource_metadata,
            protected: self.protected,
            required_scopes: self.required_scopes,
            tool_headers: self.tool_headers,
            sessions: self.sessions.map(sessions::Sessions::new),
            closing: tokio_util::sync::CancellationToken::new(),
            streams: streams::Streams::new(self.max_connections),
        }
    }
}

/// The endpoint the `serve_post` fuzz target drives (feature `fuzzing`): a `tools/call`
/// handler behind every check, `Mcp-Param-Region` annotated on the `sql` tool.
#[cfg(feature = "fuzzing")]
pub(crate) struct Fuzzed(Shared);

#[cfg(feature = "fuzzing")]
impl Fuzzed {
    pub(crate) fn new() -> Option<Self> {
        use crate::types::v2026_07_28::{CallToolResult, method};
        let server = Server::builder("fuzz", "1")
            .handle::<method::CallTool, _, _>(|_ctx, _params| async {
                Ok(CallToolResult::new(Vec::new()).into())
            })
            .build()
            .ok()?;
        let shared = HttpServer::new(server)
            .with_tool_headers(|tool| {
                (tool == "sql").then(|| {
                    vec![ParamHeader {
                        name: "Region".into(),
                        path: vec!["region".into()],
                    }]
                })
            })
            .into_shared();
        Some(Self(shared))
    }

    pub(crate) async fn post(&self, headers: &http::HeaderMap, body: Vec<u8>) -> u16 {
        let body = http_body_util::Full::new(bytes::Bytes::from(body));
        post::handle_post(&self.0, headers, body, None)
            .await
            .status()
            .as_u16()
    }
}
