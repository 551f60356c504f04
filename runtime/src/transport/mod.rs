//! How messages travel. A [`MessageTransport`] carries whole JSON-RPC messages as text
//! in both directions (in-memory, stdio); the client reaches a server through a
//! [`ClientTransport`], which [`ClientBuilder::connect`](crate::client::ClientBuilder::connect)
//! makes of a message transport and which HTTP implements directly.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::jsonrpc::{RawResult, RpcError};
use crate::types::v2026_07_28::RequestId;

mod era;
#[cfg(any(feature = "http-server", feature = "http-client"))]
pub mod http;
pub mod memory;
#[cfg(feature = "stdio")]
pub mod stdio;

pub use era::ServerRequestHandler;

/// A boxed future, as transports return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a transport could not carry a message.
///
/// Built from a message ([`TransportError::new`]), or by the HTTP transport when an
/// HTTP server refused a request: then
/// [`http_status`](Self::http_status) tells a 400 from a 404 or 405 (what era discovery
/// needs) and [`rpc_error`](Self::rpc_error) holds the JSON-RPC error the body carried.
#[derive(Debug, Clone, thiserror::Error)]
#[error("transport: {0}")]
pub struct TransportError(pub(crate) TransportFailure);

/// What a [`TransportError`] knows, read through its accessors.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct TransportFailure {
    /// What went wrong.
    pub(crate) message: String,
    /// The HTTP status of a refused request, when an HTTP server answered with one.
    pub(crate) http_status: Option<u16>,
    /// The JSON-RPC error the refusal's body carried, if it was one (boxed to keep
    /// errors small on the happy path).
    pub(crate) rpc_error: Option<Box<RpcError>>,
    /// One message was dropped (too large to read) and the transport goes on.
    pub(crate) skipped: bool,
    /// The `WWW-Authenticate` challenge of a 401 or 403, when the server sent one.
    pub(crate) www_authenticate: Option<String>,
    /// When a busy server (503 or 429) said to try again (`Retry-After`, in seconds).
    pub(crate) retry_after: Option<std::time::Duration>,
    /// The `DPoP-Nonce` a refusal carried.
    pub(crate) dpop_nonce: Option<String>,
}

impl std::fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(status) = self.http_status {
            write!(f, "HTTP {status}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(e) = &self.rpc_error {
            write!(f, " ({e})")?;
        }
        Ok(())
    }
}

impl From<String> for TransportFailure {
    fn from(message: String) -> Self {
        Self {
            message,
            ..Self::default()
        }
    }
}

impl From<&str> for TransportFailure {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl TransportError {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self(TransportFailure::from(message.into()))
    }

    /// An HTTP server refused the request with `status`; `rpc_error` is the JSON-RPC error
    /// its body carried, if any.
    #[cfg(any(test, feature = "http-client"))]
    pub(crate) fn http(
        status: u16,
        message: impl Into<String>,
        rpc_error: Option<RpcError>,
    ) -> Self {
        Self(TransportFailure {
            message: message.into(),
            http_status: Some(status),
            rpc_error: rpc_error.map(Box::new),
            ..TransportFailure::default()
        })
    }

    /// One incoming message was dropped (`message` says why) and the transport reads
    /// on: the receiver answers it with an error, rather than closing.
    #[cfg(feature = "stdio")]
    pub(crate) fn skipped(message: impl Into<String>) -> Self {
        Self(TransportFailure {
            message: message.into(),
            skipped: true,
            ..TransportFailure::default()
        })
    }

    /// Whether only one message was dropped ([`skipped`](Self::skipped)).
    pub(crate) fn is_skipped(&self) -> bool {
        self.0.skipped
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The HTTP status of a refused request.
    pub fn http_status(&self) -> Option<u16> {
        self.0.http_status
    }

    /// The JSON-RPC error carried by a refused HTTP request's body.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        self.0.rpc_error.as_deref()
    }

    /// The `WWW-Authenticate` challenge a 401 or 403 carried.
    pub fn www_authenticate(&self) -> Option<&str> {
        self.0.www_authenticate.as_deref()
    }

    /// How long a busy server (503 or 429) asked the client to wait (`Retry-After`).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.0.retry_after
    }
}

/// The sending half of a message transport.
pub trait MessageSink: Send + Sync + 'static {
    /// Sends one JSON-RPC message.
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>>;
}

/// The receiving half of a message transport.
pub trait MessageSource: Send + 'static {
    /// The next message, or `None` when the peer is gone.
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>>;
}

/// A bidirectional carrier of JSON-RPC messages.
pub trait MessageTransport: Send + 'static {
    /// Splits the transport into its sending and receiving halves.
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>);
}

