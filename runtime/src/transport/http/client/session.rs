//! The 2025-11-25 session: the `Mcp-Session-Id` the server gave at `initialize`, the
//! server's own requests arriving on response streams and on the session's standalone
//! stream (GET, resumed with `Last-Event-ID`), a new session when the server
//! forgets the old one (404), and the DELETE that ends it when the transport goes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};
use serde_json::Value;

use super::MAX_RESPONSE_BYTES;
use super::quiet::Quiet;
use super::{HttpClientTransport, Inner};
use crate::Era;
use crate::jsonrpc::Received;
use crate::jsonrpc::{self, RpcError};
use crate::protocol::SESSION_PROTOCOL_VERSION;
use crate::protocol::era::session_says;
use crate::transport::http::fields::{Fields as _, HeadFields};
use crate::transport::http::sse::SseReader;
use crate::transport::{CallError, ClientTransport as _, EncodedRequest, ServerRequestHandler};
use crate::types::rpc::{Notification as _, Request as _};
use crate::types::v2025_11_25::method as old;
use crate::types::v2026_07_28::RequestId;
use crate::util::lock;
use http_body_util::BodyExt as _;

/// `Mcp-Session-Id`: the 2025-11-25 session a request belongs to.
const SESSION_HEADER: &str = "mcp-session-id";
const SESSION: HeaderName = HeaderName::from_static(SESSION_HEADER);

/// What the transport keeps of a 2025-11-25 session.
#[derive(Default)]
pub(super) struct Session {
    /// Speaking 2025-11-25 (after negotiation chose it).
    session_era: AtomicBool,
    /// The session `initialize` opened.
    id: Mutex<Option<HeaderValue>>,
    /// The last session the server answered 404 to a request in: the one to replace.
    forgotten: Mutex<Option<HeaderValue>>,
    /// Answers the server's requests.
    server_requests: Mutex<Option<ServerRequestHandler>>,
    /// The `initialize` params of the session (JSON text), to open a new one when it
    /// ends.
    initialize: Mutex<Option<String>>,
    /// Held while a new session is being opened.
    reopening: tokio::sync::Mutex<()>,
    /// Cancelled when the transport goes: its standalone stream stops.
    closing: tokio_util::sync::CancellationToken,
    /// The notifications of the standalone stream, for [`ClientTransport::notices`].
    notices: Notices,
}

/// The sending side of the standalone stream's notifications.
pub(super) struct Notices(pub(super) tokio::sync::broadcast::Sender<Value>);

impl Default for Notices {
    fn default() -> Self {
        Self(tokio::sync::broadcast::channel(crate::transport::NOTICE_BACKLOG).0)
    }
}

impl Session {
    pub(super) fn notices(&self) -> tokio::sync::broadcast::Receiver<Value> {
        self.notices.0.subscribe()
    }
}

impl Session {
    pub(super) fn speaks_session(&self) -> bool {
        self.session_era.load(Ordering::Relaxed)
    }

    pub(super) fn negotiated(&self, era: Era) {
        self.session_era
            .store(era == Era::Session, Ordering::Relaxed);
    }

    pub(super) fn route_server_requests(&self, handler: ServerRequestHandler) {
        *lock(&self.server_requests) = Some(handler);
    }

    /// Names the open session, if any, on a request in it; returns which it named.
    pub(super) fn stamp(
        &self,
        builder: http::request::Builder,
    ) -> (http::request::Builder, Option<HeaderValue>) {
        match lock(&self.id).clone() {
            Some(session) => (
                builder.header(SESSION_HEADER, session.clone()),
                Some(session),
            ),
            None => (builder, None),
        }
    }

    /// The server answered 404 to a request in `session`: it no longer knows it. A
    /// late 404 for a session already replaced changes nothing.
    pub(super) fn forgotten(&self, session: HeaderValue) {
        if lock(&self.id).as_ref() == Some(&session) {
            *lock(&self.forgotten) = Some(session);
        }
    }

    /// Keeps the params of an `initialize` being sent, to open a new session with them
    /// if the server ends this one.
    pub(super) fn sending(&self, request: &EncodedRequest<'_>) {
        if opens_session(request) {
            *lock(&self.initialize) = Some(request.params.to_owned());
        }
    }

    /// Takes the session a successful `initialize` answer names.
    pub(super) fn answered(&self, request: &EncodedRequest<'_>, fields: &HeadFields) {
        if opens_session(request) {
            if let Some(session) = fields
                .get(&SESSION)
                .and_then(|v| HeaderValue::from_bytes(v).ok())
            {
                *lock(&self.id) = Some(session);
            }
        }
    }
}

/// The server no longer knows the 2025-11-25 session a request named (404: it
/// expired, or the server restarted). As that era asks, opens a new one with the
/// same `initialize`, unless a concurrent request that hit the same 404 already has;
/// `false` when no session was forgotten or none was ever opened.
pub(super) async fn open_new_session(transport: &HttpClientTransport) -> Result<bool, CallError> {
    let session = &transport.inner.session;
    let Some(gone) = lock(&session.forgotten).clone() else {
        return Ok(false);
    };
    let Some(initialize) = lock(&session.initialize).clone() else {
        return Ok(false);
    };
    let _one_at_a_time = session.reopening.lock().await;
    if lock(&session.id).as_ref() == Some(&gone) {
        tracing::info!("the server ended the 2025-11-25 session; opening a new one");
        *lock(&session.id) = None;
        let id = transport.next_id();
        transport
            .exchange_encoded(&EncodedRequest {
                id: &id,
                method: old::Initialize::METHOD,
                params: &initialize,
                target: None,
                protocol_version: None,
                notifications: None,
            })
            .await?;
        let initialized = jsonrpc::notification(old::Initialized::METHOD, None);
        transport
            .post_message(Some(old::Initialized::METHOD), initialized)
            .await?;
        open_standalone_stream(transport).await;
    }
    Ok(true)
}

