//! The Streamable HTTP client: a [`ClientTransport`] that POSTs each request with the
//! metadata headers and reads a JSON or SSE answer.
//!
//! ```no_run
//! # async fn demo() -> tern_mcp::Result<()> {
//! use std::sync::Arc;
//! use tern_mcp::client::Client;
//! use tern_mcp::transport::http::client::HttpClientTransport;
//!
//! let transport = HttpClientTransport::builder("http://127.0.0.1:8080/mcp").build()?;
//! let client = Client::builder("me", "1.0").era(tern_mcp::client::EraMode::Stateless).connect(Arc::new(transport)).await?;
//! # Ok(()) }
//! ```
//!
//! `Mcp-Param-*` headers come from the tools' input schemas: every `tools/list` result
//! that passes through the transport fills its cache (and tools whose `x-mcp-header`
//! annotations are invalid are removed from the result, as the spec requires). When the server still
//! refuses a `tools/call` with -32020, the client has the transport re-read `tools/list`
//! ([`HttpHooks::refresh_tool_headers`]) and, if the tool's annotations changed,
//! sends the call once more.
//!
//! Dropping a request's future drops its connection, which the server takes as
//! cancellation.
//!
//! **TLS.** With the `http-client-tls` feature (on by default) `https://` URLs work,
//! through rustls, trusting the Mozilla root set (`webpki-roots`) plus any roots given to
//! [`HttpClientBuilder::root_certificates_pem`] (a private CA, a test certificate).
//! Without it, only `http://`.
//!
//! **Both eras.** The transport speaks both eras: hand it to
//! [`ClientBuilder::connect`](crate::client::ClientBuilder::connect) and the client
//! probes with a 2026-07-28 request, falling back to a 2025-11-25 session when the server
//! refuses it with 400, 404 or 405 and a body that is not a 2026-07-28 error. The era
//! found is remembered per endpoint URL in the transport's [`EraCache`], which the
//! transports built from one builder share (and others given the same cache with
//! [`HttpClientBuilder::era_cache`]), so later clients of the same server skip the
//! probe ([`EraCache::forget`] clears it). In a session the transport keeps the `Mcp-Session-Id` the server gave at `initialize`, stamps
//! `MCP-Protocol-Version: 2025-11-25`, answers the server's requests arriving on a
//! response's SSE stream with the client's callbacks (POSTing the answers back), opens
//! a new session (same `initialize`) when the server answers 404 to a request in one it
//! no longer knows ([`HttpHooks::reopen_session`]; the client then sends the
//! request again), and DELETEs the session when the last clone of the transport is
//! dropped.
//!
//! Each request is sent once; the retries above are the client's decision. The
//! transport's timeouts ([`HttpTimeouts::request`], pushed back by progress,
//! and [`HttpTimeouts::max_request`]) bound each send, and each mend (a
//! session reopened, `tools/list` re-read), on its own.
//!
//! The parts: `builder` makes the transport, `exchange` is one POST and the reading
//! of its answer, `session` the 2025-11-25 session and `tools` the tool headers.

mod authorize;
mod builder;
mod era_cache;
mod exchange;
mod pool;
mod quiet;
mod refusal;
mod session;
mod tools;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, Method, Request, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::Value;

use super::PROTOCOL_VERSION_HEADER;
use super::h1::{self, Outgoing};
use crate::Era;
use crate::protocol::PROTOCOL_VERSION;
use crate::transport::{
    BoxFuture, CallError, ClientTransport, EncodedRequest, HttpHooks, OutgoingRequest,
    ServerRequestHandler, TransportError,
};
use crate::types::v2026_07_28::RequestId;
use crate::util::lock;
pub use authorize::{Authorizer, Challenge};
#[cfg(any(feature = "oauth", feature = "jwt", feature = "introspection"))]
pub(crate) use builder::connector;
pub use builder::{HttpClientBuilder, HttpTimeouts};
pub use era_cache::EraCache;
use pool::Pool;
use session::Session;
use tools::ToolHeaders;

/// The most a JSON answer (or an error body) may hold: 64 MiB.
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// The header a DPoP proof goes in (RFC 9449 §4.1).
const DPOP: http::HeaderName = http::HeaderName::from_static("dpop");

/// A Streamable HTTP [`ClientTransport`] on a keep-alive connection pool. Cheap to
/// clone; clones share the pool, the tool cache, the session and the era cache.
#[derive(Clone)]
pub struct HttpClientTransport {
    inner: Arc<Inner>,
}

/// What the pool connects with: TLS-capable when the `http-client-tls` feature is on.
#[cfg(feature = "http-client-tls")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "http-client-tls"))]
pub(crate) type Connector = HttpConnector;

