//! The Streamable HTTP server: an axum [`Router`] serving a [`Server`] on one endpoint.
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
//! **Cancellation.** Closing the connection (or the SSE stream) drops the handler's
//! future and cancels its [`CancellationToken`](tokio_util::sync::CancellationToken).
//!
//! **Both eras.** By default the endpoint also serves 2025-11-25 clients: a request
//! without the 2026-07-28 `_meta` (and without a 2026-07-28 `MCP-Protocol-Version`) is
//! of that era. `initialize` opens a session named in the `Mcp-Session-Id` response
//! header; later requests name it (400 without the header, 404 once it is gone: the
//! client then initializes again) and are served with the session's capabilities. A
//! handler's request to the client (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) goes out on the SSE stream of the request it serves, and the client
//! POSTs its answer (202). DELETE ends a session; idle ones expire
//! ([`with_session_idle_timeout`](HttpServer::with_session_idle_timeout)). Sessions
//! live in the process, so instances behind a load balancer need sticky routing on
//! `Mcp-Session-Id` for 2025-11-25 clients, while 2026-07-28 requests may land
//! anywhere. [`modern_only`](HttpServer::modern_only) turns sessions off.

mod guard;
mod headers;
mod post;
mod sessions;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::post;
use axum::serve::ListenerExt as _;

pub use guard::HostPolicy;
pub use sessions::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT};

use crate::auth::TokenVerifier;
use crate::server::Server;
use crate::transport::http::ParamHeader;

/// The default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

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
    tool_headers: Option<ToolHeaders>,
    /// `None` serves 2026-07-28 only; else the idle timeout and cap of 2025-11-25 sessions.
    sessions: Option<(Duration, usize)>,
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
    pub(crate) tool_headers: Option<ToolHeaders>,
    pub(crate) sessions: Option<sessions::Sessions>,
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
            tool_headers: None,
            sessions: Some((DEFAULT_SESSION_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS)),
        }
    }

    /// Serves 2026-07-28 only: no 2025-11-25 sessions, and DELETE gets 405 like GET.
    pub fn modern_only(mut self) -> Self {
        self.sessions = None;
        self
    }

    /// Ends a 2025-11-25 session after `timeout` without a request (default one hour).
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        if let Some((idle, _)) = &mut self.sessions {
            *idle = timeout;
        }
        self
    }

    /// Refuses (503) to open more than `max` 2025-11-25 sessions at once, after
    /// expiring the idle ones (default 10,000).
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        if let Some((_, cap)) = &mut self.sessions {
            *cap = max;
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

    /// The endpoint as an axum router, to serve alone or merge into an app. DELETE ends
    /// a 2025-11-25 session (405 when [`modern_only`](Self::modern_only)); GET and every
    /// other method get 405: the server's messages travel on the stream of the request
    /// they belong to, so there is no standalone stream.
    pub fn router(self) -> Router {
        let path = self.path.clone();
        let shared = Arc::new(self.into_shared());
        let on_delete = shared.sessions.is_some().then(|| Arc::clone(&shared));
        let mut route = post(move |request: axum::extract::Request| {
            let shared = Arc::clone(&shared);
            async move { post::handle_post(&shared, request).await }
        });
        if let Some(shared) = on_delete {
            route = route.delete(move |request: axum::extract::Request| {
                let shared = Arc::clone(&shared);
                async move { post::handle_delete(&shared, request).await }
            });
        }
        Router::new().route(&path, route)
    }

    /// Serves on `listener` until `shutdown` resolves, then stops accepting and waits for
    /// in-flight requests to finish.
    pub async fn serve(
        mut self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        if !self.hosts_explicit && !listener.local_addr()?.ip().is_loopback() {
            self.hosts = HostPolicy::Any;
        }
        // Without TCP_NODELAY, an SSE stream's second small write can wait for the
        // client's delayed ACK (tens of milliseconds).
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "could not set TCP_NODELAY");
            }
        });
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }

    fn into_shared(self) -> Shared {
        Shared {
            server: self.server,
            max_body_bytes: self.max_body_bytes,
            hosts: self.hosts,
            verifier: self.verifier,
            resource_metadata: self.resource_metadata,
            tool_headers: self.tool_headers,
            sessions: self
                .sessions
                .map(|(idle, max)| sessions::Sessions::new(idle, max)),
        }
    }
}
