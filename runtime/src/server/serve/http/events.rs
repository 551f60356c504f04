//! Where a 2025-11-25 session's SSE events are kept, so a client that lost a stream
//! reconnects with `Last-Event-ID` and gets what it missed: the [`EventStore`] trait and
//! its bounded in-memory default.
//!
//! An event id names its stream and its place in it (`<stream>.<seq>`); the store keeps
//! each session's events in order, drops the oldest past a count, a size and an age
//! (per session, and a size for the whole store), and knows
//! which streams have ended (a request's stream ends with its response; the session's
//! GET stream never does).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::util::lock;

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

/// Keeps a session's SSE events for replay. Implementations bound what they keep;
/// a forgotten event is replayed as nothing, and the client starts over.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps `message`, sent on `stream` of `session`, and returns its event id.
    fn append(&self, session: &str, stream: &str, message: &str) -> String;
    /// The id of the last event of `session` so far, as a place on `stream`: what a
    /// stream's priming event carries, so a client that reconnects with it gets every
    /// event `stream` has after it.
    fn position(&self, session: &str, stream: &str) -> String;
    /// Marks `stream` of `session` ended: a reader replaying it stops after its events.
    fn end_stream(&self, session: &str, stream: &str);
    /// The events of `session` kept after the event `after`, on that event's stream;
    /// `None` when `after` is not an id of this session's or is forgotten.
    fn replay(&self, session: &str, after: &str) -> Option<Replay>;
    /// Forgets everything of `session` (it ended).
    fn end_session(&self, session: &str);
}

/// How many events the in-memory store keeps per session (default).
pub(crate) const DEFAULT_EVENTS_PER_SESSION: usize = 1_000;
/// How long the in-memory store keeps an event (default).
pub(crate) const DEFAULT_EVENT_AGE: Duration = Duration::from_secs(5 * 60);
/// How many bytes of events the in-memory store keeps per session (default): a few
/// large results, or a thousand ordinary notifications.
pub(crate) const DEFAULT_EVENT_BYTES_PER_SESSION: usize = 4 * 1024 * 1024;
/// How many bytes of events the in-memory store keeps in all (default).
pub(crate) const DEFAULT_EVENT_BYTES: usize = 256 * 1024 * 1024;

/// What keeping one event costs besides its message and stream name: its place in the
/// queue and its bookkeeping, so that empty messages are not free.
const EVENT_OVERHEAD: usize = 64;

/// The default [`EventStore`]: each session's events in memory, at most `max_events`
/// of them and none older than `max_age`, within a byte budget per session and one for
/// the whole store ([`max_bytes`](Self::max_bytes)).
#[derive(Debug)]
pub struct MemoryEventStore {
    max_events: usize,
    max_age: Duration,
    max_session_bytes: usize,
    max_total_bytes: usize,
    logs: Mutex<Logs>,
}

#[derive(Debug, Default)]
struct Logs {
    sessions: HashMap<String, SessionLog>,
    /// The bytes kept across every session.
    total: usize,
}

#[derive(Debug, Default)]
struct SessionLog {
    next: u64,
    events: VecDeque<Kept>,
    /// The bytes its kept events cost.
    bytes: usize,
    ended: Vec<String>,
}

#[derive(Debug)]
struct Kept {
    seq: u64,
    stream: String,
    message: String,
    at: Instant,
}

impl Kept {
    fn cost(&self) -> usize {
        self.message.len() + self.stream.len() + EVENT_OVERHEAD
    }
}

impl SessionLog {
    /// Forgets the oldest event; what it cost.
    fn pop(&mut self) -> usize {
        let cost = self.events.pop_front().map_or(0, |e| e.cost());
        self.bytes -= cost;
        cost
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(DEFAULT_EVENTS_PER_SESSION, DEFAULT_EVENT_AGE)
    }
}

impl MemoryEventStore {
    /// A store keeping at most `max_events` per session, none older than `max_age`, in
    /// 4 MiB per session and 256 MiB in all (see [`max_bytes`](Self::max_bytes)).
    pub fn new(max_events: usize, max_age: Duration) -> Self {
        Self {
            max_events: max_events.max(1),
            max_age,
            max_session_bytes: DEFAULT_EVENT_BYTES_PER_SESSION,
            max_total_bytes: DEFAULT_EVENT_BYTES,
            logs: Mutex::default(),
        }
    }

    /// Keeps at most `per_session` bytes of events for one session and `total` for all:
    /// past either, a session's oldest events go first. A session that would push the
    /// store over `total` gives up its own events, never another session's.
    pub fn max_bytes(mut self, per_session: usize, total: usize) -> Self {
        self.max_session_bytes = per_session;
        self.max_total_bytes = total;
        self
    }

    /// Drops `log`'s events past the count, the age and the session's byte budget;
    /// returns the bytes freed.
    fn prune(&self, log: &mut SessionLog, now: Instant) -> usize {
        let mut freed = 0;
        while log.events.len() > self.max_events
            || log.bytes > self.max_session_bytes
            || log
                .events
                .front()
                .is_some_and(|e| now.duration_since(e.at) > self.max_age)
        {
            freed += log.pop();
        }
        // Ended streams are remembered only while some of their events are.
        log.ended
            .retain(|stream| log.events.iter().any(|e| &e.stream == stream));
        freed
    }
}