/// One request as the client hands it to a transport.
#[derive(Debug)]
#[non_exhaustive]
pub struct OutgoingRequest {
    /// The JSON-RPC id (new for every request, retries included).
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params, `_meta` included.
    pub params: Value,
    /// Where this request's server notifications (progress, logs) go, if anywhere.
    pub notifications: Option<mpsc::UnboundedSender<Value>>,
}

impl OutgoingRequest {
    /// A request whose server notifications go nowhere.
    pub(crate) fn new(id: RequestId, method: impl Into<String>, params: Value) -> Self {
        Self {
            id,
            method: method.into(),
            params,
            notifications: None,
        }
    }

    /// Where this request's server notifications (progress, logs) go.
    pub(crate) fn with_notifications(
        mut self,
        notifications: Option<mpsc::UnboundedSender<Value>>,
    ) -> Self {
        self.notifications = notifications;
        self
    }

    /// Sends this request through `transport`'s text path
    /// ([`ClientTransport::request_encoded`]): the params written out, what routes the
    /// request read from them, the result read back into a `Value`.
    pub(crate) async fn send_as_text<T: ClientTransport + ?Sized>(
        &self,
        transport: &T,
    ) -> Result<Value, CallError> {
        let params = self.params.to_string();
        let target = crate::types::v2026_07_28::method::info(&self.method)
            .and_then(|m| m.target)
            .and_then(|field| self.params.get(field))
            .and_then(Value::as_str);
        let protocol_version = self
            .params
            .get("_meta")
            .and_then(|m| m.get(crate::protocol::META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let encoded = EncodedRequest {
            id: &self.id,
            method: &self.method,
            params: &params,
            target,
            protocol_version,
            notifications: self.notifications.as_ref(),
        };
        let result = transport.request_encoded(encoded).await?;
        serde_json::from_str(result.get()).map_err(|e| {
            CallError::Transport(TransportError::new(format!("unreadable result: {e}")))
        })
    }
}

/// One request as the client writes it on its hot path: the params already serialized
/// (straight from the typed value, `_meta` included), with what a transport needs to
/// route the request so that it never reads the params back. See
/// [`ClientTransport::request_encoded`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct EncodedRequest<'a> {
    /// The JSON-RPC id (new for every request, retries included).
    pub id: &'a RequestId,
    /// The method.
    pub method: &'a str,
    /// The params: a JSON object, as text.
    pub params: &'a str,
    /// For a method whose params name what it acts on ([`Request::TARGET`]: `name` for
    /// `tools/call` and `prompts/get`, `uri` for `resources/read`), that member's value.
    ///
    /// [`Request::TARGET`]: crate::types::rpc::Request::TARGET
    pub target: Option<&'a str>,
    /// The protocol version `_meta` names (every 2026-07-28 request has one; a
    /// 2025-11-25 session's requests have none).
    pub protocol_version: Option<&'a str>,
    /// Where this request's server notifications (progress, logs) go, if anywhere.
    pub notifications: Option<&'a mpsc::UnboundedSender<Value>>,
}

impl EncodedRequest<'_> {
    /// The same request as an [`OutgoingRequest`], its params parsed.
    fn to_outgoing(self) -> Result<OutgoingRequest, CallError> {
        let params = serde_json::from_str(self.params).map_err(|e| {
            CallError::Transport(TransportError::new(format!("unreadable params: {e}")))
        })?;
        Ok(OutgoingRequest::new(self.id.clone(), self.method, params)
            .with_notifications(self.notifications.cloned()))
    }
}

/// Why a request got no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    /// The server answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The message never made it there or back.
    #[error(transparent)]
    Transport(#[from] TransportError),
}

impl CallError {
    /// The JSON-RPC error the server answered with: the answer itself, or the body of a
    /// refused HTTP request.
    pub(crate) fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            Self::Rpc(e) => Some(e),
            Self::Transport(t) => t.rpc_error(),
        }
    }
}

/// What [`HttpHooks::cache_identity`] says: the server a transport reaches and
/// the authorization context its requests carry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CacheIdentity {
    /// The server, such as its endpoint URL.
    pub server: String,
    /// A digest of the credentials the requests carry (a SHA-256, say), `None` for none.
    pub credential: Option<[u8; 32]>,
}

impl CacheIdentity {
    /// The identity of requests to `server` carrying `credential`.
    pub fn new(server: impl Into<String>, credential: Option<[u8; 32]>) -> Self {
        Self {
            server: server.into(),
            credential,
        }
    }
}

/// How many notifications a slow [`ClientTransport::notices`] listener may fall behind
/// before it misses some (it is told it lagged).
pub(crate) const NOTICE_BACKLOG: usize = 256;

