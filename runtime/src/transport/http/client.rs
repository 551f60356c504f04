//! The Streamable HTTP client: a [`ClientTransport`] that POSTs each request with the
//! metadata headers and reads a JSON or SSE answer.
//!
//! ```no_run
//! # async fn demo() -> tern::Result<()> {
//! use std::sync::Arc;
//! use tern::client::Client;
//! use tern::transport::http::client::HttpClientTransport;
//!
//! let transport = HttpClientTransport::builder("http://127.0.0.1:8080/mcp").build()?;
//! let client = Client::builder("me", "1.0").build(Arc::new(transport));
//! # Ok(()) }
//! ```
//!
//! `Mcp-Param-*` headers come from the tools' input schemas: every `tools/list` result
//! that passes through the transport fills its cache (and tools whose `x-mcp-header`
//! annotations are invalid are removed from the result, as the spec requires); call
//! [`HttpClientTransport::remember_tool`] to fill it by hand. When the server still
//! refuses a `tools/call` with -32020, the transport re-reads `tools/list` and, if the
//! tool's annotations changed, retries the call once.
//!
//! Dropping a request's future drops its connection, which the server takes as
//! cancellation.
//!
//! **TLS.** With the `http-client-tls` feature (on by default) `https://` URLs work,
//! through rustls, trusting the Mozilla root set (`webpki-roots`) plus any roots given to
//! [`HttpClientBuilder::with_root_certificates_pem`] (a private CA, a test certificate).
//! Without it, only `http://`.
//!
//! **Both eras.** The transport is an [`EraTransport`]: hand it to
//! [`ClientBuilder::negotiate`](crate::client::ClientBuilder::negotiate) and the client
//! probes with a 2026-07-28 request, falling back to a 2025-11-25 session when the server
//! refuses it with 400, 404 or 405 and a body that is not a 2026-07-28 error. The era
//! found is remembered per endpoint URL for the life of the process, so later clients
//! of the same server skip the probe ([`forget_era`] clears it). In a session the
//! transport keeps the `Mcp-Session-Id` the server gave at `initialize`, stamps
//! `MCP-Protocol-Version: 2025-11-25`, answers the server's requests arriving on a
//! response's SSE stream with the client's callbacks (POSTing the answers back), opens
//! a new session (same `initialize`) and resends the request when the server answers
//! 404 to one it no longer knows, and DELETEs the session when the last clone of the
//! transport is dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming as Body;
use hyper_util::client::legacy::Client as Pool;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use super::sse::SseReader;
use super::{
    METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, ParamHeader, encode_header_value,
    name_field, param_headers,
};
use crate::Era;
use crate::jsonrpc::{self, Incoming, RpcError, code};
use crate::protocol::{LEGACY_PROTOCOL_VERSION, META_PROTOCOL_VERSION, PROTOCOL_VERSION};
use crate::transport::{
    BoxFuture, CallError, ClientTransport, EraTransport, OutgoingRequest, ServerRequestHandler,
    TransportError, is_modern_error,
};
use crate::types::v2026_07_28::RequestId;
use crate::util::{IdKey, lock};

/// `Mcp-Session-Id`: the 2025-11-25 session a request belongs to.
const SESSION_HEADER: &str = "mcp-session-id";

/// The era each endpoint URL was found to speak, for the life of the process.
static KNOWN_ERAS: LazyLock<Mutex<HashMap<String, Era>>> = LazyLock::new(Mutex::default);

/// Forgets the era discovered for the endpoint at `url`, so the next client of it probes
/// again (after the server there was replaced by one of another era, say).
pub fn forget_era(url: &str) {
    // Keyed as the transport spells its URI, which may differ from the text it was given.
    if let Ok(uri) = url.parse::<Uri>() {
        lock(&KNOWN_ERAS).remove(&uri.to_string());
    }
}

/// How many `tools/list` pages a refresh after -32020 reads at most.
const MAX_TOOL_PAGES: usize = 10;

/// The most a JSON answer (or an error body) may hold: 64 MiB.
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// A Streamable HTTP [`ClientTransport`] on a keep-alive connection pool. Cheap to
/// clone; clones share the pool and the tool cache.
#[derive(Clone)]
pub struct HttpClientTransport {
    inner: Arc<Inner>,
}

/// What the pool connects with: TLS-capable when the `http-client-tls` feature is on.
#[cfg(feature = "http-client-tls")]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "http-client-tls"))]
type Connector = HttpConnector;