struct Inner {
    pool: Pool,
    uri: Uri,
    next_id: AtomicI64,
    timeout: Duration,
    max_timeout: Duration,
    /// The longest silence allowed while waiting for an answer's head, bytes or events.
    idle_timeout: Duration,
    bearer: Mutex<Option<HeaderValue>>,
    /// Answers 401s and 403s with new tokens.
    authorizer: Option<Arc<dyn Authorizer>>,
    headers: HeaderMap,
    /// The headers of every 2026-07-28 POST, rendered on first use and again after the
    /// bearer token changes.
    post_headers: Mutex<Option<Bytes>>,
    /// The eras found at endpoints, shared with the transports of the same builder.
    eras: EraCache,
    /// The `Mcp-Param-*` headers of the annotated tools of the last list (bounded).
    tools: ToolHeaders,
    /// The 2025-11-25 session, once negotiation chose that era.
    session: Session,
}

impl Inner {
    /// A request to the endpoint with the headers every message carries: the protocol
    /// version, the access token (with its DPoP proof, for a bound one) and the extra
    /// headers.
    fn builder(&self, method: Method, version: &str) -> http::request::Builder {
        let proved = self.dpop(&method);
        self.proved_builder(method, version, proved)
    }

    /// [`builder`](Self::builder) with the DPoP proof made already, if any.
    fn proved_builder(
        &self,
        method: Method,
        version: &str,
        proved: Option<(HeaderValue, HeaderValue)>,
    ) -> http::request::Builder {
        let mut builder = self.unproved_builder(method, version);
        if let (Some((authorization, proof)), Some(headers)) = (proved, builder.headers_mut()) {
            headers.insert(AUTHORIZATION, authorization);
            headers.insert(DPOP, proof);
        }
        builder
    }

    /// `Authorization: DPoP` and a fresh `DPoP` proof for a request with `method`, when
    /// the authorizer binds the token sent now to its key.
    fn dpop(&self, method: &Method) -> Option<(HeaderValue, HeaderValue)> {
        let authorizer = self.authorizer.as_ref()?;
        let bearer = lock(&self.bearer).clone()?;
        let token = bearer.to_str().ok()?.strip_prefix("Bearer ")?;
        let proof = authorizer.dpop_proof(method, &self.uri, token)?;
        let authorization = HeaderValue::try_from(format!("DPoP {token}")).ok()?;
        Some((authorization, HeaderValue::try_from(proof).ok()?))
    }

    /// [`builder`](Self::builder) without a DPoP proof: what may be rendered once.
    fn unproved_builder(&self, method: Method, version: &str) -> http::request::Builder {
        let mut builder = Request::builder()
            .method(method)
            .uri(self.uri.clone())
            .header(PROTOCOL_VERSION_HEADER, version);
        if let Some(token) = lock(&self.bearer).clone() {
            builder = builder.header(AUTHORIZATION, token);
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder
    }

    /// A 2026-07-28 POST of `body`. The fields of every message, the content type and
    /// accepted answers (see `exchange`) and the `Host` the pool would add are rendered
    /// once, and again after the bearer token changes; a token bound to a key gets its
    /// fields made for each request, each with a fresh proof.
    fn modern_post(&self, body: Bytes) -> Result<Outgoing, http::Error> {
        if let Some(proved) = self.dpop(&Method::POST) {
            let builder = self.proved_builder(Method::POST, PROTOCOL_VERSION, Some(proved));
            return Ok(self
                .pool
                .outgoing(exchange::post_headers(builder).body(body)?));
        }
        let common = lock(&self.post_headers)
            .get_or_insert_with(|| self.render_post_headers())
            .clone();
        Ok(Outgoing::new(Method::POST, common, body))
    }

    /// The fields [`modern_post`](Self::modern_post) renders once, in their wire form.
    fn render_post_headers(&self) -> Bytes {
        let builder = exchange::post_headers(self.unproved_builder(Method::POST, PROTOCOL_VERSION));
        let mut headers = builder
            .body(())
            .map(|r| r.into_parts().0.headers)
            .unwrap_or_default();
        self.pool.with_host(&mut headers);
        let mut lines = Vec::new();
        h1::push_fields(&mut lines, &headers);
        Bytes::from(lines)
    }
}

impl std::fmt::Debug for HttpClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientTransport")
            .field("uri", &self.inner.uri)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

impl HttpClientTransport {
    /// A builder for a transport to the MCP endpoint at `url` (`http://host:port/mcp`,
    /// or `https://` with the `http-client-tls` feature).
    pub fn builder(url: impl Into<String>) -> HttpClientBuilder {
        HttpClientBuilder::new(url)
    }

    /// The bearer token sent now, if any.
    pub(crate) fn bearer_token(&self) -> Option<String> {
        lock(&self.inner.bearer)
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned)
    }

    /// Replaces (or with `None` removes) the bearer token sent from now on, for example
    /// after a refresh.
    pub(crate) fn set_bearer_token(&self, token: Option<&str>) -> Result<(), TransportError> {
        let value = token.map(builder::bearer_value).transpose()?;
        *lock(&self.inner.bearer) = value;
        // The next POST renders its headers again, with the new token.
        *lock(&self.inner.post_headers) = None;
        Ok(())
    }
}

