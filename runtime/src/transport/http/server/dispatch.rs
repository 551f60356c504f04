//! One POST, from the checks to a JSON or SSE answer.

use std::collections::VecDeque;
use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{Shared, guard, validate};
use crate::jsonrpc::{self, Incoming, RpcError, code};
use crate::protocol::{self, META_PROTOCOL_VERSION, RequestMeta};
use crate::server::IncomingRequest;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::RequestId;

type Outcome = BoxFuture<'static, Result<Value, RpcError>>;

pub(crate) async fn handle_post(shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(why) = shared.hosts.check(&parts.headers) {
        tracing::warn!(
            reason = why,
            "rejected a request (DNS-rebinding protection)"
        );
        return rpc_error(
            StatusCode::FORBIDDEN,
            None,
            RpcError::invalid_request(format!("Forbidden: {why}")),
        );
    }
    let auth = match guard::authenticate(shared, &parts.headers).await {
        Ok(auth) => auth,
        Err(denied) => {
            let mut response = rpc_error(
                StatusCode::UNAUTHORIZED,
                None,
                RpcError::invalid_request(denied.message),
            );
            if let Ok(v) = HeaderValue::from_str(&denied.challenge) {
                response.headers_mut().insert(WWW_AUTHENTICATE, v);
            }
            return response;
        }
    };
    let bytes = match read_body(shared, &parts.headers, body).await {
        Ok(b) => b,
        Err(response) => return *response,
    };
    let message = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let error = RpcError::parse_error(format!("Parse error: {e}"));
            return rpc_error(StatusCode::BAD_REQUEST, None, error);
        }
    };
    let (id, method, params) = match Incoming::classify(message) {
        Err(rejected) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                rejected.id.as_ref(),
                rejected.error,
            );
        }
        Ok(Incoming::Notification { method, .. }) => {
            // 2026-07-28 defines no client notifications over HTTP; accept and ignore.
            tracing::trace!(method, "ignoring a client notification");
            return status_only(StatusCode::ACCEPTED);
        }
        Ok(Incoming::Response { id, .. }) => {
            let error = RpcError::invalid_request("Invalid Request: clients send no responses");
            return rpc_error(StatusCode::BAD_REQUEST, Some(&id), error);
        }
        Ok(Incoming::Request { id, method, params }) => (id, method, params),
    };
    let body_version = params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let Some(body_version) = body_version else {
        let error = RequestMeta::from_params(params.as_ref(), protocol::SUPPORTED_VERSIONS)
            .err()
            .unwrap_or_else(|| RpcError::invalid_params("Missing params._meta"));
        return rpc_error(StatusCode::BAD_REQUEST, Some(&id), error);
    };
    if let Err(error) = validate::check_headers(
        shared,
        &parts.headers,
        body_version,
        &method,
        params.as_ref(),
    ) {
        return rpc_error(StatusCode::BAD_REQUEST, Some(&id), error);
    }
    // The rest of `_meta` (client capabilities above all) is as much a protocol-level
    // refusal as a missing version: 400 here, not a 200 from the handler.
    if let Err(error) = RequestMeta::from_params(params.as_ref(), protocol::SUPPORTED_VERSIONS) {
        return rpc_error(StatusCode::BAD_REQUEST, Some(&id), error);
    }
    if !shared.server.handles(&method) {
        let error = RpcError::method_not_found(&method);
        return rpc_error(StatusCode::NOT_FOUND, Some(&id), error);
    }
    run(shared, &parts.headers, id, method, params, auth).await
}

async fn read_body(
    shared: &Shared,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, Box<Response>> {
    let too_large = || {
        Box::new(rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            RpcError::invalid_request(format!(
                "Request body larger than {} bytes",
                shared.max_body_bytes
            )),
        ))
    };
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > shared.max_body_bytes as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, shared.max_body_bytes)
        .await
        .map_err(|e| {
            let inner = e.into_inner();
            if inner.is::<http_body_util::LengthLimitError>() {
                too_large()
            } else {
                tracing::debug!(error = %inner, "could not read a request body");
                Box::new(rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    RpcError::invalid_request("Could not read the request body"),
                ))
            }
        })
}