/// Answers a request the server sent on a response stream (2025-11-25 sessions),
/// in its own task so the stream keeps being read. Returns the task, which a
/// `notifications/cancelled` from the server aborts.
pub(super) fn answer_server_request(
    transport: &HttpClientTransport,
    id: RequestId,
    method: String,
    params: Option<Value>,
) -> tokio::task::AbortHandle {
    let handler = lock(&transport.inner.session.server_requests).clone();
    let transport = transport.clone();
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

/// Opens the session's standalone stream (GET) in a task of its own: the server's
/// requests and notifications outside any of ours arrive there. A stream that
/// closes is resumed with `Last-Event-ID` after the server's `retry`; the task ends
/// with the transport, when the server has no such stream (405), or after a few
/// failures in a row. Resolves once the first attempt is answered (the stream is
/// open, or refused), or after [`STANDALONE_OPENING`]: a server may send to the
/// session outside any request (a tool's elicitation) as soon as it is ready, and
/// drops what it has no stream for.
pub(super) async fn open_standalone_stream(transport: &HttpClientTransport) {
    let weak = Arc::downgrade(&transport.inner);
    let closing = transport.inner.session.closing.clone();
    let (opened, answered) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        tokio::select! {
            () = closing.cancelled() => {}
            () = standalone(weak, opened) => {}
        }
    });
    // Dropped unsent (the task ended) resolves it too.
    let _ = tokio::time::timeout(STANDALONE_OPENING, answered).await;
}

/// Whether `request` opens a session: a 2026-07-28 request (its `_meta` names the
/// version) never does, and is not looked up.
fn opens_session(request: &EncodedRequest<'_>) -> bool {
    request.protocol_version.is_none() && session_says(request.method, |m| m.opens_session)
}

/// The longest a session's start waits for its standalone stream to open.
const STANDALONE_OPENING: Duration = Duration::from_secs(2);

/// How many failed attempts in a row end the standalone stream.
const STANDALONE_FAILURES: usize = 5;

async fn standalone(weak: Weak<Inner>, opened: tokio::sync::oneshot::Sender<()>) {
    let mut opened = Some(opened);
    let mut last_id = String::new();
    let mut failures = 0;
    let mut wait = Duration::from_secs(1);
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let transport = HttpClientTransport { inner };
        let mut quiet = Quiet::new(transport.inner.idle_timeout);
        let stream = transport.resume_stream(&last_id, &mut quiet).await;
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        // The stream is read without holding the transport, so dropping it still ends
        // the session (and this task).
        drop(transport);
        match stream {
            Err(e) => {
                let no_stream =
                    matches!(&e, CallError::Transport(t) if t.http_status() == Some(405));
                failures += 1;
                if no_stream || failures >= STANDALONE_FAILURES {
                    tracing::debug!(error = %e, "no standalone stream for this session");
                    return;
                }
            }
            Ok(mut body) => {
                failures = 0;
                let mut reader = SseReader::new(MAX_RESPONSE_BYTES);
                while let Ok(Some(Ok(frame))) = quiet.within(body.frame()).await {
                    let Some(chunk) = frame.data_ref() else {
                        continue;
                    };
                    let Ok(events) = reader.feed(chunk) else {
                        break;
                    };
                    for data in events.into_iter().filter(|d| !d.is_empty()) {
                        let Some(inner) = weak.upgrade() else { return };
                        standalone_message(&HttpClientTransport { inner }, data.as_bytes());
                    }
                }
                if let Some(id) = reader.last_id() {
                    id.clone_into(&mut last_id);
                }
                if let Some(retry) = reader.retry() {
                    wait = retry.min(Duration::from_secs(30));
                }
            }
        }
        tokio::time::sleep(wait).await;
    }
}

/// One message of the standalone stream: a server's request answered, a notification
/// handed to the session's notices, anything else dropped.
fn standalone_message(transport: &HttpClientTransport, data: &[u8]) {
    match jsonrpc::receive(data) {
        Ok(Received::Request { id, method, params }) => {
            answer_server_request(transport, id, method, params);
        }
        Ok(Received::Notification { method, params }) => {
            tracing::debug!(%method, "a session notification on the standalone stream");
            let notice = serde_json::json!({ "method": method, "params": params });
            let _ = transport.inner.session.notices.0.send(notice);
        }
        _ => tracing::debug!("ignoring a message on the standalone stream"),
    }
}

impl Drop for Inner {
    /// Ends the 2025-11-25 session, if one is open, as the spec asks of a client that no
    /// longer needs it (best effort: only inside a Tokio runtime).
    fn drop(&mut self) {
        self.session.closing.cancel();
        let Some(session) = lock(&self.session.id).take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let request = self
            .builder(Method::DELETE, SESSION_PROTOCOL_VERSION)
            .header(SESSION_HEADER, session);
        let Ok(request) = request.body(Bytes::new()) else {
            return;
        };
        let pool = self.pool.clone();
        runtime.spawn(async move {
            match pool.send(request).await {
                Ok(r) => tracing::debug!(status = %r.status, "ended the 2025-11-25 session"),
                Err(e) => tracing::debug!(error = %e, "could not end the 2025-11-25 session"),
            }
        });
    }
}
