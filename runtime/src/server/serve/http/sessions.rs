//! 2025-11-25 sessions over HTTP: `initialize` opens one and names it in the
//! `Mcp-Session-Id` response header; the client's later POSTs (requests, notifications,
//! and its answers to the server's requests) carry the name; DELETE ends it.
//!
//! Sessions live in this process's memory, so a deployment with several instances
//! routes a session's requests to the instance that opened it (sticky on the header).
//! Idle sessions expire, and their number is capped, so clients that never DELETE
//! cannot exhaust the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::HeaderName;
use tokio::sync::broadcast;

use super::events::EventStore;
use super::stream::SessionStreams;
use crate::auth::AuthInfo;
use crate::seal::Principal;
use crate::server::{ServerEvent, Session};
use crate::transport::http::fields::Fields;
use crate::util::{InFlight, lock};

/// `Mcp-Session-Id`.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
/// [`SESSION_HEADER`], as a name to look up.
pub(crate) const SESSION: HeaderName = HeaderName::from_static(SESSION_HEADER);

/// One open session.
pub(crate) struct HttpSession {
    pub(crate) session: Session,
    /// The caller that opened it (the identity of its token, if any): later requests
    /// must present the same one, so a leaked session id is useless to another caller.
    owner: Option<Principal>,
    last_seen: Mutex<Instant>,
    /// The session's requests being served, for `notifications/cancelled`.
    pub(crate) in_flight: InFlight,
    /// Its SSE streams: the GET stream and its POSTs', kept for `Last-Event-ID`.
    pub(crate) streams: Arc<SessionStreams>,
}

impl HttpSession {
    fn end(&self) {
        self.session.close();
        self.in_flight.cancel_all();
        self.streams.end();
    }
}

/// Why a request did not find its session.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// No `Mcp-Session-Id` header (400).
    Missing,
    /// No live session by that name for this caller (404: the client starts anew).
    Unknown,
}

/// The live sessions of one endpoint.
pub(crate) struct Sessions {
    live: Mutex<HashMap<String, Arc<HttpSession>>>,
    idle_timeout: Duration,
    max: usize,
    per_principal: usize,
    store: Arc<dyn EventStore>,
    retry: Duration,
}

/// The limits of an endpoint's sessions, and where their events are kept.
#[derive(Clone)]
pub(crate) struct Limits {
    pub(crate) idle_timeout: Duration,
    pub(crate) max: usize,
    pub(crate) per_principal: usize,
    pub(crate) store: Arc<dyn EventStore>,
    pub(crate) retry: Duration,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("idle_timeout", &self.idle_timeout)
            .field("max", &self.max)
            .field("per_principal", &self.per_principal)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            live: Mutex::default(),
            idle_timeout: limits.idle_timeout,
            max: limits.max.max(1),
            per_principal: limits.per_principal.max(1),
            store: limits.store,
            retry: limits.retry,
        }
    }

    /// Registers a new session and returns its id. At the cap, expired sessions go first,
    /// then the least recently used one serving nothing; an authenticated caller at its
    /// own cap gives up its own least recently used one instead, so one caller cannot
    /// push out the others. `None` when every session is busy.
    /// The session hears the server's `events` on its GET stream from now on.
    pub(crate) fn open(
        &self,
        session: Session,
        auth: Option<&AuthInfo>,
        events: broadcast::Receiver<ServerEvent>,
    ) -> Option<String> {
        let now = Instant::now();
        let owner = auth.map(Principal::from_auth);
        let mut live = lock(&self.live);
        if live.len() >= self.max {
            self.sweep(&mut live, now);
        }
        if let Some(owner) = &owner {
            let theirs = live
                .values()
                .filter(|s| s.owner.as_ref() == Some(owner))
                .count();
            if theirs >= self.per_principal
                && !evict_lru(&mut live, |s| s.owner.as_ref() == Some(owner))
            {
                return None;
            }
        }
        if live.len() >= self.max && !evict_lru(&mut live, |_| true) {
            return None;
        }
        let id = new_session_id();
        let streams = Arc::new(SessionStreams::new(
            id.clone(),
            Arc::clone(&self.store),
            self.retry,
        ));
        let sink = Arc::clone(&streams);
        streams.set_forwarder(tokio::spawn(session.clone().forward_events(
            events,
            move |message| {
                sink.notify(&message);
                true
            },
        )));
        let session = Arc::new(HttpSession {
            session,
            owner,
            last_seen: Mutex::new(now),
            in_flight: InFlight::default(),
            streams,
        });
        live.insert(id.clone(), session);
        Some(id)
    }

    /// The session a request names, if it is live and belongs to the caller; using it
    /// keeps it alive.
    pub(crate) fn find(
        &self,
        headers: &impl Fields,
        auth: Option<&AuthInfo>,
    ) -> Result<Arc<HttpSession>, Lookup> {
        let name = session_name(headers).ok_or(Lookup::Missing)?;
        let now = Instant::now();
        let mut live = lock(&self.live);
        let session = live.get(name).cloned().ok_or(Lookup::Unknown)?;
        if session.owner != auth.map(Principal::from_auth) {
            tracing::warn!("a request named a session another caller opened");
            return Err(Lookup::Unknown);
        }
        if self.expired(&session, now) {
            live.remove(name);
            session.end();
            return Err(Lookup::Unknown);
        }
        *lock(&session.last_seen) = now;
        Ok(session)
    }

    /// Ends the session a DELETE names.
    pub(crate) fn end(&self, headers: &impl Fields, auth: Option<&AuthInfo>) -> Result<(), Lookup> {
        let session = self.find(headers, auth)?;
        if let Some(name) = session_name(headers) {
            lock(&self.live).remove(name);
        }
        session.end();
        tracing::debug!("a 2025-11-25 session ended at the client's request");
        Ok(())
    }

    /// How many sessions are live (expired ones included until they are swept).
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.live).len()
    }

    fn sweep(&self, live: &mut HashMap<String, Arc<HttpSession>>, now: Instant) {
        live.retain(|_, session| {
            let expired = self.expired(session, now);
            if expired {
                session.end();
            }
            !expired
        });
    }

    /// Idle past the timeout. A session serving a request is never idle: the handler
    /// may be waiting for the client's answer to its own request, which names the
    /// session when it comes.
    fn expired(&self, session: &HttpSession, now: Instant) -> bool {
        session.in_flight.is_empty()
            && now.duration_since(*lock(&session.last_seen)) > self.idle_timeout
    }
}

