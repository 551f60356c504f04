//! The Streamable HTTP server: a [`Server`] on one endpoint, served by its own accept
//! loop ([`HttpServer::serve`]) or embedded in an axum app ([`HttpServer::router`]).
//!
//! ```no_run
//! # async fn demo(server: tern_mcp::server::Server) -> std::io::Result<()> {
//! use tern_mcp::http::HttpServer;
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
//! ([`HttpLimits::session_idle_timeout`]). Sessions
//! live in the process unless [`session_store`](HttpServer::session_store) keeps their
//! records where every instance reads them (a [`SessionStore`]: `RedisSessionStore`
//! with the `redis` feature): then any instance serves any session's requests, and a
//! session ended or expired is gone on all of them, and the client's answer to a
//! request the server sent on the session may reach any instance (it is relayed to the
//! one that asked), and the server's events published on one instance reach the
//! listeners of every other. What a fleet does not share yet — the events kept for
//! `Last-Event-ID` — stays with the instance that sent them. 2026-07-28 requests may
//! land anywhere.
//! [`stateless_only`](HttpServer::stateless_only) turns sessions off.

mod app;
mod authn;
mod budget;
mod bus;
mod conn;
#[cfg(feature = "dpop")]
pub(crate) mod dpop;
pub(crate) mod events;
mod guard;
#[cfg(feature = "http-server-h2")]
mod h2;
mod headers;
mod limits;
mod listen;
mod overload;
mod post;
mod protected;
mod reply;
mod run;
mod session_era;
pub(crate) mod session_store;
mod sessions;
mod signal;
mod sse;
mod stream;
mod streams;

use std::future::Future;
use std::sync::Arc;

use axum::Router;

pub use events::{EventStore, MemoryEventStore, Replay};

#[cfg(feature = "dpop")]
#[cfg_attr(docsrs, doc(cfg(feature = "dpop")))]
pub use dpop::Dpop;
pub use guard::HostPolicy;
pub use limits::HttpLimits;
pub use protected::ProtectedResource;
pub use session_store::{Published, SessionStore};

use crate::auth::TokenVerifier;
use crate::server::Server;
use crate::transport::http::ParamHeader;

use crate::server::lookups::{RequiredScopes, ToolHeaders};

/// A Streamable HTTP endpoint for a [`Server`]. Settings are builder methods ([`limits`](Self::limits)
/// for the budgets); then
/// [`router`](Self::router) to embed it in an axum app, or [`serve`](Self::serve).
#[derive(Clone)]
pub struct HttpServer {
    server: Server,
    path: String,
    hosts: HostPolicy,
    hosts_explicit: bool,
    verifier: Option<Arc<dyn TokenVerifier>>,
    resource_metadata: Option<String>,
    protected: Option<Arc<ProtectedResource>>,
    /// How DPoP proofs are checked, when set (else the defaults, not advertised).
    #[cfg(feature = "dpop")]
    dpop: Option<Dpop>,
    required_scopes: Option<RequiredScopes>,
    tool_headers: Option<ToolHeaders>,
    /// Whether 2025-11-25 sessions are served.
    sessions: bool,
    /// Where their records are kept for a fleet, if anywhere.
    session_store: Option<Arc<dyn SessionStore>>,
    events: Arc<dyn EventStore>,
    limits: HttpLimits,
    #[cfg(feature = "http-server-tls")]
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("server", &self.server)
            .field("path", &self.path)
            .field("hosts", &self.hosts)
            .field("authenticated", &self.verifier.is_some())
            .field("sessions", &self.sessions)
            .field("limits", &self.limits)
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
    /// The endpoint's path (a DPoP proof's `htu` names it).
    #[cfg(feature = "dpop")]
    pub(crate) path: String,
    /// Checks the proofs of DPoP-bound tokens.
    #[cfg(feature = "dpop")]
    pub(crate) dpop: dpop::DpopGuard,
    /// Whether a 401 offers the `DPoP` scheme beside `Bearer`.
    pub(crate) offers_dpop: bool,
    pub(crate) required_scopes: Option<RequiredScopes>,
    pub(crate) tool_headers: Option<ToolHeaders>,
    pub(crate) sessions: Option<sessions::Sessions>,
    /// For a fleet: the server's events carried to and from the other instances.
    pub(crate) bus: Option<bus::Bus>,
    /// Cancelled when the endpoint starts draining: it ends the streams that never end
    /// on their own, `subscriptions/listen` and a session's GET stream.
    pub(crate) closing: tokio_util::sync::CancellationToken,
    /// Those streams, counted per caller and in all.
    pub(crate) streams: Arc<streams::Streams>,
}