/// What a client needs from a transport: send a request and await its result; send a
/// notification. Dropping the returned future abandons the request, and the transport
/// tells the server (`notifications/cancelled`, or closing the HTTP stream).
///
/// A transport sends each request once. The client decides whether a refused request
/// goes out again (it keeps all its retries in one place); for two of them it first
/// asks an HTTP transport to mend what it owns, through its [`HttpHooks`]. Three
/// methods are required; the rest have defaults for a transport that speaks only
/// 2026-07-28 and is not HTTP.
pub trait ClientTransport: Send + Sync + 'static {
    /// Sends `request` once and resolves to its result.
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>>;
    /// Sends `request`, already serialized, once and resolves to its result as JSON
    /// text: the client's hot path, which builds no `Value` tree for either. By default
    /// the params are parsed and the request goes through [`request`](Self::request);
    /// transports that carry text (HTTP, message transports) write it as it is.
    fn request_encoded<'a>(
        &'a self,
        request: EncodedRequest<'a>,
    ) -> BoxFuture<'a, Result<RawResult, CallError>> {
        Box::pin(async move {
            let result = self.request(request.to_outgoing()?).await?;
            Ok(RawResult::from(&result))
        })
    }
    /// Sends a notification.
    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>>;
    /// A new request id.
    fn next_id(&self) -> RequestId;

    /// The server's notifications that belong to no request of the client's, from now
    /// on, each as `{"method": ..., "params": ...}`: a 2025-11-25 session's standalone
    /// stream over HTTP, the connection of a message transport. What
    /// [`Client::listen`](crate::client::Client::listen) hears in a session. By
    /// default: `None` (the transport carries none).
    fn notices(&self) -> Option<tokio::sync::broadcast::Receiver<Value>> {
        None
    }

    /// Sends the server's requests (2025-11-25 sessions) to `handler` and its answers
    /// back to the server. By default the transport carries none.
    fn route_server_requests(&self, handler: ServerRequestHandler) {
        let _ = handler;
    }

    /// The era this transport's server was already found to speak (by an earlier
    /// client of the same endpoint, through a transport sharing what this one
    /// remembers: over HTTP, its `EraCache`), so
    /// [`EraMode::Auto`](crate::client::EraMode::Auto) need not probe again.
    fn known_era(&self) -> Option<crate::Era> {
        None
    }

    /// The probe found the server to speak `era`: remember it for
    /// [`known_era`](Self::known_era).
    fn discovered(&self, era: crate::Era) {
        let _ = era;
    }

    /// Whether a request may wait on the user (an authorizer that sends them to sign
    /// in): then the era probe waits for its answer however long that takes, rather
    /// than reading silence as a 2025-11-25 server's.
    fn may_wait_on_user(&self) -> bool {
        false
    }

    /// The client is about to speak `era` on this transport (before `initialize`, for
    /// a 2025-11-25 session), so version headers can follow.
    fn negotiated(&self, era: crate::Era) {
        let _ = era;
    }

    /// The HTTP-only hooks, when this transport is HTTP (or passes on one that is). By
    /// default: `None`.
    fn http_hooks(&self) -> Option<&dyn HttpHooks> {
        None
    }
}

/// What only an HTTP client transport mends or tells, asked by the client through
/// [`ClientTransport::http_hooks`]: a transport that wraps an HTTP one passes them on.
pub trait HttpHooks: Send + Sync {
    /// The server answered HTTP 404 to a request in the 2025-11-25 session it named (the
    /// session expired, or the server restarted): opens a new session with the same
    /// `initialize`, as that era asks, unless a concurrent caller already did. Resolves
    /// to whether the request is worth sending again: `false` when the transport keeps
    /// no such session. By default: `false`.
    fn reopen_session(&self) -> BoxFuture<'_, Result<bool, CallError>> {
        Box::pin(async { Ok(false) })
    }

    /// Who a cached answer from this transport may be reused for (the client's response
    /// cache): the server it reaches, and a digest of the authorization context its
    /// requests carry (the bearer token, extra headers). By default `None`: the
    /// answers belong to this transport's client alone, as a single context. A transport
    /// that wraps another passes this on.
    fn cache_identity(&self) -> Option<CacheIdentity> {
        None
    }

    /// The server refused a `tools/call` of `tool` with -32020 (its headers disagree
    /// with the body): re-reads the server's tool list (each page's request carrying
    /// `meta`, the call's `_meta`), so that the headers derived from the tools'
    /// `x-mcp-header` annotations follow the server's. Resolves to whether a call of
    /// `tool` now carries other headers. By default: `false`.
    fn refresh_tool_headers<'a>(
        &'a self,
        tool: &'a str,
        meta: &'a Value,
    ) -> BoxFuture<'a, Result<bool, CallError>> {
        let _ = (tool, meta);
        Box::pin(async { Ok(false) })
    }
}
