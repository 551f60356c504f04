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

/// What a pending request hears: its answer, or that it waited too long for one.
enum Heard {
    Answer(Result<RawResult, CallError>),
    /// No answer within this long (the connection's sweep gave up on it).
    NoAnswer(Duration),
}

type Reply = oneshot::Sender<Heard>;

/// A request waiting for its answer: where the answer goes, and until when it waits.
struct Pending {
    reply: Reply,
    /// [`ANSWER_WITHIN`] from the request or its last progress, at most `hard`.
    due: Instant,
    hard: Instant,
}

/// How often a connection with requests under way looks for those past their deadline:
/// one timer a connection, none a request.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// How long a request waits for its answer, from when it was sent or from the last
/// progress the server reported for it (as over HTTP, `HttpTimeouts::request`).
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// The longest a request waits, whatever progress it reports, and while the server
/// waits on the user (as over HTTP, `HttpTimeouts::max_request`).
const ANSWER_AT_MOST: Duration = Duration::from_secs(600);

#[derive(Default)]
struct Routes {
    pending: HashMap<IdKey, Pending>,
    /// progress token -> the request it reports on, and where its notifications go
    progress: HashMap<IdKey, (IdKey, mpsc::UnboundedSender<Value>)>,
    closed: bool,
}

impl Routes {
    /// Fails every pending request, saying `why`.
    fn fail_all(&mut self, why: &str) {
        for (_, pending) in self.pending.drain() {
            let failed = CallError::Transport(TransportError::new(why));
            let _ = pending.reply.send(Heard::Answer(Err(failed)));
        }
    }
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
    /// Wakes the sweep when a request is sent while none was pending, and when the
    /// connection goes.
    sent: Arc<tokio::sync::Notify>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.sent.notify_one();
    }
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
            sent: Arc::default(),
        });
        tokio::spawn(sweep(Arc::downgrade(&inner), Arc::clone(&inner.sent)));
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
                    Some(pending) => {
                        let answer = response.result.map_err(CallError::Rpc);
                        let _ = pending.reply.send(Heard::Answer(answer));
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
                let routed = token.and_then(|t| self.progressed(&t));
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
        let why = format!("{skipped}: it may have been this request's answer");
        lock(&self.routes).fail_all(&why);
    }

    fn close(&self) {
        let mut routes = lock(&self.routes);
        routes.closed = true;
        for (_, task) in lock(&self.answering).drain() {
            task.abort();
        }
        routes.fail_all("the server closed the connection");
        routes.progress.clear();
    }
}

impl Inner {
    /// Registers a request sent, its answer to go to `reply` and its progress (by its
    /// token) to its caller; its deadline kept by the sweep, woken if it slept.
    fn pend(
        &self,
        key: IdKey,
        reply: Reply,
        progress: Option<(IdKey, mpsc::UnboundedSender<Value>)>,
    ) -> Result<(), CallError> {
        let now = Instant::now();
        let pending = Pending {
            reply,
            due: now + ANSWER_WITHIN,
            hard: now + ANSWER_AT_MOST,
        };
        let mut routes = lock(&self.routes);
        if routes.closed {
            return Err(CallError::Transport(TransportError(
                "the connection is closed".into(),
            )));
        }
        if routes.pending.is_empty() {
            self.sent.notify_one();
        }
        if let Some((token, to)) = progress {
            routes.progress.insert(token, (key.clone(), to));
        }
        routes.pending.insert(key, pending);
        Ok(())
    }

    /// The channel progress with `token` goes to, its request's deadline pushed back
    /// (up to its hard limit) as the server said it is still at work.
    fn progressed(&self, token: &IdKey) -> Option<mpsc::UnboundedSender<Value>> {
        let mut routes = lock(&self.routes);
        let Routes {
            pending, progress, ..
        } = &mut *routes;
        let (request, tx) = progress.get(token)?;
        if let Some(pending) = pending.get_mut(request) {
            pending.due = (Instant::now() + ANSWER_WITHIN).min(pending.hard);
        }
        Some(tx.clone())
    }

    /// Gives up on the requests past their deadline at `now`. While the server waits on
    /// the user (the client answers its request), only the hard limit counts.
    fn sweep(&self, now: Instant) {
        let asking = !lock(&self.answering).is_empty();
        let mut routes = lock(&self.routes);
        let mut late = Vec::new();
        for (key, pending) in routes.pending.iter_mut() {
            if pending.due > now {
                continue;
            }
            if asking && pending.due < pending.hard {
                pending.due = pending.hard;
            } else {
                late.push(key.clone());
            }
        }
        for key in late {
            if let Some(pending) = routes.pending.remove(&key) {
                let waited = if pending.due < pending.hard {
                    ANSWER_WITHIN
                } else {
                    ANSWER_AT_MOST
                };
                let _ = pending.reply.send(Heard::NoAnswer(waited));
            }
        }
    }
}

/// The connection's one deadline timer: every [`SWEEP_EVERY`] while requests are under
/// way, asleep while none is; ends with the connection.
async fn sweep(inner: std::sync::Weak<Inner>, sent: Arc<tokio::sync::Notify>) {
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let idle = lock(&strong.routes).pending.is_empty();
        drop(strong);
        if idle {
            sent.notified().await;
            continue;
        }
        tokio::time::sleep(SWEEP_EVERY).await;
        match inner.upgrade() {
            Some(strong) => strong.sweep(Instant::now()),
            None => return,
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
    /// Given up on by the sweep, which took it from the pending requests.
    expired: bool,
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
        if !self.done && (was_pending || self.expired) {
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
            let to = request.notifications.cloned();
            self.inner.pend(key, tx, progress.clone().zip(to))?;
            let mut guard = PendingGuard {
                inner: Arc::clone(&self.inner),
                id: request.id.clone(),
                progress,
                done: false,
                expired: false,
            };
            let text = jsonrpc::encode_request(request.id, request.method, request.params);
            let text = String::from_utf8(text).map_err(|_| {
                CallError::Transport(TransportError::new("a request that is not UTF-8"))
            })?;
            self.inner.outbound.send(text).map_err(|_| {
                CallError::Transport(TransportError("the connection is closed".into()))
            })?;
            match rx.await {
                Ok(Heard::Answer(result)) => {
                    guard.done = true;
                    result
                }
                // Given up on: the guard tells the server it is cancelled.
                Ok(Heard::NoAnswer(waited)) => {
                    guard.expired = true;
                    Err(CallError::Transport(TransportError::new(format!(
                        "the server sent no answer to {} within {} s",
                        request.method,
                        waited.as_secs()
                    ))))
                }
                Err(_) => Err(CallError::Transport(TransportError(
                    "the connection closed before the response".into(),
                ))),
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