struct Inner {
    pool: Pool<Connector, Full<Bytes>>,
    uri: Uri,
    next_id: AtomicI64,
    timeout: Option<Duration>,
    bearer: Mutex<Option<HeaderValue>>,
    headers: HeaderMap,
    tools: Mutex<HashMap<String, Arc<[ParamHeader]>>>,
    /// Speaking 2025-11-25 (after negotiation chose it).
    legacy: AtomicBool,
    /// The session `initialize` opened, in the 2025-11-25 era.
    session: Mutex<Option<HeaderValue>>,
    /// Answers the server's requests in a 2025-11-25 session.
    server_requests: Mutex<Option<ServerRequestHandler>>,
    /// The `initialize` params of the session, to open a new one when it ends.
    initialize: Mutex<Option<Value>>,
    /// Held while a new session is being opened.
    reopening: tokio::sync::Mutex<()>,
}

impl Inner {
    /// A request to the endpoint with the headers every message carries: the protocol
    /// version, the bearer token and the extra headers.
    fn builder(&self, method: Method, version: &str) -> http::request::Builder {
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
}

impl Drop for Inner {
    /// Ends the 2025-11-25 session, if one is open, as the spec asks of a client that no
    /// longer needs it (best effort: only inside a Tokio runtime).
    fn drop(&mut self) {
        let Some(session) = lock(&self.session).take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let request = self
            .builder(Method::DELETE, LEGACY_PROTOCOL_VERSION)
            .header(SESSION_HEADER, session);
        let Ok(request) = request.body(Full::new(Bytes::new())) else {
            return;
        };
        let pool = self.pool.clone();
        runtime.spawn(async move {
            match pool.request(request).await {
                Ok(r) => tracing::debug!(status = %r.status(), "ended the 2025-11-25 session"),
                Err(e) => tracing::debug!(error = %e, "could not end the 2025-11-25 session"),
            }
        });
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

/// Builds an [`HttpClientTransport`].
#[derive(Debug)]
pub struct HttpClientBuilder {
    url: String,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    bearer: Option<String>,
    headers: Vec<(String, String)>,
    #[cfg(feature = "http-client-tls")]
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
}

impl HttpClientBuilder {
    /// Trusts the certificates in `pem` (one or more `CERTIFICATE` blocks) as roots, in
    /// addition to the Mozilla set: for servers with a private CA or a self-signed
    /// certificate. Fails when `pem` holds no certificate or one that does not parse.
    #[cfg(feature = "http-client-tls")]
    pub fn with_root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, TransportError> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject as _;
        let before = self.roots.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert =
                cert.map_err(|e| TransportError::new(format!("invalid PEM certificate: {e}")))?;
            self.roots.push(cert);
        }
        if self.roots.len() == before {
            return Err(TransportError::new("no CERTIFICATE in the PEM text"));
        }
        Ok(self)
    }

    /// Fails a request (JSON or SSE) that has not completed after `timeout`. Default:
    /// none (wrap calls in `tokio::time::timeout` for per-call limits).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Gives up connecting after `timeout` (default 10 s).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sends `Authorization: Bearer {token}` on every request.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Sends an extra header on every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The transport. Fails on a URL that is not `http://` (or `https://` with the
    /// `http-client-tls` feature), or a header that is not valid.
    pub fn build(self) -> Result<HttpClientTransport, TransportError> {
        let uri: Uri = self
            .url
            .parse()
            .map_err(|e| TransportError::new(format!("invalid MCP URL {:?}: {e}", self.url)))?;
        match uri.scheme_str() {
            Some("http") => {}
            #[cfg(feature = "http-client-tls")]
            Some("https") => {}
            #[cfg(not(feature = "http-client-tls"))]
            Some("https") => {
                return Err(TransportError::new(
                    "https URLs need tern's http-client-tls feature",
                ));
            }
            _ => {
                return Err(TransportError::new(format!(
                    "the MCP URL {:?} must start with http:// or https://",
                    self.url
                )));
            }
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| TransportError::new(format!("invalid header name {name:?}: {e}")))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|e| TransportError::new(format!("invalid header value {value:?}: {e}")))?;
            headers.append(name, value);
        }
        let bearer = self.bearer.as_deref().map(bearer_value).transpose()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(self.connect_timeout));
        #[cfg(feature = "http-client-tls")]
        let connector = {
            // The TLS layer hands plain http:// through to the inner connector.
            connector.enforce_http(false);
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls_config(self.roots)?)
                .https_or_http()
                .enable_http1()
                .wrap_connector(connector)
        };
        let pool = Pool::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector);
        Ok(HttpClientTransport {
            inner: Arc::new(Inner {
                pool,
                uri,
                next_id: AtomicI64::new(1),
                timeout: self.timeout,
                bearer: Mutex::new(bearer),
                headers,
                tools: Mutex::default(),
                legacy: AtomicBool::new(false),
                session: Mutex::default(),
                server_requests: Mutex::default(),
                initialize: Mutex::default(),
                reopening: tokio::sync::Mutex::default(),
            }),
        })
    }
}