impl HttpServer {
    /// An endpoint at `/mcp` for `server`, with the default [`HttpLimits`], accepting
    /// only loopback `Host` and `Origin` values (see [`hosts`](Self::hosts)), and no
    /// authentication. A server an [`McpServer`](crate::mcp::McpServer) built brings its
    /// tools' required scopes and `x-mcp-header` annotations: the endpoint enforces
    /// them without [`required_scopes`](Self::required_scopes) or
    /// [`tool_headers`](Self::tool_headers).
    pub fn new(server: Server) -> Self {
        let lookups = server.lookups().clone();
        Self {
            server,
            path: "/mcp".into(),
            hosts: HostPolicy::Loopback,
            hosts_explicit: false,
            verifier: None,
            resource_metadata: None,
            protected: None,
            #[cfg(feature = "dpop")]
            dpop: None,
            required_scopes: lookups.required_scopes,
            tool_headers: lookups.tool_headers,
            sessions: true,
            session_store: None,
            events: Arc::new(events::MemoryEventStore::default()),
            limits: HttpLimits::default(),
            #[cfg(feature = "http-server-tls")]
            tls: None,
        }
    }

    /// The budgets for connections, requests and sessions (default
    /// [`HttpLimits::default`]).
    pub fn limits(mut self, limits: HttpLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Serves TLS (rustls) on every connection [`serve`](Self::serve) accepts: HTTP/2
    /// when the client's ALPN offers `h2` (with the `http-server-h2` feature), else
    /// HTTP/1.1. `config` keeps the ALPN protocols it names; without any, it offers
    /// `h2` and `http/1.1`. The handshake counts within the header budget.
    #[cfg(feature = "http-server-tls")]
    pub fn tls(mut self, mut config: rustls::ServerConfig) -> Self {
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
        self.sessions = false;
        self
    }

    /// Where 2025-11-25 sessions' SSE events are kept for clients that reconnect with
    /// `Last-Event-ID` (default [`MemoryEventStore::default`]: 1,000 events per session,
    /// five minutes each).
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.events = store;
        self
    }

    /// Keeps the records of 2025-11-25 sessions in `store` (such as a
    /// [`RedisSessionStore`](crate::fleet::RedisSessionStore) every instance of a fleet points at), so any instance
    /// serves any session's requests: no sticky routing on `Mcp-Session-Id`. A
    /// session ended (DELETE) or expired is gone on every instance.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Which `Host` and `Origin` values are accepted (DNS-rebinding protection). The
    /// default is [`HostPolicy::Loopback`]; [`serve`](Self::serve) relaxes it to
    /// [`HostPolicy::Any`] on a listener that is not bound to a loopback address, unless
    /// a policy was set here.
    pub fn hosts(mut self, hosts: HostPolicy) -> Self {
        self.hosts = hosts;
        self.hosts_explicit = true;
        self
    }