/// Runs the handler: JSON when it returns without notifying, SSE from its first
/// notification on (see the module docs).
async fn run(
    shared: &Shared,
    headers: &HeaderMap,
    id: RequestId,
    method: String,
    params: Option<Value>,
    auth: Option<crate::auth::AuthInfo>,
) -> Response {
    let (json_ok, sse_ok) = accepts(headers);
    let cancel = CancellationToken::new();
    // Dropping the guard (the client went away and hyper dropped us) cancels the token.
    let guard = cancel.clone().drop_guard();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let request = IncomingRequest {
        id: id.clone(),
        method,
        params,
        auth,
        cancel,
        outbound: Some(tx),
    };
    let server = shared.server.clone();
    let mut outcome: Outcome = Box::pin(async move { server.handle(request).await });
    if !json_ok && sse_ok {
        return sse(SseState::new(id, outcome, rx, guard));
    }
    tokio::select! {
        biased;
        result = &mut outcome => {
            let mut state = SseState::new(id, outcome, rx, guard);
            state.finished = Some(result);
            // Notifications sent just before returning still make it a stream.
            state.drain();
            if state.pending.is_empty() || !sse_ok {
                let _ = state.guard.take().map(DropGuard::disarm);
                let (id, result) = (state.id, state.finished.take().unwrap_or_else(|| Err(RpcError::internal("Internal error"))));
                json(&id, &result)
            } else {
                sse(state)
            }
        }
        Some(first) = rx.recv(), if sse_ok => {
            let mut state = SseState::new(id, outcome, rx, guard);
            state.pending.push_back(first);
            sse(state)
        }
    }
}

/// Whether the client accepts JSON and SSE (a missing `Accept` accepts both).
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let Some(accept) = headers.get(ACCEPT).and_then(|v| v.to_str().ok()) else {
        return (true, true);
    };
    let any = accept.contains("*/*");
    let json = any || accept.contains("application/json") || accept.contains("application/*");
    let sse = any || accept.contains("text/event-stream") || accept.contains("text/*");
    (json, sse)
}

/// An SSE response in progress: the handler, its notifications, and the response once
/// it is known.
struct SseState {
    id: RequestId,
    outcome: Option<Outcome>,
    rx: mpsc::UnboundedReceiver<String>,
    guard: Option<DropGuard>,
    pending: VecDeque<String>,
    finished: Option<Result<Value, RpcError>>,
}

impl SseState {
    fn new(
        id: RequestId,
        outcome: Outcome,
        rx: mpsc::UnboundedReceiver<String>,
        guard: DropGuard,
    ) -> Self {
        Self {
            id,
            outcome: Some(outcome),
            rx,
            guard: Some(guard),
            pending: VecDeque::new(),
            finished: None,
        }
    }

    fn drain(&mut self) {
        while let Ok(n) = self.rx.try_recv() {
            self.pending.push_back(n);
        }
    }

    /// The next chunk of the stream, or `None` after the response.
    async fn next(&mut self) -> Option<Bytes> {
        if self.finished.is_none() && self.pending.is_empty() {
            let outcome = self.outcome.as_mut()?;
            tokio::select! {
                biased;
                Some(n) = self.rx.recv() => self.pending.push_back(n),
                result = outcome => {
                    self.finished = Some(result);
                    self.drain();
                }
            }
        }
        if let Some(n) = self.pending.pop_front() {
            return Some(event(&n));
        }
        let result = self.finished.take()?;
        self.outcome = None;
        let _ = self.guard.take().map(DropGuard::disarm);
        Some(event(&jsonrpc::response(Some(&self.id), &result)))
    }
}

fn event(message: &str) -> Bytes {
    // serde_json writes no raw newlines, so one `data:` line holds the whole message.
    let mut out = String::with_capacity(message.len() + 24);
    out.push_str("event: message\ndata: ");
    out.push_str(message);
    out.push_str("\n\n");
    Bytes::from(out)
}

fn sse(state: SseState) -> Response {
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        let chunk = state.next().await?;
        Some((Ok::<_, Infallible>(chunk), state))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let h = response.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The HTTP status of a JSON-RPC error answer: protocol-level refusals are 400, an
/// unknown method 404, anything a handler decided 200.
fn status_for(error: &RpcError) -> StatusCode {
    match error.code {
        code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        code::HEADER_MISMATCH
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION
        | code::PARSE_ERROR
        | code::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn json(id: &RequestId, result: &Result<Value, RpcError>) -> Response {
    let status = match result {
        Ok(_) => StatusCode::OK,
        Err(e) => status_for(e),
    };
    json_body(status, jsonrpc::response(Some(id), result))
}

fn rpc_error(status: StatusCode, id: Option<&RequestId>, error: RpcError) -> Response {
    json_body(status, jsonrpc::response(id, &Err(error)))
}

fn json_body(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn status_only(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}
