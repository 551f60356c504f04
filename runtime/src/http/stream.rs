//! A 2025-11-25 session's SSE streams over HTTP: the standalone GET stream, where the
//! session's notifications outside any request go, and the streams of its POSTs. Every
//! event has an id and every stream opens with a priming event carrying `retry`, so a
//! client that loses a stream reconnects (GET, `Last-Event-ID`) and gets what it
//! missed from the [`EventStore`], then the rest live.
//!
//! A POST's stream is written into the store by a task of its own, so the handler goes
//! on when the client's connection drops (the era's rule: a disconnection is not a
//! cancellation); the session's end, or `notifications/cancelled`, stops it.
//!
//! Each GET is a stream of its own (`g<n>`), and a message outside any request goes to
//! one of them, the newest opened or resumed, never to all (the 2025-11-25 transport: a
//! message is sent on one stream, not broadcast). A session keeps at most
//! [`MAX_GET_STREAMS`] connected; a newer one ends the oldest, whose client has most
//! likely moved on.
//!
//! In a fleet, the store is shared: a stream's name carries the instance that opened
//! it, any instance replays any stream, and readers here are woken when another
//! instance keeps an event (see [`SessionStreams::wake`]).

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
use super::streams::{Slot, holding};
use crate::transport::http::fields::Fields;
use crate::util::lock;

/// How many GET streams one session keeps connected; opening another ends the oldest.
pub(crate) const MAX_GET_STREAMS: usize = 4;

/// `Last-Event-ID`.
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";
const LAST_EVENT: HeaderName = HeaderName::from_static(LAST_EVENT_ID);

/// One session's streams.
pub(crate) struct SessionStreams {
    /// The session's id, its key in the store.
    name: String,
    /// What this instance's stream names start with after their kind (`r`, `g`): empty
    /// for a store of this process's own, the instance's name in a fleet.
    prefix: String,
    store: Arc<dyn EventStore>,
    /// Woken on every event and every stream's end: readers look again.
    changed: Notify,
    next_stream: AtomicU64,
    retry: Duration,
    forwarder: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    gets: std::sync::Mutex<Gets>,
}

/// A session's GET streams connected here.
#[derive(Default)]
struct Gets {
    /// Connected now, oldest first.
    live: Vec<LiveGet>,
    /// Tells readers apart, including two of the same stream.
    next_reader: u64,
}

/// How many times keeping an event is tried before it is given up (the store failed).
const KEEP_TRIES: u32 = 4;

impl SessionStreams {
    /// `instance` names this instance for a store a fleet shares.
    pub(crate) fn new(
        name: String,
        store: Arc<dyn EventStore>,
        retry: Duration,
        instance: Option<&str>,
    ) -> Self {
        Self {
            name,
            prefix: instance.map(|i| format!("{i}-")).unwrap_or_default(),
            store,
            changed: Notify::new(),
            next_stream: AtomicU64::new(1),
            retry,
            forwarder: std::sync::Mutex::new(None),
            gets: std::sync::Mutex::default(),
        }
    }

    /// Keeps the task carrying the server's events to the GET stream, to stop it when
    /// the session ends.
    pub(crate) fn set_forwarder(&self, task: tokio::task::JoinHandle<()>) {
        *lock(&self.forwarder) = Some(task);
    }

    /// The session's message outside any request (the event named `key`), on its GET
    /// stream.
    pub(crate) async fn notify(&self, key: &str, message: &str) {
        self.keep(|| self.store.notify(&self.name, key, message))
            .await;
        self.changed.notify_waiters();
    }

    /// Readers here look again: another instance kept an event of this session's.
    pub(crate) fn wake(&self) {
        self.changed.notify_waiters();
    }