    /// Requires `Authorization: Bearer ...` on every request, checked by `verifier`.
    pub fn token_verifier(mut self, verifier: Arc<dyn TokenVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// Accepts DPoP-bound access tokens checked by `dpop`'s rules, and offers the
    /// `DPoP` scheme in its 401 challenges. Without it, a bound token is still checked,
    /// by [`Dpop::new`]'s rules, but the scheme is not offered.
    #[cfg(feature = "dpop")]
    #[cfg_attr(docsrs, doc(cfg(feature = "dpop")))]
    pub fn dpop(mut self, dpop: Dpop) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// The protected resource metadata URL advertised in `WWW-Authenticate` on a 401.
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// Serves `metadata` as the endpoint's Protected Resource Metadata (RFC 9728) at
    /// `/.well-known/oauth-protected-resource{path}` and at the root well-known URI,
    /// and points every 401 and 403 challenge to it (unless
    /// [`resource_metadata`](Self::resource_metadata) names another URL).
    pub fn protected_resource(mut self, metadata: ProtectedResource) -> Self {
        if self.resource_metadata.is_none() {
            self.resource_metadata = Some(metadata.well_known().1);
        }
        self.protected = Some(Arc::new(metadata));
        self
    }

    /// The scopes each request needs, by method and target (a tool or prompt name, a
    /// resource URI), for a low-level server (an `McpServer`'s brings its own): with a
    /// token verifier, a request whose token lacks one gets 403
    /// `insufficient_scope` naming all it needs, before it is served.
    pub fn required_scopes(
        mut self,
        lookup: impl Fn(&str, Option<&str>) -> Option<Vec<String>> + Send + Sync + 'static,
    ) -> Self {
        self.required_scopes = Some(Arc::new(lookup));
        self
    }

    /// How to find a tool's `x-mcp-header` annotations, so `tools/call` requests have
    /// their `Mcp-Param-*` headers checked against the arguments. Without it only the
    /// standard headers are checked.
    pub fn tool_headers(
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
    /// way, at most [`HttpLimits::max_connections`]) as a tower
    /// layer: the header and idle budgets are the accepting server's to enforce (hyper's
    /// `header_read_timeout`, say), since they come before any request exists.
    pub fn router(self) -> Router {
        let path = self.path.clone();
        let limits = budget::Limits::new(self.budgets(), self.limits.max_connections);
        app::router(Arc::new(self.into_shared()), &path, limits)
    }

    /// Serves on `listener` until `shutdown` resolves, then stops accepting and waits for
    /// in-flight requests to finish (each within its budgets). Serves HTTP/1.1 on tern's
    /// own connections, and HTTP/2 (by TLS's ALPN, or in clear by prior knowledge)
    /// through hyper's, each with the header, body, idle and request timeouts and the
    /// connection cap set here; TLS if [`tls`](Self::tls) set it.
    pub async fn serve(
        mut self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        if !self.hosts_explicit && !listener.local_addr()?.ip().is_loopback() {
            self.hosts = HostPolicy::Any;
        }
        let path = self.path.clone();
        let registry = conn::Registry::new(self.budgets(), self.limits.max_connections);
        #[cfg(feature = "http-server-h2")]
        let limits = budget::Limits::new(self.budgets(), self.limits.max_connections);
        #[cfg(feature = "http-server-tls")]
        let tls = self.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        let shared = Arc::new(self.into_shared());
        if let Some(bus) = &shared.bus {
            // Started before serving; a store that fails now is tried again by the
            // first request.
            if let Err(e) = bus.ensure_started(&shared.server).await {
                tracing::warn!(error = %e, "the fleet's event bus did not start yet");
            }
        }
        let protocols = listen::Protocols {
            #[cfg(feature = "http-server-h2")]
            h2: app::router(Arc::clone(&shared), &path, limits),
            #[cfg(feature = "http-server-tls")]
            tls,
        };
        listen::serve(shared, path, listener, registry, protocols, shutdown).await
    }

    fn budgets(&self) -> conn::Budgets {
        conn::Budgets {
            header: self.limits.header_timeout,
            body: self.limits.body_timeout,
            idle: self.limits.idle_timeout,
            request: self.limits.request_timeout,
        }
    }

    pub(crate) fn into_shared(self) -> Shared {
        let limits = self.limits;
        let sessions = self.sessions.then(|| sessions::Limits {
            idle_timeout: limits.session_idle_timeout,
            max: limits.max_sessions,
            per_principal: limits.max_sessions_per_principal,
            store: self.events,
            retry: limits.sse_retry,
            shared: self.session_store.clone(),
        });
        Shared {
            server: self.server,
            max_body_bytes: limits.max_body_bytes,
            hosts: self.hosts,
            verifier: self.verifier,
            resource_metadata: self.resource_metadata,
            protected: self.protected,
            #[cfg(feature = "dpop")]
            path: self.path,
            #[cfg(feature = "dpop")]
            offers_dpop: self.dpop.is_some(),
            #[cfg(not(feature = "dpop"))]
            offers_dpop: false,
            #[cfg(feature = "dpop")]
            dpop: dpop::DpopGuard::new(self.dpop.unwrap_or_default()),
            required_scopes: self.required_scopes,
            tool_headers: self.tool_headers,
            sessions: sessions.map(sessions::Sessions::new),
            bus: self.session_store.map(bus::Bus::new),
            closing: tokio_util::sync::CancellationToken::new(),
            streams: streams::Streams::new(limits.max_connections),
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
            .tool_headers(|tool| {
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