/// Ends the least recently used session that `which` picks and that serves nothing;
/// whether there was one.
fn evict_lru(
    live: &mut HashMap<String, Arc<HttpSession>>,
    which: impl Fn(&HttpSession) -> bool,
) -> bool {
    let victim = live
        .iter()
        .filter(|(_, s)| s.in_flight.is_empty() && which(s))
        .min_by_key(|(_, s)| *lock(&s.last_seen))
        .map(|(name, _)| name.clone());
    let Some(session) = victim.and_then(|name| live.remove(&name)) else {
        return false;
    };
    tracing::debug!("at the session cap: ended the least recently used session");
    session.end();
    true
}

fn session_name(headers: &impl Fields) -> Option<&str> {
    headers.text(&SESSION)
}

/// 128 random bits, hex: visible ASCII as the header requires, and unguessable.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    rand::fill(&mut bytes[..]);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::v2026_07_28::RequestId;
    use http::{HeaderMap, HeaderValue};
    use tokio_util::sync::CancellationToken;

    fn session() -> Session {
        let params = serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}
        });
        let server = crate::server::Server::builder("s", "1").build().unwrap();
        server.open_session(Some(&params)).unwrap().0
    }

    fn naming(id: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(SESSION_HEADER, HeaderValue::from_str(id).unwrap());
        headers
    }

    fn alice() -> AuthInfo {
        AuthInfo {
            client_id: "app".into(),
            subject: Some("alice".into()),
            ..AuthInfo::default()
        }
    }

    #[tokio::test]
    async fn a_session_is_found_by_its_header_and_ended_once() {
        let sessions = Sessions::new(limits(Duration::from_secs(60), 10));
        let id = sessions.open(session(), None, quiet()).unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(sessions.find(&naming(&id), None).is_ok());
        assert_eq!(
            sessions.find(&HeaderMap::new(), None).err(),
            Some(Lookup::Missing)
        );
        assert_eq!(
            sessions.find(&naming("nope"), None).err(),
            Some(Lookup::Unknown)
        );
        assert_eq!(sessions.end(&naming(&id), None), Ok(()));
        assert_eq!(sessions.end(&naming(&id), None), Err(Lookup::Unknown));
    }

    #[tokio::test]
    async fn a_session_belongs_to_the_caller_that_opened_it() {
        let sessions = Sessions::new(limits(Duration::from_secs(60), 10));
        let id = sessions.open(session(), Some(&alice()), quiet()).unwrap();
        assert!(sessions.find(&naming(&id), Some(&alice())).is_ok());
        let bob = AuthInfo {
            subject: Some("bob".into()),
            ..alice()
        };
        assert_eq!(
            sessions.find(&naming(&id), Some(&bob)).err(),
            Some(Lookup::Unknown)
        );
        assert_eq!(
            sessions.find(&naming(&id), None).err(),
            Some(Lookup::Unknown)
        );
    }

    #[tokio::test]
    async fn idle_sessions_expire_and_make_room() {
        let sessions = Sessions::new(limits(Duration::ZERO, 1));
        let first = sessions.open(session(), None, quiet()).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        // Full, but the first one is idle past the timeout: swept to make room.
        let second = sessions.open(session(), None, quiet()).unwrap();
        assert_eq!(sessions.len(), 1);
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(
            sessions.find(&naming(&first), None).err(),
            Some(Lookup::Unknown)
        );
        assert_eq!(
            sessions.find(&naming(&second), None).err(),
            Some(Lookup::Unknown)
        );
    }

    #[tokio::test]
    async fn a_session_serving_a_request_does_not_expire() {
        let idle = Duration::from_millis(250);
        let sessions = Sessions::new(limits(idle, 10));
        let id = sessions.open(session(), None, quiet()).unwrap();
        let live = sessions.find(&naming(&id), None).unwrap();
        let tracked = live
            .in_flight
            .track(&RequestId::Integer(1), CancellationToken::new());
        std::thread::sleep(idle * 2);
        assert!(
            sessions.find(&naming(&id), None).is_ok(),
            "busy, so not idle"
        );
        drop(tracked);
        std::thread::sleep(idle * 2);
        assert_eq!(
            sessions.find(&naming(&id), None).err(),
            Some(Lookup::Unknown)
        );
    }

    #[tokio::test]
    async fn at_the_cap_the_least_recently_used_idle_session_makes_room() {
        let sessions = Sessions::new(limits(Duration::from_secs(60), 2));
        let first = sessions.open(session(), None, quiet()).unwrap();
        let second = sessions.open(session(), None, quiet()).unwrap();
        // Using the first makes the second the least recently used.
        std::thread::sleep(Duration::from_millis(2));
        sessions.find(&naming(&first), None).unwrap();
        let third = sessions.open(session(), None, quiet()).unwrap();
        assert_eq!(sessions.len(), 2);
        assert_eq!(
            sessions.find(&naming(&second), None).err(),
            Some(Lookup::Unknown)
        );
        assert!(sessions.find(&naming(&first), None).is_ok());
        // Sessions serving a request are never evicted: when all are busy, refuse.
        let busy: Vec<_> = [&first, &third]
            .iter()
            .map(|name| {
                let s = sessions.find(&naming(name), None).unwrap();
                s.in_flight
                    .track(&RequestId::Integer(1), CancellationToken::new())
            })
            .collect();
        assert!(sessions.open(session(), None, quiet()).is_none());
        drop(busy);
        assert!(sessions.open(session(), None, quiet()).is_some());
    }

    #[tokio::test]
    async fn one_caller_at_its_own_cap_gives_up_its_own_sessions_not_others() {
        let sessions = Sessions::new(Limits {
            per_principal: 2,
            ..limits(Duration::from_secs(60), 100)
        });
        let bob = AuthInfo {
            subject: Some("bob".into()),
            ..alice()
        };
        let bobs = sessions.open(session(), Some(&bob), quiet()).unwrap();
        let mut alices = Vec::new();
        for _ in 0..50 {
            alices.push(sessions.open(session(), Some(&alice()), quiet()).unwrap());
        }
        assert_eq!(sessions.len(), 3, "alice holds two, bob one");
        assert!(sessions.find(&naming(&bobs), Some(&bob)).is_ok());
        assert!(sessions.find(&naming(&alices[49]), Some(&alice())).is_ok());
        assert!(sessions.find(&naming(&alices[0]), Some(&alice())).is_err());
    }

    fn limits(idle_timeout: Duration, max: usize) -> Limits {
        Limits {
            idle_timeout,
            max,
            per_principal: max,
            store: Arc::new(super::super::events::MemoryEventStore::default()),
            retry: Duration::from_secs(1),
        }
    }

    /// Events from a server that publishes none.
    fn quiet() -> broadcast::Receiver<ServerEvent> {
        broadcast::channel(1).1
    }

    #[tokio::test]
    async fn ending_a_session_cancels_its_requests() {
        let sessions = Sessions::new(limits(Duration::from_secs(60), 10));
        let id = sessions.open(session(), None, quiet()).unwrap();
        let live = sessions.find(&naming(&id), None).unwrap();
        let token = CancellationToken::new();
        let _tracked = live.in_flight.track(&RequestId::Integer(7), token.clone());
        sessions.end(&naming(&id), None).unwrap();
        assert!(token.is_cancelled());
    }
}