    /// Does what `op` asks of the store, trying again a few times if it fails; what
    /// it answered, or `None` (logged) once it gave up.
    async fn keep<'a, T>(
        &self,
        op: impl Fn() -> crate::transport::BoxFuture<'a, Result<T, crate::StoreError>>,
    ) -> Option<T> {
        let mut pause = Duration::from_millis(50);
        for _ in 1..KEEP_TRIES {
            match op().await {
                Ok(answer) => return Some(answer),
                Err(e) => tracing::warn!(error = %e, "the event store failed: trying again"),
            }
            tokio::time::sleep(pause).await;
            pause *= 4;
        }
        op().await
            .inspect_err(
                |e| tracing::error!(error = %e, "the event store failed: an event is lost"),
            )
            .ok()
    }

    /// Ends the streams: the forwarder stops, readers finish, and, when `forget`, the
    /// store forgets the session (it ended everywhere, not only here).
    pub(crate) fn end(&self, forget: bool) {
        if let Some(task) = lock(&self.forwarder).take() {
            task.abort();
        }
        if forget {
            let (store, name) = (Arc::clone(&self.store), self.name.clone());
            tokio::spawn(async move {
                if let Err(e) = store.end_session(&name).await {
                    tracing::warn!(error = %e, "could not forget an ended session's events");
                }
            });
        }
        self.changed.notify_waiters();
    }

    /// A new stream's name: its kind (`r`, `g`), this instance, a number.
    fn new_stream(&self, kind: char) -> String {
        let n = self.next_stream.fetch_add(1, Ordering::Relaxed);
        format!("{kind}{}{n}", self.prefix)
    }

    /// Opens a POST's stream: its name and the priming position.
    pub(crate) async fn open_request_stream(&self) -> Result<(String, String), crate::StoreError> {
        let stream = self.new_stream('r');
        let position = self.store.position(&self.name, &stream).await?;
        Ok((stream, position))
    }

    /// Keeps one message of a POST's stream.
    pub(crate) async fn append(&self, stream: &str, message: &str) {
        self.keep(|| self.store.append(&self.name, stream, message))
            .await;
        self.changed.notify_waiters();
    }

    /// Ends a POST's stream after its response.
    pub(crate) async fn end_stream(&self, stream: &str) {
        self.keep(|| self.store.end_stream(&self.name, stream))
            .await;
        self.changed.notify_waiters();
    }

    /// A GET stream: the one the client's `Last-Event-ID` names (any of the session's
    /// streams), from where it left off, or a new one from now. A GET stream ends when
    /// `closing` is cancelled (the endpoint drains: the client resumes elsewhere) or
    /// when a newer one pushes it out.
    /// `slot` is the caller's place for the stream: given back when the stream ends or
    /// a newer one pushes it out.
    pub(crate) async fn resume(
        self: &Arc<Self>,
        headers: &impl Fields,
        closing: &CancellationToken,
        slot: Slot,
    ) -> Result<Response, crate::StoreError> {
        let resumed = match headers.text(&LAST_EVENT) {
            Some(id) => (self.store.replay(&self.name, id).await?).map(|r| (id, r.stream)),
            None => None,
        };
        let (from, stream) = match resumed {
            // A request's stream replayed ends with its response; only GET streams are
            // where the session's other messages may go.
            Some((id, stream)) if !stream.starts_with('g') => {
                let response = self.respond_until(id.to_owned(), Some(closing.clone()), None);
                return Ok(holding(response, slot));
            }
            Some((id, stream)) => {
                self.store.open_get(&self.name, &stream).await?;
                (id.to_owned(), stream)
            }
            None => {
                let stream = self.new_stream('g');
                (self.store.open_get(&self.name, &stream).await?, stream)
            }
        };
        let connected = self.connect_get(stream, closing, slot);
        let ends = connected.ends.clone();
        Ok(self.respond_until(from, Some(ends), Some(connected)))
    }

    /// Counts `stream` among the connected GET streams, ending the oldest past the cap.
    fn connect_get(
        self: &Arc<Self>,
        stream: String,
        closing: &CancellationToken,
        slot: Slot,
    ) -> Connected {
        let ends = closing.child_token();
        let mut gets = lock(&self.gets);
        // A stream resumed while an older reader of it is still connected replaces it.
        for older in gets.live.iter().filter(|live| live.stream == stream) {
            older.ends.cancel();
        }
        gets.live.retain(|live| live.stream != stream);
        gets.next_reader += 1;
        let reader = gets.next_reader;
        gets.live.push(LiveGet {
            stream: stream.clone(),
            reader,
            ends: ends.clone(),
            _slot: slot,
        });
        while gets.live.len() > MAX_GET_STREAMS {
            tracing::debug!("a session's GET streams are at their cap: ending the oldest");
            gets.live.remove(0).ends.cancel();
        }
        Connected {
            streams: Arc::clone(self),
            reader,
            ends,
        }
    }

    /// An SSE response reading the store from `from` on its stream: a priming event
    /// (the position, `retry`), then every event after it, live, until the stream ends.
    pub(crate) fn respond(self: &Arc<Self>, from: String) -> Response {
        self.respond_until(from, None, None)
    }

    /// [`respond`](Self::respond), ending early when `closing` is cancelled.
    fn respond_until(
        self: &Arc<Self>,
        from: String,
        closing: Option<CancellationToken>,
        connected: Option<Connected>,
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
            _connected: connected,
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
    /// A GET stream's place among the connected ones, given up when the reader goes.
    _connected: Option<Connected>,
}

/// One connected GET stream.
struct LiveGet {
    stream: String,
    reader: u64,
    ends: CancellationToken,
    /// The caller's place, given back as soon as the stream is pushed out or ends.
    _slot: Slot,
}

/// A connected GET stream's place; given up with its reader (the client went away).
struct Connected {
    streams: Arc<SessionStreams>,
    reader: u64,
    ends: CancellationToken,
}

impl Drop for Connected {
    fn drop(&mut self) {
        lock(&self.streams.gets)
            .live
            .retain(|live| live.reader != self.reader);
    }
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
            let replay = match streams.store.replay(&streams.name, &self.cursor).await {
                Ok(replay) => replay?,
                Err(e) => {
                    // The client resumes from where it is, here or elsewhere.
                    tracing::warn!(error = %e, "the event store failed: a stream ends");
                    return None;
                }
            };
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