/// An event id's stream and place: `<stream>.<seq>`.
fn parse_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once('.')?;
    Some((stream, seq.parse().ok()?))
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: &str, message: &str) -> String {
        let now = Instant::now();
        let mut logs = lock(&self.logs);
        let Logs { sessions, total } = &mut *logs;
        let log = sessions.entry(session.to_owned()).or_default();
        log.next += 1;
        let seq = log.next;
        let kept = Kept {
            seq,
            stream: stream.to_owned(),
            message: message.to_owned(),
            at: now,
        };
        log.bytes += kept.cost();
        *total += kept.cost();
        log.events.push_back(kept);
        *total -= self.prune(log, now);
        while *total > self.max_total_bytes && !log.events.is_empty() {
            *total -= log.pop();
        }
        format!("{stream}.{seq}")
    }

    fn position(&self, session: &str, stream: &str) -> String {
        let mut logs = lock(&self.logs);
        let next = logs.sessions.entry(session.to_owned()).or_default().next;
        format!("{stream}.{next}")
    }

    fn end_stream(&self, session: &str, stream: &str) {
        if let Some(log) = lock(&self.logs).sessions.get_mut(session) {
            if !log.ended.iter().any(|s| s == stream) {
                log.ended.push(stream.to_owned());
            }
        }
    }

    fn replay(&self, session: &str, after: &str) -> Option<Replay> {
        let (stream, seq) = parse_id(after)?;
        let now = Instant::now();
        let mut logs = lock(&self.logs);
        let Logs { sessions, total } = &mut *logs;
        let log = sessions.get_mut(session)?;
        *total -= self.prune(log, now);
        // The id must be one this session handed out and still remembers (or the
        // stream's priming event, which is not kept): else the client starts over.
        let oldest = log.events.front().map_or(log.next + 1, |e| e.seq);
        if seq > log.next || seq + 1 < oldest {
            return None;
        }
        let events = log
            .events
            .iter()
            .filter(|e| e.seq > seq && e.stream == stream)
            .map(|e| (format!("{}.{}", e.stream, e.seq), e.message.clone()))
            .collect();
        Some(Replay {
            stream: stream.to_owned(),
            events,
            ended: log.ended.iter().any(|s| s == stream),
        })
    }

    fn end_session(&self, session: &str) {
        let mut logs = lock(&self.logs);
        if let Some(log) = logs.sessions.remove(session) {
            logs.total -= log.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_is_the_events_after_the_id_on_its_stream() {
        let store = MemoryEventStore::default();
        let a1 = store.append("s", "get", "a1");
        store.append("s", "r1", "b1");
        store.append("s", "get", "a2");
        store.append("s", "get", "a3");
        let replay = store.replay("s", &a1).unwrap();
        assert_eq!(replay.stream, "get");
        let messages: Vec<&str> = replay.events.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(messages, ["a2", "a3"]);
        assert!(!replay.ended);
    }

    #[test]
    fn an_ended_stream_says_so_and_other_sessions_see_nothing() {
        let store = MemoryEventStore::default();
        let first = store.append("s", "r1", "progress");
        store.append("s", "r1", "response");
        store.end_stream("s", "r1");
        let replay = store.replay("s", &first).unwrap();
        assert!(replay.ended);
        assert_eq!(replay.events.len(), 1);
        assert_eq!(store.replay("other", &first), None);
        store.end_session("s");
        assert_eq!(store.replay("s", &first), None);
    }

    #[test]
    fn a_priming_position_replays_everything_after_it() {
        let store = MemoryEventStore::default();
        store.append("s", "get", "before");
        let primed = store.position("s", "get");
        store.append("s", "get", "after");
        let replay = store.replay("s", &primed).unwrap();
        assert_eq!(replay.events.len(), 1);
        assert_eq!(replay.events[0].1, "after");
        let fresh = store.position("new", "get");
        assert_eq!(store.replay("new", &fresh).unwrap().events, vec![]);
    }

    #[test]
    fn forgotten_and_unknown_ids_replay_nothing() {
        let store = MemoryEventStore::new(2, DEFAULT_EVENT_AGE);
        let first = store.append("s", "get", "1");
        store.append("s", "get", "2");
        store.append("s", "get", "3");
        store.append("s", "get", "4");
        assert_eq!(store.replay("s", &first), None, "pushed out by the count");
        assert_eq!(store.replay("s", "get.99"), None, "never handed out");
        assert_eq!(store.replay("s", "nonsense"), None);
        let aged = MemoryEventStore::new(10, Duration::ZERO);
        let id = aged.append("s", "get", "1");
        aged.append("s", "get", "2");
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(aged.replay("s", &id), None, "pushed out by the age");
    }

    fn kept_bytes(store: &MemoryEventStore) -> usize {
        lock(&store.logs).total
    }

    #[test]
    fn a_session_keeps_its_newest_events_within_its_byte_budget() {
        let store = MemoryEventStore::default().max_bytes(10_000, 1_000_000);
        let big = "x".repeat(3_000);
        let ids: Vec<String> = (0..10).map(|_| store.append("s", "r1", &big)).collect();
        // Three 3 KB events fit in 10 KB; the fourth newest was pushed out.
        assert!(kept_bytes(&store) <= 10_000, "{}", kept_bytes(&store));
        let replay = store.replay("s", &ids[6]).unwrap();
        assert_eq!(replay.events.len(), 3);
        assert_eq!(store.replay("s", &ids[5]), None, "pushed out by the size");
        store.end_session("s");
        assert_eq!(kept_bytes(&store), 0);
    }

    #[test]
    fn a_session_over_the_stores_budget_gives_up_its_own_events_not_others() {
        let store = MemoryEventStore::default().max_bytes(1_000_000, 20_000);
        let quiet = store.append("quiet", "get", "hello");
        let big = "x".repeat(4_000);
        for _ in 0..100 {
            store.append("flood", "get", &big);
        }
        assert!(kept_bytes(&store) <= 20_000, "{}", kept_bytes(&store));
        let before = store.position("quiet", "get");
        store.append("quiet", "get", "still here");
        assert_eq!(store.replay("quiet", &before).unwrap().events.len(), 1);
        assert!(store.replay("quiet", &quiet).is_some());
    }
}
