//! One exchange: a request POSTed with its metadata headers, and its answer read as
//! one JSON object or an SSE stream (whose notifications go to the request's channel and
//! whose server requests go to the session).

use std::collections::HashMap;
use std::pin::Pin;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::json;

use super::super::body::Joined;
use super::super::fields::Fields as _;
use super::super::h1::{Answer, Body, Outgoing};
use super::super::sse::SseReader;
use super::super::{METHOD_HEADER, NAME_HEADER, encoded_header_value};
use super::authorize::{Challenge, MAX_AUTHORIZATION_RETRIES};
use super::pool::PoolError;
use super::quiet::Quiet;
use super::refusal::refusal;
use super::{HttpClientTransport, MAX_RESPONSE_BYTES};
use crate::jsonrpc::{self, RawResult, Received};
use crate::protocol::{PROTOCOL_VERSION, SESSION_PROTOCOL_VERSION};
use crate::transport::{CallError, EncodedRequest, TransportError};
use crate::types::rpc::MethodInfo;
use crate::util::IdKey;

/// The `Mcp-Method` value of `method` (`info` what the table says of it): the
/// protocol's own methods without a copy.
fn method_value(method: &str, info: Option<&'static MethodInfo>) -> Result<HeaderValue, CallError> {
    match info {
        Some(info) => Ok(HeaderValue::from_static(info.method)),
        None => HeaderValue::try_from(method).map_err(bad_request),
    }
}

/// Adds what every POST says about its body and the answers it accepts.
pub(super) fn post_headers(builder: http::request::Builder) -> http::request::Builder {
    builder
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
}

fn bad_request(e: impl std::fmt::Display) -> CallError {
    CallError::Transport(TransportError::new(format!("bad request: {e}")))
}

impl HttpClientTransport {
    /// A POST to the endpoint: JSON in, JSON or SSE out, stamped with `body_version`
    /// (a 2026-07-28 request's `_meta` version) or else the era's version and session;
    /// with the session it names, if any.
    fn post_builder(
        &self,
        body_version: Option<&str>,
    ) -> (http::request::Builder, Option<HeaderValue>) {
        let on_session = body_version.is_none() && self.inner.session.speaks_session();
        let version = body_version.unwrap_or(if on_session {
            SESSION_PROTOCOL_VERSION
        } else {
            PROTOCOL_VERSION
        });
        let builder = post_headers(self.inner.builder(Method::POST, version));
        if on_session {
            self.inner.session.stamp(builder)
        } else {
            (builder, None)
        }
    }