/// rustls with ring, the Mozilla roots and `extra` roots, TLS 1.2 and 1.3.
#[cfg(feature = "http-client-tls")]
fn tls_config(
    extra: Vec<rustls::pki_types::CertificateDer<'static>>,
) -> Result<rustls::ClientConfig, TransportError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for cert in extra {
        roots
            .add(cert)
            .map_err(|e| TransportError::new(format!("unusable root certificate: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::new(format!("TLS setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

fn bearer_value(token: &str) -> Result<HeaderValue, TransportError> {
    HeaderValue::try_from(format!("Bearer {token}"))
        .map_err(|_| TransportError::new("the bearer token is not a valid header value"))
}

impl HttpClientTransport {
    /// A builder for a transport to the MCP endpoint at `url` (`http://host:port/mcp`,
    /// or `https://` with the `http-client-tls` feature).
    pub fn builder(url: impl Into<String>) -> HttpClientBuilder {
        HttpClientBuilder {
            url: url.into(),
            timeout: None,
            connect_timeout: Duration::from_secs(10),
            bearer: None,
            headers: Vec::new(),
            #[cfg(feature = "http-client-tls")]
            roots: Vec::new(),
        }
    }

    /// Replaces (or with `None` removes) the bearer token sent from now on, for example
    /// after a refresh.
    pub fn set_bearer_token(&self, token: Option<&str>) -> Result<(), TransportError> {
        let value = token.map(bearer_value).transpose()?;
        *lock(&self.inner.bearer) = value;
        Ok(())
    }

    /// Remembers a tool's input schema so calls to it carry its `Mcp-Param-*` headers.
    /// Fails (and forgets the tool) when its `x-mcp-header` annotations are invalid.
    pub fn remember_tool(&self, name: &str, input_schema: &Value) -> Result<(), String> {
        let mut tools = lock(&self.inner.tools);
        match param_headers(input_schema) {
            Ok(found) => {
                tools.insert(name.to_owned(), found.into());
                Ok(())
            }
            Err(e) => {
                tools.remove(name);
                Err(e)
            }
        }
    }

    /// Learns the tools of a `tools/list` result and removes those whose annotations
    /// are invalid.
    fn learn_tools(&self, result: &mut Value) {
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match self.remember_tool(name, schema) {
                Ok(()) => true,
                Err(reason) => {
                    tracing::warn!(tool = name, %reason, "ignoring a tool with an invalid x-mcp-header");
                    false
                }
            }
        });
    }

    fn is_legacy(&self) -> bool {
        self.inner.legacy.load(Ordering::Relaxed)
    }

    /// A POST to the endpoint: JSON in, JSON or SSE out, stamped with `body_version`
    /// (a 2026-07-28 request's `_meta` version) or else the era's version and session.
    fn post_builder(&self, body_version: Option<&str>) -> http::request::Builder {
        let legacy = body_version.is_none() && self.is_legacy();
        let version = body_version.unwrap_or(if legacy {
            LEGACY_PROTOCOL_VERSION
        } else {
            PROTOCOL_VERSION
        });
        let mut builder = self
            .inner
            .builder(Method::POST, version)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if legacy {
            if let Some(session) = lock(&self.inner.session).clone() {
                builder = builder.header(SESSION_HEADER, session);
            }
        }
        builder
    }

    /// POSTs one message that expects no response (a notification, or the answer to a
    /// server's request).
    async fn post_message(
        &self,
        method_header: Option<&str>,
        body: String,
    ) -> Result<(), TransportError> {
        let mut builder = self.post_builder(None);
        if let Some(method) = method_header.filter(|_| !self.is_legacy()) {
            builder = builder.header(METHOD_HEADER, method);
        }
        let request = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| TransportError::new(format!("bad request: {e}")))?;
        let response = self
            .inner
            .pool
            .request(request)
            .await
            .map_err(|e| TransportError::new(format!("POST failed: {}", chain(&e))))?;
        let status = response.status();
        // Drain the body so the connection goes back to the pool.
        let _ = collect(response.into_body()).await;
        if status.is_success() {
            Ok(())
        } else {
            Err(TransportError::http(
                status.as_u16(),
                "the server refused a message",
                None,
            ))
        }
    }

    /// Answers a request the server sent on a response stream (2025-11-25 sessions),
    /// in its own task so the stream keeps being read. Returns the task, which a
    /// `notifications/cancelled` from the server aborts.
    fn answer_server_request(
        &self,
        id: RequestId,
        method: String,
        params: Option<Value>,
    ) -> tokio::task::AbortHandle {
        let handler = lock(&self.inner.server_requests).clone();
        let transport = self.clone();
        tokio::spawn(async move {
            let result = match handler {
                Some(answer) => answer(method, params).await,
                None => Err(RpcError::method_not_found(&method)),
            };
            let body = jsonrpc::response(Some(&id), &result);
            if let Err(e) = transport.post_message(None, body).await {
                tracing::warn!(error = %e, "could not send the answer to a server request");
            }
        })
        .abort_handle()
    }

    /// The HTTP request for `request`, and its body (kept for a retry).
    fn build_request(
        &self,
        request: &mut OutgoingRequest,
    ) -> Result<(Request<Full<Bytes>>, Bytes), CallError> {
        let invalid = |what: &str| {
            CallError::Transport(TransportError::new(format!(
                "cannot send {what} as a header"
            )))
        };
        let body_version = request
            .params
            .get("_meta")
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let mut builder = self.post_builder(body_version);
        // The routing headers are 2026-07-28's; a session's requests go without them.
        if body_version.is_some() {
            builder = builder.header(METHOD_HEADER, request.method.as_str());
        }
        if let Some(field) = name_field(&request.method).filter(|_| body_version.is_some()) {
            let name = request
                .params
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default();
            builder = builder.header(NAME_HEADER, encode_header_value(name));
            if request.method == "tools/call" {
                let annotated = lock(&self.inner.tools).get(name).cloned();
                let arguments = request.params.get("arguments").and_then(Value::as_object);
                for param in annotated.iter().flat_map(|a| a.iter()) {
                    if let Some(value) = param.value_in(arguments) {
                        let value = HeaderValue::try_from(encode_header_value(&value))
                            .map_err(|_| invalid("a tool argument"))?;
                        builder = builder.header(param.header_name(), value);
                    }
                }
            }
        }
        // The params are not needed after this: move them into the body, no deep copy.
        let params = std::mem::take(&mut request.params);
        let body = Bytes::from(jsonrpc::request(&request.id, &request.method, Some(params)));
        let http_request = builder
            .body(Full::new(body.clone()))
            .map_err(|e| CallError::Transport(TransportError::new(format!("bad request: {e}"))))?;
        Ok((http_request, body))
    }

    async fn exchange(&self, mut request: OutgoingRequest) -> Result<Value, CallError> {
        if request.method == "initialize" {
            // Kept to open a new session if the server ends this one.
            *lock(&self.inner.initialize) = Some(request.params.clone());
        }
        // The session the request names, to tell a 404 for it from any other.
        let session = if self.is_legacy() {
            lock(&self.inner.session).clone()
        } else {
            None
        };
        let (http_request, body) = self.build_request(&mut request)?;
        match self.send(http_request, &request).await {
            Err(CallError::Transport(refused))
                if request.method == "tools/call"
                    && refused.rpc_error().map(|e| e.code) == Some(code::HEADER_MISMATCH) =>
            {
                self.retry_after_refresh(&request, &body, refused).await
            }
            Err(CallError::Transport(refused))
                if refused.http_status() == Some(404)
                    && session.is_some()
                    && request.method != "initialize" =>
            {
                self.retry_in_new_session(session, &request, &body, refused)
                    .await
            }
            other => other,
        }
    }

    /// The server no longer knows the 2025-11-25 session a request named (404: it
    /// expired, or the server restarted). As that era asks, open a new one with the same
    /// `initialize`, then send the request once more; concurrent requests that hit the
    /// same 404 share the new session.
    async fn retry_in_new_session(
        &self,
        gone: Option<HeaderValue>,
        request: &OutgoingRequest,
        body: &Bytes,
        refused: TransportError,
    ) -> Result<Value, CallError> {
        let Some(initialize) = lock(&self.inner.initialize).clone() else {
            return Err(CallError::Transport(refused));
        };
        let Some(params) = params_of(body) else {
            return Err(CallError::Transport(refused));
        };
        {
            let _one_at_a_time = self.inner.reopening.lock().await;
            if *lock(&self.inner.session) == gone {
                tracing::info!("the server ended the 2025-11-25 session; opening a new one");
                *lock(&self.inner.session) = None;
                self.send_once(OutgoingRequest {
                    id: self.next_id(),
                    method: "initialize".into(),
                    params: initialize,
                    notifications: None,
                })
                .await?;
                let initialized = jsonrpc::notification("notifications/initialized", None);
                self.post_message(Some("notifications/initialized"), initialized)
                    .await?;
            }
        }
        self.send_once(OutgoingRequest {
            id: self.next_id(),
            method: request.method.clone(),
            params,
            notifications: request.notifications.clone(),
        })
        .await
    }

    /// Sends `request` once, with no retry.
    async fn send_once(&self, mut request: OutgoingRequest) -> Result<Value, CallError> {
        let (http_request, _) = self.build_request(&mut request)?;
        self.send(http_request, &request).await
    }

    /// A `tools/call` was refused with -32020: the tool's `x-mcp-header` annotations may
    /// have changed since we learned them (or we never did). Re-read `tools/list` and,
    /// if they changed, send the call once more under a new id.
    async fn retry_after_refresh(
        &self,
        call: &OutgoingRequest,
        body: &Bytes,
        refused: TransportError,
    ) -> Result<Value, CallError> {
        let Some(params) = params_of(body) else {
            return Err(CallError::Transport(refused));
        };
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let before = lock(&self.inner.tools).get(&name).cloned();
        let meta = params.get("_meta").cloned().unwrap_or_else(|| json!({}));
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let mut list_params = json!({ "_meta": meta });
            if let Some(c) = cursor.take() {
                list_params["cursor"] = c;
            }
            let page = self
                .send_once(OutgoingRequest {
                    id: self.next_id(),
                    method: "tools/list".into(),
                    params: list_params,
                    notifications: None,
                })
                .await?;
            match page.get("nextCursor") {
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
                _ => break,
            }
        }
        if lock(&self.inner.tools).get(&name) == before.as_ref() {
            return Err(CallError::Transport(refused));
        }
        tracing::debug!(tool = %name, "retrying a call with the tool's new x-mcp-header annotations");
        self.send_once(OutgoingRequest {
            id: self.next_id(),
            method: call.method.clone(),
            params,
            notifications: call.notifications.clone(),
        })
        .await
    }

    /// Posts a built request and reads its JSON or SSE answer.
    async fn send(
        &self,
        http_request: Request<Full<Bytes>>,
        request: &OutgoingRequest,
    ) -> Result<Value, CallError> {
        let response = self.inner.pool.request(http_request).await.map_err(|e| {
            CallError::Transport(TransportError::new(format!(
                "POST {} failed: {}",
                self.inner.uri,
                chain(&e)
            )))
        })?;
        let status = response.status();
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if status.is_success() && request.method == "initialize" {
            if let Some(session) = response.headers().get(SESSION_HEADER) {
                *lock(&self.inner.session) = Some(session.clone());
            }
        }
        let body = response.into_body();
        if !status.is_success() {
            let mut refused = refusal(status, body).await;
            if status == StatusCode::NOT_FOUND && lock(&self.inner.session).is_some() {
                if let CallError::Transport(t) = &mut refused {
                    t.0.message = "the server no longer knows the 2025-11-25 session".into();
                }
            }
            return Err(refused);
        }
        let mut result = if is_sse {
            self.read_sse(body, request).await
        } else {
            let bytes = collect(body).await?;
            match Incoming::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(Incoming::Response { result, .. }) => result.map_err(CallError::Rpc),
                _ => Err(CallError::Transport(TransportError::new(format!(
                    "HTTP {status} with a body that is not a JSON-RPC response"
                )))),
            }
        }?;
        if request.method == "tools/list" {
            self.learn_tools(&mut result);
        }
        Ok(result)
    }
}

