//! The default [`EventStore`]: each session's events in this process's memory.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{
    DEFAULT_EVENT_AGE, DEFAULT_EVENT_BYTES_PER_SESSION, DEFAULT_EVENTS_PER_SESSION, EVENT_OVERHEAD,
    EventStore, FIRST_GET_STREAM, Replay, parse_id,
};
use crate::StoreError;
use crate::transport::BoxFuture;
use crate::util::lock;

/// How many bytes of events the in-memory store keeps in all (default).
const DEFAULT_EVENT_BYTES: usize = 256 * 1024 * 1024;

/// How many keys of the events told a session outside any request are remembered, to
/// keep each once.
const KEYS_REMEMBERED: usize = 64;

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
    /// The GET stream, where messages outside any request go.
    get: Option<String>,
    /// The keys of the newest of those messages.
    told: VecDeque<String>,
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

impl MemoryEventStore {
    fn keep(&self, session: &str, stream: &str, message: &str) -> String {
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

    /// Keeps `message` on the session's GET stream, once per `key`.
    fn tell(&self, session: &str, key: &str, message: &str) {
        let stream = {
            let mut logs = lock(&self.logs);
            let log = logs.sessions.entry(session.to_owned()).or_default();
            if log.told.iter().any(|k| k == key) {
                return;
            }
            if log.told.len() == KEYS_REMEMBERED {
                log.told.pop_front();
            }
            log.told.push_back(key.to_owned());
            log.get
                .clone()
                .unwrap_or_else(|| FIRST_GET_STREAM.to_owned())
        };
        self.keep(session, &stream, message);
    }

    fn open(&self, session: &str, stream: &str) -> String {
        let mut logs = lock(&self.logs);
        let log = logs.sessions.entry(session.to_owned()).or_default();
        log.get = Some(stream.to_owned());
        format!("{stream}.{}", log.next)
    }

    fn place(&self, session: &str, stream: &str) -> String {
        let mut logs = lock(&self.logs);
        let next = logs.sessions.entry(session.to_owned()).or_default().next;
        format!("{stream}.{next}")
    }

    fn end(&self, session: &str, stream: &str) {
        if let Some(log) = lock(&self.logs).sessions.get_mut(session) {
            if !log.ended.iter().any(|s| s == stream) {
                log.ended.push(stream.to_owned());
            }
        }
    }

    fn missed(&self, session: &str, after: &str) -> Option<Replay> {
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

    fn forget(&self, session: &str) {
        let mut logs = lock(&self.logs);
        if let Some(log) = logs.sessions.remove(session) {
            logs.total -= log.bytes;
        }
    }
}

impl EventStore for MemoryEventStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        Box::pin(std::future::ready(Ok(self.keep(session, stream, message))))
    }

