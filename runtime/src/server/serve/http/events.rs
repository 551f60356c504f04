//! Where a 2025-11-25 session's SSE events are kept, so a client that lost a stream
//! reconnects with `Last-Event-ID` and gets what it missed: the [`EventStore`] trait and
//! its bounded in-memory default.
//!
//! An event id names its stream and its place in it (`<stream>.<seq>`); the store keeps
//! each session's events in order, drops the oldest past a count and an age, and knows
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
pub const DEFAULT_EVENTS_PER_SESSION: usize = 1_000;
/// How long the in-memory store keeps an event (default).
pub const DEFAULT_EVENT_AGE: Duration = Duration::from_secs(5 * 60);

/// The default [`EventStore`]: each session's events in memory, at most `max_events`
/// of them and none older than `max_age`.
#[derive(Debug)]
pub struct MemoryEventStore {
    max_events: usize,
    max_age: Duration,
    sessions: Mutex<HashMap<String, SessionLog>>,
}

#[derive(Debug, Default)]
struct SessionLog {
    next: u64,
    events: VecDeque<Kept>,
    ended: Vec<String>,
}

#[derive(Debug)]
struct Kept {
    seq: u64,
    stream: String,
    message: String,
    at: Instant,
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(DEFAULT_EVENTS_PER_SESSION, DEFAULT_EVENT_AGE)
    }
}

impl MemoryEventStore {
    /// A store keeping at most `max_events` per session, none older than `max_age`.
    pub fn new(max_events: usize, max_age: Duration) -> Self {
        Self {
            max_events: max_events.max(1),
            max_age,
            sessions: Mutex::default(),
        }
    }

    fn prune(&self, log: &mut SessionLog, now: Instant) {
        while log.events.len() > self.max_events
            || log
                .events
                .front()
                .is_some_and(|e| now.duration_since(e.at) > self.max_age)
        {
            log.events.pop_front();
        }
        // Ended streams are remembered only while some of their events are.
        log.ended
            .retain(|stream| log.events.iter().any(|e| &e.stream == stream));
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
        let mut sessions = lock(&self.sessions);
        let log = sessions.entry(session.to_owned()).or_default();
        log.next += 1;
        let seq = log.next;
        log.events.push_back(Kept {
            seq,
            stream: stream.to_owned(),
            message: message.to_owned(),
            at: now,
        });
        self.prune(log, now);
        format!("{stream}.{seq}")
    }

    fn position(&self, session: &str, stream: &str) -> String {
        let mut sessions = lock(&self.sessions);
        let next = sessions.entry(session.to_owned()).or_default().next;
        format!("{stream}.{next}")
    }

    fn end_stream(&self, session: &str, stream: &str) {
        if let Some(log) = lock(&self.sessions).get_mut(session) {
            if !log.ended.iter().any(|s| s == stream) {
                log.ended.push(stream.to_owned());
            }
        }
    }

    fn replay(&self, session: &str, after: &str) -> Option<Replay> {
        let (stream, seq) = parse_id(after)?;
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        let log = sessions.get_mut(session)?;
        self.prune(log, now);
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
        lock(&self.sessions).remove(session);
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
}