impl HttpClientTransport {
    /// Reads an SSE answer: notifications go to the request's channel, the server's own
    /// requests (2025-11-25 sessions) to the callbacks; the response ends it.
    async fn read_sse(
        &self,
        mut body: Body,
        request: &OutgoingRequest,
    ) -> Result<Value, CallError> {
        let mut reader = SseReader::default();
        let mut answering: HashMap<IdKey, tokio::task::AbortHandle> = HashMap::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                CallError::Transport(TransportError::new(format!(
                    "the SSE stream failed: {}",
                    chain(&e)
                )))
            })?;
            let Some(chunk) = frame.data_ref() else {
                continue;
            };
            for data in reader.feed(chunk) {
                match Incoming::parse(&data) {
                    Ok(Incoming::Response { id, result }) if id == request.id => {
                        return result.map_err(CallError::Rpc);
                    }
                    Ok(Incoming::Request { id, method, params }) => {
                        answering.retain(|_, task| !task.is_finished());
                        let key = IdKey::from(&id);
                        answering.insert(key, self.answer_server_request(id, method, params));
                    }
                    Ok(Incoming::Notification { method, params })
                        if method == "notifications/cancelled" =>
                    {
                        let withdrawn = params
                            .as_ref()
                            .and_then(|p| p.get("requestId"))
                            .and_then(IdKey::from_value)
                            .and_then(|key| answering.remove(&key));
                        if let Some(task) = withdrawn {
                            tracing::debug!("the server withdrew a request it had sent");
                            task.abort();
                        }
                    }
                    Ok(Incoming::Notification { method, params }) => {
                        if let Some(tx) = &request.notifications {
                            let _ = tx.send(json!({ "method": method, "params": params }));
                        }
                    }
                    Ok(Incoming::Response { .. }) => {
                        tracing::debug!("ignoring a response to another request on an SSE stream");
                    }
                    Err(rejected) => {
                        tracing::warn!(error = %rejected.error, "unreadable message on an SSE stream");
                    }
                }
            }
        }
        Err(CallError::Transport(TransportError::new(
            "the SSE stream ended before the response",
        )))
    }
}

