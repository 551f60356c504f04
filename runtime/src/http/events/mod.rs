//! Where a 2025-11-25 session's SSE events are kept, so a client that lost a stream
//! reconnects with `Last-Event-ID` and gets what it missed: the [`EventStore`] trait,
//! its bounded in-memory default and, with the `redis` feature, [`RedisEventStore`](crate::fleet::RedisEventStore),
//! which every instance of a fleet shares.
//!
//! An event id names its stream and its place in the session (`<stream>.<seq>`); a
//! store keeps each session's events in order, drops the oldest past a count, a size
//! and an age, and knows which streams have ended (a request's stream ends with its
//! response; a GET stream never does). The messages a session is sent outside any
//! request go to its GET stream: the one opened (or resumed) last, wherever it was.

mod memory;

pub use memory::MemoryEventStore;

use std::time::Duration;

use super::session_store::Published;
use crate::StoreError;
use crate::transport::BoxFuture;

/// What a reconnecting client missed on one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The stream the `Last-Event-ID` was sent on.
    pub stream: String,
    /// The events after it, oldest first: `(id, message)`.
    pub events: Vec<(String, String)>,
    /// Whether the stream has ended (its last event is among those kept).
    pub ended: bool,
}

/// Keeps sessions' SSE events for replay. Implementations bound what they keep; a
/// forgotten event is replayed as nothing, and the client starts over.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps `message`, sent on `stream` of `session`, and returns its event id.
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>>;
    /// Keeps `message`, sent outside any request, on the session's GET stream (the one
    /// [`open_get`](Self::open_get) named last), unless an event named `key` was kept
    /// for `session` already: every instance serving the session is told the same
    /// event, and the client hears it once.
    fn notify<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Makes `stream` the session's GET stream from now on; returns its position now
    /// (see [`position`](Self::position)).
    fn open_get<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>>;
    /// The id of the last event of `session` so far, as a place on `stream`: what a
    /// stream's priming event carries, so a client that reconnects with it gets every
    /// event `stream` has after it.
    fn position<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>>;
    /// Marks `stream` of `session` ended: a reader replaying it stops after its events.
    fn end_stream<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The events of `session` kept after the event `after`, on that event's stream;
    /// `None` when `after` is not an id of this session's or is forgotten.
    fn replay<'a>(
        &'a self,
        session: &'a str,
        after: &'a str,
    ) -> BoxFuture<'a, Result<Option<Replay>, StoreError>>;
    /// Forgets everything of `session` (it ended).
    fn end_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// For a store other processes write too: the names of the sessions they keep
    /// events for, as they keep them (readers here look again), until the store's link
    /// drops. `None`, the default, for a store only this process writes.
    fn listen(&self) -> BoxFuture<'_, Result<Option<Published>, StoreError>> {
        Box::pin(async { Ok(None) })
    }
}

/// How many events a store keeps per session (default).
pub(crate) const DEFAULT_EVENTS_PER_SESSION: usize = 1_000;
/// How long a store keeps an event (default).
pub(crate) const DEFAULT_EVENT_AGE: Duration = Duration::from_secs(5 * 60);
/// How many bytes of events a store keeps per session (default): a few large results,
/// or a thousand ordinary notifications.
pub(crate) const DEFAULT_EVENT_BYTES_PER_SESSION: usize = 4 * 1024 * 1024;

/// What keeping one event costs besides its message and stream name: its place in the
/// queue and its bookkeeping, so that empty messages are not free.
pub(crate) const EVENT_OVERHEAD: usize = 64;

/// The stream a session's messages outside any request go to before it opened one.
pub(crate) const FIRST_GET_STREAM: &str = "g0";

/// An event id's stream and place: `<stream>.<seq>`.
pub(crate) fn parse_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once('.')?;
    Some((stream, seq.parse().ok()?))
}