    /// POSTs one message that expects no response (a notification, or the answer to a
    /// server's request).
    pub(super) async fn post_message(
        &self,
        method_header: Option<&str>,
        body: String,
    ) -> Result<(), TransportError> {
        let (mut builder, _) = self.post_builder(None);
        if let Some(method) = method_header.filter(|_| !self.inner.session.speaks_session()) {
            builder = builder.header(METHOD_HEADER, method);
        }
        let request = builder
            .body(Bytes::from(body))
            .map_err(|e| TransportError::new(format!("bad request: {e}")))?;
        let mut quiet = Quiet::new(self.inner.idle_timeout);
        let response = quiet
            .within(self.inner.pool.send(request))
            .await
            .map_err(|e| match e {
                CallError::Transport(t) => t,
                CallError::Rpc(e) => TransportError::new(e.message),
            })?
            .map_err(|e| self.failed("POST", &e))?;
        let status = response.status;
        // Drain the body so the connection can serve the next request.
        let _ = collect(response.body, &mut quiet).await;
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

    /// `request`'s POST, and the session its fields name.
    fn outgoing(
        &self,
        request: &EncodedRequest<'_>,
    ) -> Result<(Outgoing, Option<HeaderValue>), CallError> {
        let body = Bytes::from(jsonrpc::encode_request(
            request.id,
            request.method,
            request.params,
        ));
        let body_version = request.protocol_version;
        let (mut outgoing, session) = if body_version == Some(PROTOCOL_VERSION) {
            (self.inner.modern_post(body).map_err(bad_request)?, None)
        } else {
            let (builder, session) = self.post_builder(body_version);
            let http_request = builder.body(body).map_err(bad_request)?;
            (self.inner.pool.outgoing(http_request), session)
        };
        // The routing headers are 2026-07-28's; a session's requests go without them.
        if body_version.is_none() {
            return Ok((outgoing, session));
        }
        let info = crate::protocol::method_info(request.method);
        outgoing.field(
            METHOD_HEADER.as_bytes(),
            method_value(request.method, info)?.as_bytes(),
        );
        if let Some(info) = info.filter(|info| info.target.is_some()) {
            let name = request.target.unwrap_or_default();
            let value = encoded_header_value(name);
            outgoing.field(NAME_HEADER.as_bytes(), value.as_bytes());
            if info.param_headers {
                self.inner
                    .tools
                    .stamp(&mut outgoing, name, request.params)?;
            }
        }
        Ok((outgoing, session))
    }

    /// Sends `request` once: the POST, and its answer read. Whether a refused request
    /// is sent again is the client's decision, not the transport's.
    pub(super) async fn exchange_encoded(
        &self,
        request: &EncodedRequest<'_>,
    ) -> Result<RawResult, CallError> {
        self.inner.session.sending(request);
        let mut result = match self.post(request).await {
            Err(CallError::Transport(refused)) if self.authorizable(&refused) => {
                // Boxed: the rare path stays out of every exchange's future.
                Box::pin(self.post_authorized(request, refused)).await?
            }
            other => other?,
        };
        // Asked after the answer, not held across it: the exchange's future stays small.
        if crate::protocol::says(request.method, |m| m.declares_param_headers) {
            // Scanned, not read as a tree: the tools with invalid annotations go.
            if let Some(kept) = self.inner.tools.learn(request.params, result.get()) {
                result = kept;
            }
        }
        Ok(result)
    }

    /// Builds `request`'s POST (with the bearer token as it stands) and sends it.
    async fn post(&self, request: &EncodedRequest<'_>) -> Result<RawResult, CallError> {
        let (outgoing, session) = self.outgoing(request)?;
        // Boxed as it is built, as the SSE reading in `send` is: the exchange's box then
        // stays within what the allocator's per-thread cache keeps (see the
        // `future_sizes` test), and no copy of the request waits in it.
        let sending = Box::pin(self.inner.pool.send_outgoing(outgoing));
        self.send(sending, request, session).await
    }

    /// Whether `refused` is a 401 or 403 the transport's authorizer may answer.
    fn authorizable(&self, refused: &TransportError) -> bool {
        self.inner.authorizer.is_some() && matches!(refused.http_status(), Some(401 | 403))
    }

    /// The authorizer answers the refusal with a token and the request goes again,
    /// at most [`MAX_AUTHORIZATION_RETRIES`] times; then the last refusal stands.
    async fn post_authorized(
        &self,
        request: &EncodedRequest<'_>,
        mut refused: TransportError,
    ) -> Result<RawResult, CallError> {
        let Some(authorizer) = self.inner.authorizer.clone() else {
            return Err(CallError::Transport(refused));
        };
        for _ in 0..MAX_AUTHORIZATION_RETRIES {
            let sent = self.bearer_token();
            let challenge = Challenge {
                resource: &self.inner.uri,
                status: refused.http_status().unwrap_or_default(),
                www_authenticate: refused.www_authenticate(),
                token: sent.as_deref(),
                dpop_nonce: refused.0.dpop_nonce.as_deref(),
            };
            let Some(token) = authorizer.authorize(challenge).await? else {
                break;
            };
            self.set_bearer_token(Some(&token))?;
            match self.post(request).await {
                Err(CallError::Transport(again)) if self.authorizable(&again) => refused = again,
                other => return other,
            }
        }
        Err(CallError::Transport(refused))
    }

    /// A request the pool could not send: the method, the endpoint and the causes.
    fn failed(&self, method: &str, error: &dyn std::error::Error) -> TransportError {
        TransportError::new(format!(
            "{method} {} failed: {}",
            self.inner.uri,
            chain(error)
        ))
    }

    /// Posts a built request and reads its JSON or SSE answer.
    async fn send(
        &self,
        sending: Pin<Box<impl Future<Output = Result<Answer, PoolError>>>>,
        request: &EncodedRequest<'_>,
        session: Option<HeaderValue>,
    ) -> Result<RawResult, CallError> {
        let inner = &self.inner;
        let mut quiet = Quiet::request(inner.idle_timeout, inner.timeout, inner.max_timeout);
        let response = quiet
            .within(sending)
            .await?
            .map_err(|e| CallError::Transport(self.failed("POST", &e)))?;
        let Answer {
            status,
            fields,
            body,
        } = response;
        let is_sse = fields
            .text(&CONTENT_TYPE)
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if status.is_success() {
            self.inner.session.answered(request, &fields);
        }
        if !status.is_success() {
            let body = collect(body, &mut quiet).await;
            let mut refused = refusal(status, &fields, body);
            if let Some(gone) = session.filter(|_| status == StatusCode::NOT_FOUND) {
                self.inner.session.forgotten(gone);
                if let CallError::Transport(t) = &mut refused {
                    t.0.message = "the server no longer knows the 2025-11-25 session".into();
                }
            }
            return Err(refused);
        }
        if is_sse {
            // The stream may go on after the response: its connection is not reused.
            return Box::pin(self.read_sse(body, request, quiet)).await;
        }
        let bytes = collect(body, &mut quiet).await?;
        match jsonrpc::receive(&bytes) {
            Ok(Received::Response(response)) if response.id == *request.id => {
                response.result.map_err(CallError::Rpc)
            }
            Ok(Received::Response(_)) => Err(CallError::Transport(TransportError::new(
                "the server answered with another request's id",
            ))),
            _ => Err(CallError::Transport(TransportError::new(format!(
                "HTTP {status} with a body that is not a JSON-RPC response"
            )))),
        }
    }

    /// Reads an SSE answer: notifications go to the request's channel, the server's own
    /// requests (2025-11-25 sessions) to the callbacks; the response ends it.
    async fn read_sse(
        &self,
        mut body: Body,
        request: &EncodedRequest<'_>,
        mut quiet: Quiet,
    ) -> Result<RawResult, CallError> {
        let mut reader = SseReader::new(MAX_RESPONSE_BYTES);
        let mut answering: HashMap<IdKey, tokio::task::AbortHandle> = HashMap::new();
        let mut resumed = 0;
        loop {
            while let Some(frame) = quiet.within(body.frame()).await? {
                let frame = frame.map_err(|e| sse_error(format!("failed: {}", chain(&e))))?;
                let Some(chunk) = frame.data_ref() else {
                    continue;
                };
                let events = reader.feed(chunk).map_err(|too_large| {
                    sse_error(format!("sent an event larger than {} bytes", too_large.0))
                })?;
                quiet.arrived(chunk.len(), reader.pending())?;
                // An event with no data primes a stream (its id and retry), and says nothing.
                for data in events.into_iter().filter(|d| !d.is_empty()) {
                    if let Some(answer) = self.on_event(&data, request, &mut quiet, &mut answering)
                    {
                        return answer;
                    }
                }
            }
            // A session's stream that closes before the response is resumed where it left
            // off (2025-11-25: a closed stream is not a cancellation), a few times.
            let last_id = reader.last_id().map(str::to_owned);
            match last_id.filter(|_| self.inner.session.speaks_session() && resumed < MAX_RESUMES) {
                Some(last_id) => {
                    resumed += 1;
                    let wait = reader
                        .retry()
                        .unwrap_or(DEFAULT_RESUME_WAIT)
                        .min(MAX_RESUME_WAIT);
                    tracing::debug!(?wait, %last_id, "the SSE stream closed before the response: resuming");
                    // Boxed: the rare path stays out of every exchange's future.
                    body = Box::pin(async {
                        tokio::time::sleep(wait).await;
                        self.resume_stream(&last_id, &mut quiet).await
                    })
                    .await?;
                }
                None => {
                    return Err(CallError::Transport(TransportError::new(
                        "the SSE stream ended before the response",
                    )));
                }
            }
        }
    }

    /// One message of an SSE answer: the response ends it (`Some`); the server's own
    /// requests go to the callbacks (and a `notifications/cancelled` withdraws one);
    /// other notifications go to the request's channel.
    fn on_event(
        &self,
        data: &str,
        request: &EncodedRequest<'_>,
        quiet: &mut Quiet,
        answering: &mut HashMap<IdKey, tokio::task::AbortHandle>,
    ) -> Option<Result<RawResult, CallError>> {
        match jsonrpc::receive(data.as_bytes()) {
            Ok(Received::Response(response)) if response.id == *request.id => {
                return Some(response.result.map_err(CallError::Rpc));
            }
            Ok(Received::Request { id, method, params }) => {
                quiet.asked();
                answering.retain(|_, task| !task.is_finished());
                let key = IdKey::from(&id);
                answering.insert(
                    key,
                    super::session::answer_server_request(self, id, method, params),
                );
            }
            Ok(Received::Notification { method, params })
                if crate::protocol::says(&method, |m| m.cancels_request) =>
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
            Ok(Received::Notification { method, params }) => {
                if crate::protocol::says(&method, |m| m.reports_progress) {
                    quiet.progressed();
                }
                if let Some(tx) = &request.notifications {
                    let _ = tx.send(json!({ "method": method, "params": params }));
                }
            }
            Ok(Received::Response(_)) => {
                tracing::debug!("ignoring a response to another request on an SSE stream");
            }
            Err(rejected) => {
                tracing::warn!(error = %rejected.error, "unreadable message on an SSE stream");
            }
        }
        None
    }

    /// GETs the session's stream from `last_id` on (`Last-Event-ID`): the rest of a
    /// stream that closed, or the session's standalone stream.
    pub(super) async fn resume_stream(
        &self,
        last_id: &str,
        quiet: &mut Quiet,
    ) -> Result<Body, CallError> {
        let (builder, _) = self.inner.session.stamp(
            self.inner
                .builder(Method::GET, crate::protocol::SESSION_PROTOCOL_VERSION)
                .header(ACCEPT, "text/event-stream"),
        );
        let builder = match last_id {
            "" => builder,
            id => builder.header(LAST_EVENT_ID, id),
        };
        let request = builder.body(Bytes::new()).map_err(bad_request)?;
        let response = quiet
            .within(self.inner.pool.send(request))
            .await?
            .map_err(|e| CallError::Transport(self.failed("GET", &e)))?;
        let Answer {
            status,
            fields,
            body,
        } = response;
        if !status.is_success() {
            let body = collect(body, quiet).await;
            return Err(refusal(status, &fields, body));
        }
        Ok(body)
    }
}

/// How many times one request's session stream is resumed after it closes.
const MAX_RESUMES: usize = 5;
/// The wait before resuming when the stream gave no `retry`.
const DEFAULT_RESUME_WAIT: std::time::Duration = std::time::Duration::from_secs(1);
/// The longest wait a server's `retry` can ask for.
const MAX_RESUME_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// `Last-Event-ID`.
const LAST_EVENT_ID: &str = "last-event-id";

/// An error with its causes (hyper's own message is only "client error (Connect)"; the
/// reason, such as an untrusted certificate, is in the sources).
/// What went wrong with an SSE answer, after "the SSE stream ".
fn sse_error(what: String) -> CallError {
    CallError::Transport(TransportError::new(format!("the SSE stream {what}")))
}

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

/// A whole body, at most [`MAX_RESPONSE_BYTES`], under the exchange's idle timeout.
async fn collect(mut body: Body, quiet: &mut Quiet) -> Result<Bytes, CallError> {
    let mut joined = Joined::new(MAX_RESPONSE_BYTES);
    while let Some(frame) = quiet.within(body.frame()).await? {
        let frame = frame.map_err(|e| {
            CallError::Transport(TransportError::new(format!(
                "could not read the response: {e}"
            )))
        })?;
        if let Ok(data) = frame.into_data() {
            // Until the body ends, all of it is a message under way.
            quiet.arrived(data.len(), usize::MAX)?;
            joined.push(data).map_err(|_| {
                CallError::Transport(TransportError::new(format!(
                    "could not read the response: larger than {MAX_RESPONSE_BYTES} bytes"
                )))
            })?;
        }
    }
    Ok(joined.finish())
}
