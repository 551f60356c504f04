//! A client's JSON-RPC connection over a message transport: ids, pending requests,
//! progress routing and cancellation on drop, and, on a 2025-11-25 session, answering
//! the server's own requests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::jsonrpc::{self, RawResult, Received, RpcError};
use crate::transport::{
    BoxFuture, CallError, ClientTransport, EncodedRequest, MessageTransport, OutgoingRequest,
    ServerRequestHandler, TransportError,
};
use crate::types::rpc::Notification as _;
use crate::types::v2026_07_28::RequestId;
use crate::types::v2026_07_28::method::Cancelled;
use crate::util::{IdKey, lock};

type Reply = oneshot::Sender<Result<RawResult, CallError>>;

/// How long a request waits for its answer, from when it was sent or from the last
/// progress the server reported for it (as over HTTP, `HttpTimeouts::request`).
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// The longest a request waits, whatever progress it reports, and while the server
/// waits on the user (as over HTTP, `HttpTimeouts::max_request`).
const ANSWER_AT_MOST: Duration = Duration::from_secs(600);

#[derive(Default)]
struct Routes {
    pending: HashMap<IdKey, Reply>,
    /// progress token -> the request's notification channel
    progress: HashMap<IdKey, mpsc::UnboundedSender<Value>>,
    closed: bool,
}

/// A [`ClientTransport`] over a [`MessageTransport`]: the in-memory pair, or stdio.
#[derive(Clone)]
pub(crate) struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    outbound: mpsc::UnboundedSender<String>,
    routes: Mutex<Routes>,
    next_id: AtomicI64,
    notifications: Mutex<Option<mpsc::UnboundedSender<Value>>>,
    /// The same notifications, for every [`ClientTransport::notices`] listener.
    notices: tokio::sync::broadcast::Sender<Value>,
    /// Answers server-to-client requests; none outside a 2025-11-25 session.
    server_requests: Mutex<Option<ServerRequestHandler>>,
    /// The server's requests being answered, so the server can cancel them.
    answering: Mutex<HashMap<IdKey, tokio::task::AbortHandle>>,
    /// How many unreadable messages came (a server that logs on stdout sends many).
    unreadable: AtomicUsize,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts the connection's reader and writer tasks on the current tokio runtime.
    pub(crate) fn new<T: MessageTransport>(transport: T) -> Self {
        let (sink, mut source) = transport.split();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
        let inner = Arc::new(Inner {
            outbound: out_tx,
            routes: Mutex::default(),
            next_id: AtomicI64::new(1),
            notifications: Mutex::new(None),
            notices: tokio::sync::broadcast::channel(crate::transport::NOTICE_BACKLOG).0,
            server_requests: Mutex::new(None),
            answering: Mutex::default(),
            unreadable: AtomicUsize::new(0),
        });
        tokio::spawn(async move {
            while let Some(message) = out_rx.recv().await {
                if sink.send(message).await.is_err() {
                    break;
                }
            }
        });
        let reader = Arc::downgrade(&inner);
        tokio::spawn(async move {
            while let Some(message) = source.recv().await {
                let Some(inner) = reader.upgrade() else { break };
                match message {
                    Ok(text) => inner.dispatch(&text),
                    Err(e) if e.is_skipped() => {
                        tracing::warn!(error = %e, "skipped a message from the server");
                        inner.lost(&e);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "transport failed");
                        break;
                    }
                }
            }
            if let Some(inner) = reader.upgrade() {
                inner.close();
            }
        });
        Self { inner }
    }
}

