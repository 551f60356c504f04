//! A 2025-11-25 session's SSE streams over HTTP: the standalone GET stream, where the
//! session's notifications outside any request go, and the streams of its POSTs. Every
//! event has an id and every stream opens with a priming event carrying `retry`, so a
//! client that loses a stream reconnects (GET, `Last-Event-ID`) and gets what it
//! missed from the [`EventStore`], then the rest live.
//!
//! A POST's stream is written into the store by a task of its own, so the handler goes
//! on when the client's connection drops (the era's rule: a disconnection is not a
//! cancellation); the session's end, or `notifications/cancelled`, stops it.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderName, HeaderValue};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::events::EventStore;
use crate::transport::http::fields::Fields;
use crate::util::lock;

/// The standalone stream's name in the store.
const GET_STREAM: &str = "get";

/// `Last-Event-ID`.
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";
const LAST_EVENT: HeaderName = HeaderName::from_static(LAST_EVENT_ID);

/// How long a client should wait before reconnecting a lost stream (default).
pub const DEFAULT_SSE_RETRY: Duration = Duration::from_secs(1);

/// One session's streams.
pub(crate) struct SessionStreams {
    /// The session's id, its key in the store.
    name: String,
    store: Arc<dyn EventStore>,
    /// Woken on every event and every stream's end: readers look again.
    changed: Notify,
    next_stream: AtomicU64,
    retry: Duration,
    forwarder: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl SessionStreams {
    pub(crate) fn new(name: String, store: Arc<dyn EventStore>, retry: Duration) -> Self {
        Self {
            name,
            store,
            changed: Notify::new(),
            next_stream: AtomicU64::new(1),
            retry,
            forwarder: std::sync::Mutex::new(None),
        }
    }

    /// Keeps the task carrying the server's events to the GET stream, to stop it when
    /// the session ends.
    pub(crate) fn set_forwarder(&self, task: tokio::task::JoinHandle<()>) {
        *lock(&self.forwarder) = Some(task);
    }

    /// The session's notification outside any request, on the GET stream.
    pub(crate) fn notify(&self, message: &str) {
        self.store.append(&self.name, GET_STREAM, message);
        self.changed.notify_waiters();
    }

    /// Ends the streams: the forwarder stops, the store forgets the session, readers
    /// finish.
    pub(crate) fn end(&self) {
        if let Some(task) = lock(&self.forwarder).take() {
            task.abort();
        }
        self.store.end_session(&self.name);
        self.changed.notify_waiters();
    }

    /// Opens a POST's stream: its name and the priming position.
    pub(crate) fn open_request_stream(&self) -> (String, String) {
        let stream = format!("r{}", self.next_stream.fetch_add(1, Ordering::Relaxed));
        let position = self.store.position(&self.name, &stream);
        (stream, position)
    }

    /// Keeps one message of a POST's stream.
    pub(crate) fn append(&self, stream: &str, message: &str) {
        self.store.append(&self.name, stream, message);
        self.changed.notify_waiters();
    }

    /// Ends a POST's stream after its response.
    pub(crate) fn end_stream(&self, stream: &str) {
        self.store.end_stream(&self.name, stream);
        self.changed.notify_waiters();
    }

    /// The GET stream from where the client left it (`Last-Event-ID`, on any of the
    /// session's streams) or, without one it can resume, from now; it ends when
    /// `closing` is cancelled (the endpoint drains: the client resumes elsewhere).
    pub(crate) fn resume(
        self: &Arc<Self>,
        headers: &impl Fields,
        closing: &CancellationToken,
    ) -> Response {
        let last = headers
            .text(&LAST_EVENT)
            .filter(|id| self.store.replay(&self.name, id).is_some());
        let from = match last {
            Some(id) => id.to_owned(),
            None => self.store.position(&self.name, GET_STREAM),
        };
        self.respond_until(from, Some(closing.clone()))
    }

    /// An SSE response reading the store from `from` on its stream: a priming event
    /// (the position, `retry`), then every event after it, live, until the stream ends.
    pub(crate) fn respond(self: &Arc<Self>, from: String) -> Response {
        self.respond_until(from, None)
    }

    /// [`respond`](Self::respond), ending early when `closing` is cancelled.
    fn respond_until(
        self: &Arc<Self>,
        from: String,
        closing: Option<CancellationToken>,
    ) -> Response {
        let priming = Bytes::from(format!(
            "id: {from}\nretry: {}\ndata: \n\n",
            self.retry.as_millis()
        ));
        let reader = Reader {
            streams: Arc::clone(self),
            cursor: from,
            queue: Vec::new().into_iter(),
            ended: false,
            closing,
        };
        let first = futures_util::stream::once(async move { Ok::<_, Infallible>(priming) });
        let rest = futures_util::stream::unfold(reader, |mut reader| async move {
            let chunk = reader.next().await?;
            Some((Ok::<_, Infallible>(chunk), reader))
        });
        use futures_util::StreamExt as _;
        let mut response = Response::new(Body::from_stream(first.chain(rest)));
        let h = response.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    }
}

/// One client's place in one stream.
struct Reader {
    streams: Arc<SessionStreams>,
    cursor: String,
    queue: std::vec::IntoIter<(String, String)>,
    ended: bool,
    /// Ends the stream when cancelled, whatever is still to come.
    closing: Option<CancellationToken>,
}

impl Reader {
    /// The next event, or `None` once the stream ended (or was forgotten).
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some((id, message)) = self.queue.next() {
                self.cursor.clone_from(&id);
                return Some(event(&id, &message));
            }
            if self.ended {
                return None;
            }
            let streams = Arc::clone(&self.streams);
            let changed = streams.changed.notified();
            tokio::pin!(changed);
            // Registered before looking, so an event kept in between still wakes us.
            changed.as_mut().enable();
            let replay = streams.store.replay(&streams.name, &self.cursor)?;
            self.ended = replay.ended;
            if replay.events.is_empty() && !self.ended {
                match &self.closing {
                    Some(closing) => tokio::select! {
                        () = changed => {}
                        () = closing.cancelled() => return None,
                    },
                    None => changed.await,
                }
            }
            self.queue = replay.events.into_iter();
        }
    }
}

fn event(id: &str, message: &str) -> Bytes {
    // serde_json writes no raw newlines, so one `data:` line holds the whole message.
    let mut out = String::with_capacity(message.len() + id.len() + 28);
    out.push_str("event: message\nid: ");
    out.push_str(id);
    out.push_str("\ndata: ");
    out.push_str(message);
    out.push_str("\n\n");
    Bytes::from(out)
}