impl HttpClientTransport {
    /// Runs `work` (a mend, which reads no progress) under the transport's timeout.
    async fn within_timeout<T>(
        &self,
        work: impl Future<Output = Result<T, CallError>>,
    ) -> Result<T, CallError> {
        let limit = self.inner.timeout;
        tokio::time::timeout(limit, work).await.unwrap_or_else(|_| {
            Err(CallError::Transport(TransportError::new(format!(
                "no response within {limit:?}"
            ))))
        })
    }
}

impl ClientTransport for HttpClientTransport {
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move { request.send_as_text(self).await })
    }

    fn request_encoded<'a>(
        &'a self,
        request: EncodedRequest<'a>,
    ) -> BoxFuture<'a, Result<crate::jsonrpc::RawResult, CallError>> {
        // Boxed as it is built; the exchange keeps its own deadline (see `quiet`).
        Box::pin(async move { self.exchange_encoded(&request).await })
    }

    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        let body = crate::jsonrpc::notification(method, params);
        let method = method.to_owned();
        Box::pin(async move {
            self.post_message(Some(&method), body).await?;
            // A session is ready once initialized: its standalone stream opens then.
            if crate::protocol::era::session_says(&method, |m| m.readies_session)
                && self.inner.session.speaks_session()
            {
                session::open_standalone_stream(self).await;
            }
            Ok(())
        })
    }

    fn next_id(&self) -> RequestId {
        RequestId::Integer(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn notices(&self) -> Option<tokio::sync::broadcast::Receiver<Value>> {
        Some(self.inner.session.notices())
    }

    fn http_hooks(&self) -> Option<&dyn HttpHooks> {
        Some(self)
    }

    fn route_server_requests(&self, handler: ServerRequestHandler) {
        self.inner.session.route_server_requests(handler);
    }

    fn known_era(&self) -> Option<Era> {
        self.inner.eras.get(&self.inner.uri)
    }

    fn discovered(&self, era: Era) {
        self.inner.eras.remember(&self.inner.uri, era);
    }

    fn negotiated(&self, era: Era) {
        self.inner.session.negotiated(era);
    }

    fn may_wait_on_user(&self) -> bool {
        self.inner.authorizer.is_some()
    }
}

impl HttpHooks for HttpClientTransport {
    fn reopen_session(&self) -> BoxFuture<'_, Result<bool, CallError>> {
        Box::pin(self.within_timeout(session::open_new_session(self)))
    }

    /// The endpoint, and a SHA-256 of what authorizes the requests: the bearer token in
    /// use now and the extra headers (one of which may be an API key).
    fn cache_identity(&self) -> Option<super::super::CacheIdentity> {
        use sha2::{Digest as _, Sha256};
        let bearer = lock(&self.inner.bearer).clone();
        let credential = (bearer.is_some() || !self.inner.headers.is_empty()).then(|| {
            let mut hash = Sha256::new();
            if let Some(token) = &bearer {
                hash.update(token.as_bytes());
            }
            for (name, value) in &self.inner.headers {
                hash.update([0]);
                hash.update(name.as_str().as_bytes());
                hash.update([0]);
                hash.update(value.as_bytes());
            }
            hash.finalize().into()
        });
        Some(super::super::CacheIdentity::new(
            self.inner.uri.to_string(),
            credential,
        ))
    }

    fn refresh_tool_headers<'a>(
        &'a self,
        tool: &'a str,
        meta: &'a Value,
    ) -> BoxFuture<'a, Result<bool, CallError>> {
        Box::pin(self.within_timeout(tools::reread_tool_headers(self, tool, meta)))
    }
}

#[cfg(test)]
mod future_sizes {
    use crate::transport::ClientTransport as _;

    /// Every request's future is moved into a box once it is built, at a byte per
    /// instruction: what makes it large (the connect path, a wrapper holding it twice)
    /// costs every request. 7 KiB here once cost 14 k instructions per request. (3 KiB
    /// until the minimum rate's clock, 24 bytes, joined the request's deadline.) And a
    /// box over 1,032 bytes, the largest glibc's per-thread cache keeps, takes the
    /// allocator's slow path, some 400 instructions more each time.
    #[test]
    fn an_exchange_future_stays_small_to_move() {
        let transport = super::HttpClientTransport::builder("http://127.0.0.1:9/mcp")
            .build()
            .unwrap();
        let id = crate::types::v2026_07_28::RequestId::Integer(1);
        let exchange = transport.request_encoded(crate::transport::EncodedRequest {
            id: &id,
            method:
                <crate::types::v2026_07_28::method::CallTool as crate::types::rpc::Request>::METHOD,
            params: "{}",
            target: Some("x"),
            protocol_version: Some("2026-07-28"),
            notifications: None,
        });
        let size = std::mem::size_of_val(&*exchange);
        assert!(size <= 1032, "the boxed exchange is {size} bytes");
        let send = transport
            .inner
            .pool
            .send(http::Request::new(bytes::Bytes::new()));
        let size = std::mem::size_of_val(&send);
        assert!(size <= 1024, "the pool's send future is {size} bytes");
    }
}