/// The params of a request body already sent, to send again under a new id.
fn params_of(body: &Bytes) -> Option<Value> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|mut v| v.get_mut("params").map(Value::take))
}

/// An error with its causes (hyper's own message is only "client error (Connect)"; the
/// reason, such as an untrusted certificate, is in the sources).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

async fn collect(body: Body) -> Result<Bytes, CallError> {
    Limited::new(body, MAX_RESPONSE_BYTES)
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| {
            CallError::Transport(TransportError::new(format!(
                "could not read the response: {e}"
            )))
        })
}

/// The error for a non-2xx answer, with the JSON-RPC error its body carried.
async fn refusal(status: StatusCode, body: Body) -> CallError {
    let rpc_error = match collect(body).await {
        Ok(bytes) => match Incoming::parse(&String::from_utf8_lossy(&bytes)) {
            Ok(Incoming::Response { result: Err(e), .. }) => Some(e),
            _ => None,
        },
        Err(_) => None,
    };
    let reason = status.canonical_reason().unwrap_or("refused");
    CallError::Transport(TransportError::http(
        status.as_u16(),
        format!("the server refused the request: {reason}"),
        rpc_error,
    ))
}

impl ClientTransport for HttpClientTransport {
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move {
            match self.inner.timeout {
                None => self.exchange(request).await,
                Some(limit) => tokio::time::timeout(limit, self.exchange(request))
                    .await
                    .unwrap_or_else(|_| {
                        Err(CallError::Transport(TransportError::new(format!(
                            "no response within {limit:?}"
                        ))))
                    }),
            }
        })
    }

    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        let body = jsonrpc::notification(method, params);
        let method = method.to_owned();
        Box::pin(async move { self.post_message(Some(&method), body).await })
    }

    fn next_id(&self) -> RequestId {
        RequestId::Integer(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }
}

impl EraTransport for HttpClientTransport {
    fn route_server_requests(&self, handler: ServerRequestHandler) {
        *lock(&self.inner.server_requests) = Some(handler);
    }

    /// A JSON-RPC error that is not a modern one, or an HTTP 400, 404 or 405 whose body
    /// holds no modern error: what a 2025-11-25 server answers a request it cannot place
    /// in a session.
    fn is_legacy_answer(&self, error: &CallError) -> bool {
        match error {
            CallError::Rpc(e) => !is_modern_error(e),
            CallError::Transport(t) => {
                matches!(t.http_status(), Some(400 | 404 | 405))
                    && !t.rpc_error().is_some_and(is_modern_error)
            }
        }
    }

    fn known_era(&self) -> Option<Era> {
        lock(&KNOWN_ERAS).get(&self.inner.uri.to_string()).copied()
    }

    fn discovered(&self, era: Era) {
        lock(&KNOWN_ERAS).insert(self.inner.uri.to_string(), era);
    }

    fn negotiated(&self, era: Era) {
        self.inner
            .legacy
            .store(era == Era::Session, Ordering::Relaxed);
    }
}