    fn notify<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.tell(session, key, message);
        Box::pin(std::future::ready(Ok(())))
    }

    fn open_get<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        Box::pin(std::future::ready(Ok(self.open(session, stream))))
    }

    fn position<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        Box::pin(std::future::ready(Ok(self.place(session, stream))))
    }

    fn end_stream<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.end(session, stream);
        Box::pin(std::future::ready(Ok(())))
    }

    fn replay<'a>(
        &'a self,
        session: &'a str,
        after: &'a str,
    ) -> BoxFuture<'a, Result<Option<Replay>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.missed(session, after))))
    }

    fn end_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.forget(session);
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_is_the_events_after_the_id_on_its_stream() {
        let store = MemoryEventStore::default();
        let a1 = store.keep("s", "get", "a1");
        store.keep("s", "r1", "b1");
        store.keep("s", "get", "a2");
        store.keep("s", "get", "a3");
        let replay = store.missed("s", &a1).unwrap();
        assert_eq!(replay.stream, "get");
        let messages: Vec<&str> = replay.events.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(messages, ["a2", "a3"]);
        assert!(!replay.ended);
    }

    #[test]
    fn an_ended_stream_says_so_and_other_sessions_see_nothing() {
        let store = MemoryEventStore::default();
        let first = store.keep("s", "r1", "progress");
        store.keep("s", "r1", "response");
        store.end("s", "r1");
        let replay = store.missed("s", &first).unwrap();
        assert!(replay.ended);
        assert_eq!(replay.events.len(), 1);
        assert_eq!(store.missed("other", &first), None);
        store.forget("s");
        assert_eq!(store.missed("s", &first), None);
    }

    #[test]
    fn a_priming_position_replays_everything_after_it() {
        let store = MemoryEventStore::default();
        store.keep("s", "get", "before");
        let primed = store.place("s", "get");
        store.keep("s", "get", "after");
        let replay = store.missed("s", &primed).unwrap();
        assert_eq!(replay.events.len(), 1);
        assert_eq!(replay.events[0].1, "after");
        let fresh = store.place("new", "get");
        assert_eq!(store.missed("new", &fresh).unwrap().events, vec![]);
    }

    #[test]
    fn forgotten_and_unknown_ids_replay_nothing() {
        let store = MemoryEventStore::new(2, DEFAULT_EVENT_AGE);
        let first = store.keep("s", "get", "1");
        store.keep("s", "get", "2");
        store.keep("s", "get", "3");
        store.keep("s", "get", "4");
        assert_eq!(store.missed("s", &first), None, "pushed out by the count");
        assert_eq!(store.missed("s", "get.99"), None, "never handed out");
        assert_eq!(store.missed("s", "nonsense"), None);
        let aged = MemoryEventStore::new(10, Duration::ZERO);
        let id = aged.keep("s", "get", "1");
        aged.keep("s", "get", "2");
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(aged.missed("s", &id), None, "pushed out by the age");
    }

    #[test]
    fn a_message_outside_any_request_goes_to_the_get_stream_once() {
        let store = MemoryEventStore::default();
        let primed = store.open("s", "g1");
        store.tell("s", "a.1", "changed");
        store.tell("s", "a.1", "changed");
        store.tell("s", "b.1", "updated");
        let replay = store.missed("s", &primed).unwrap();
        let messages: Vec<&str> = replay.events.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(messages, ["changed", "updated"]);
        let next = store.open("s", "g2");
        store.tell("s", "a.2", "later");
        assert!(
            store.missed("s", &primed).unwrap().events.len() == 2,
            "g1 hears no more"
        );
        assert_eq!(store.missed("s", &next).unwrap().events.len(), 1);
    }

    fn kept_bytes(store: &MemoryEventStore) -> usize {
        lock(&store.logs).total
    }

    #[test]
    fn a_session_keeps_its_newest_events_within_its_byte_budget() {
        let store = MemoryEventStore::default().max_bytes(10_000, 1_000_000);
        let big = "x".repeat(3_000);
        let ids: Vec<String> = (0..10).map(|_| store.keep("s", "r1", &big)).collect();
        // Three 3 KB events fit in 10 KB; the fourth newest was pushed out.
        assert!(kept_bytes(&store) <= 10_000, "{}", kept_bytes(&store));
        let replay = store.missed("s", &ids[6]).unwrap();
        assert_eq!(replay.events.len(), 3);
        assert_eq!(store.missed("s", &ids[5]), None, "pushed out by the size");
        store.forget("s");
        assert_eq!(kept_bytes(&store), 0);
    }

    #[test]
    fn a_session_over_the_stores_budget_gives_up_its_own_events_not_others() {
        let store = MemoryEventStore::default().max_bytes(1_000_000, 20_000);
        let quiet = store.keep("quiet", "get", "hello");
        let big = "x".repeat(4_000);
        for _ in 0..100 {
            store.keep("flood", "get", &big);
        }
        assert!(kept_bytes(&store) <= 20_000, "{}", kept_bytes(&store));
        let before = store.place("quiet", "get");
        store.keep("quiet", "get", "still here");
        assert_eq!(store.missed("quiet", &before).unwrap().events.len(), 1);
        assert!(store.missed("quiet", &quiet).is_some());
    }
}