impl Inner {
    fn dispatch(self: &Arc<Self>, text: &str) {
        match jsonrpc::receive(text.as_bytes()) {
            Ok(Received::Response(response)) => {
                let reply = lock(&self.routes)
                    .pending
                    .remove(&IdKey::from(&response.id));
                match reply {
                    Some(tx) => {
                        let _ = tx.send(response.result.map_err(CallError::Rpc));
                    }
                    None => tracing::debug!(id = ?response.id, "a response to no pending request"),
                }
            }
            Ok(Received::Notification { method, params }) => {
                if crate::protocol::says(&method, |m| m.cancels_request)
                    && self.cancel_answer(params.as_ref())
                {
                    return;
                }
                let message = json!({ "method": method, "params": params });
                let token = params
                    .as_ref()
                    .and_then(|p| p.get("progressToken"))
                    .and_then(IdKey::from_value);
                let routed = token.and_then(|t| lock(&self.routes).progress.get(&t).cloned());
                match routed {
                    Some(tx) => {
                        let _ = tx.send(message);
                    }
                    None => {
                        // Heard by nobody is not an error: there may be no listener.
                        let _ = self.notices.send(message.clone());
                        if let Some(tx) = lock(&self.notifications).as_ref() {
                            let _ = tx.send(message);
                        }
                    }
                }
            }
            Ok(Received::Request { id, method, params }) => {
                self.answer(id, method, params);
            }
            Err(rejected) => {
                // The first is a warning; the rest of a stream of them, detail.
                if self.unreadable.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::warn!(error = %rejected.error, "unreadable message from the server");
                } else {
                    tracing::debug!(error = %rejected.error, "unreadable message from the server");
                }
            }
        }
    }

    /// Answers a server-to-client request with the session's handler, in a task of its
    /// own so a slow callback (a person filling in a form) holds up nothing else.
    fn answer(self: &Arc<Self>, id: RequestId, method: String, params: Option<Value>) {
        let handler = lock(&self.server_requests).clone();
        let Some(handler) = handler else {
            // Server-to-client requests belong to 2025-11-25 sessions.
            let error = RpcError::method_not_found(&method);
            let _ = self
                .outbound
                .send(jsonrpc::response(Some(&id), &Err(error)));
            return;
        };
        let key = IdKey::from(&id);
        let inner = Arc::downgrade(self);
        let mut answering = lock(&self.answering);
        let task_key = key.clone();
        let task = tokio::spawn(async move {
            let result = handler(method, params).await;
            if let Some(inner) = inner.upgrade() {
                lock(&inner.answering).remove(&task_key);
                let _ = inner.outbound.send(jsonrpc::response(Some(&id), &result));
            }
        });
        answering.insert(key, task.abort_handle());
    }

    /// Stops answering a request the server cancelled; `false` when it names none.
    fn cancel_answer(&self, params: Option<&Value>) -> bool {
        let key = params
            .and_then(|p| p.get("requestId"))
            .and_then(IdKey::from_value);
        match key.and_then(|k| lock(&self.answering).remove(&k)) {
            Some(task) => {
                // A cancelled request gets no response.
                task.abort();
                true
            }
            None => false,
        }
    }

    /// A message from the server was skipped (past the transport's budget): it may have
    /// been the answer to any request under way, so each fails now, saying why, rather
    /// than wait out its deadline for an answer that will not come. The connection stays.
    fn lost(&self, skipped: &TransportError) {
        let mut routes = lock(&self.routes);
        for (_, tx) in routes.pending.drain() {
            let _ = tx.send(Err(CallError::Transport(TransportError::new(format!(
                "{skipped}: it may have been this request's answer"
            )))));
        }
    }

    fn close(&self) {
        let mut routes = lock(&self.routes);
        routes.closed = true;
        for (_, task) in lock(&self.answering).drain() {
            task.abort();
        }
        for (_, tx) in routes.pending.drain() {
            let _ = tx.send(Err(CallError::Transport(TransportError(
                "the server closed the connection".into(),
            ))));
        }
        routes.progress.clear();
    }
}

impl Connection {
    /// The answer `answer` brings, within [`ANSWER_WITHIN`] of the request or of the
    /// last progress `heard` for it (passed on to `notifications`), and at most
    /// [`ANSWER_AT_MOST`]; while the server waits on the user (the client answers its
    /// request), only the most counts. `Err` when it was given up on.
    async fn answer_within(
        &self,
        mut answer: oneshot::Receiver<Result<RawResult, CallError>>,
        mut heard: Option<mpsc::UnboundedReceiver<Value>>,
        notifications: Option<&mpsc::UnboundedSender<Value>>,
        method: &str,
    ) -> Result<Result<RawResult, CallError>, CallError> {
        let hard = Instant::now() + ANSWER_AT_MOST;
        let mut due = Instant::now() + ANSWER_WITHIN;
        loop {
            tokio::select! {
                answered = &mut answer => {
                    // Progress that came before the answer is passed on before it.
                    if let (Some(heard), Some(to)) = (heard.as_mut(), notifications) {
                        while let Ok(progress) = heard.try_recv() {
                            let _ = to.send(progress);
                        }
                    }
                    return Ok(answered.unwrap_or_else(|_| {
                        Err(CallError::Transport(TransportError(
                            "the connection closed before the response".into(),
                        )))
                    }));
                }
                Some(progress) = async {
                    match heard.as_mut() {
                        Some(heard) => heard.recv().await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some(to) = notifications {
                        let _ = to.send(progress);
                    }
                    due = (Instant::now() + ANSWER_WITHIN).min(hard);
                }
                () = tokio::time::sleep_until(due) => {
                    let asking = !lock(&self.inner.answering).is_empty();
                    if asking && due < hard {
                        due = hard;
                        continue;
                    }
                    let waited = if due < hard { ANSWER_WITHIN } else { ANSWER_AT_MOST };
                    return Err(CallError::Transport(TransportError::new(format!(
                        "the server sent no answer to {method} within {} s",
                        waited.as_secs()
                    ))));
                }
            }
        }
    }
}

/// Removes a request's routes and, if it never got an answer, tells the server it was
/// cancelled.
struct PendingGuard {
    inner: Arc<Inner>,
    id: RequestId,
    progress: Option<IdKey>,
    done: bool,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let key = IdKey::from(&self.id);
        let mut routes = lock(&self.inner.routes);
        let was_pending = routes.pending.remove(&key).is_some();
        if let Some(p) = &self.progress {
            routes.progress.remove(p);
        }
        drop(routes);
        if !self.done && was_pending {
            let id = match &self.id {
                RequestId::Integer(i) => Value::from(*i),
                RequestId::String(s) => Value::from(s.as_str()),
            };
            let _ = self.inner.outbound.send(jsonrpc::notification(
                Cancelled::METHOD,
                Some(json!({ "requestId": id, "reason": "the caller abandoned the request" })),
            ));
        }
    }
}

impl ClientTransport for Connection {
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move { request.send_as_text(self).await })
    }

    fn notices(&self) -> Option<tokio::sync::broadcast::Receiver<Value>> {
        Some(self.inner.notices.subscribe())
    }

    fn request_encoded<'a>(
        &'a self,
        request: EncodedRequest<'a>,
    ) -> BoxFuture<'a, Result<RawResult, CallError>> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            let key = IdKey::from(request.id);
            // Progress is routed by the token in `_meta`, read back only when wanted.
            let progress = request
                .notifications
                .and_then(|_| progress_token(request.params));
            // Progress comes through here, where it pushes the deadline back: made only
            // for a request that asks for it (a channel is two allocations).
            let (heard_tx, heard) = match progress {
                Some(_) => {
                    let (tx, rx) = mpsc::unbounded_channel();
                    (Some(tx), Some(rx))
                }
                None => (None, None),
            };
            {
                let mut routes = lock(&self.inner.routes);
                if routes.closed {
                    return Err(CallError::Transport(TransportError(
                        "the connection is closed".into(),
                    )));
                }
                routes.pending.insert(key, tx);
                if let (Some(p), Some(heard_tx)) = (&progress, heard_tx) {
                    routes.progress.insert(p.clone(), heard_tx);
                }
            }
            let mut guard = PendingGuard {
                inner: Arc::clone(&self.inner),
                id: request.id.clone(),
                progress,
                done: false,
            };
            let text = jsonrpc::encode_request(request.id, request.method, request.params);
            let text = String::from_utf8(text).map_err(|_| {
                CallError::Transport(TransportError::new("a request that is not UTF-8"))
            })?;
            self.inner.outbound.send(text).map_err(|_| {
                CallError::Transport(TransportError("the connection is closed".into()))
            })?;
            let waited = self
                .answer_within(rx, heard, request.notifications, request.method)
                .await;
            match waited {
                Ok(result) => {
                    guard.done = true;
                    result
                }
                // Given up on: the guard tells the server it is cancelled.
                Err(late) => Err(late),
            }
        })
    }

    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        let result = self
            .inner
            .outbound
            .send(jsonrpc::notification(method, params))
            .map_err(|_| TransportError("the connection is closed".into()));
        Box::pin(async move { result })
    }

    fn next_id(&self) -> RequestId {
        RequestId::Integer(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn route_server_requests(&self, handler: ServerRequestHandler) {
        *lock(&self.inner.server_requests) = Some(handler);
    }
}

/// The `_meta.progressToken` of params written as `text`.
fn progress_token(text: &str) -> Option<IdKey> {
    let params: Value = serde_json::from_str(text).ok()?;
    IdKey::from_value(params.get("_meta")?.get("progressToken")?)
}
