//! 2025-11-25 sessions over HTTP: `initialize` opens one and names it in the
//! `Mcp-Session-Id` response header; the client's later POSTs (requests, notifications,
//! and its answers to the server's requests) carry the name; DELETE ends it.
//!
//! Sessions live in this process's memory; with a [`SessionStore`] their records are
//! also kept there, and any instance serves a session it finds in the store (see
//! `session_store`). Idle sessions expire, and their number is capped, so clients that
//! never DELETE cannot exhaust the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderName, StatusCode};
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use super::events::EventStore;
use super::reply::rpc_error;
use super::session_store::{Record, SessionStore};
use super::stream::SessionStreams;
use crate::auth::AuthInfo;
use crate::jsonrpc::RpcError;
use crate::seal::Principal;
use crate::server::{Server, Session, Stamped};
use crate::transport::http::fields::Fields;
use crate::types::v2026_07_28::RequestId;
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
    /// The `initialize` params, kept for its record when sessions are in a store.
    initialize: Option<Box<RawValue>>,
}

impl HttpSession {
    /// Ends the session here; `forget` when it ended everywhere (its events go too).
    fn end(&self, forget: bool) {
        self.session.close();
        self.in_flight.cancel_all();
        self.streams.end(forget);
    }
}

/// Why a request did not find its session.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// No `Mcp-Session-Id` header (400).
    Missing,
    /// No live session by that name for this caller (404: the client starts anew).
    Unknown,
    /// The session store did not answer (503: the client may try again).
    Unavailable,
}

impl Lookup {
    /// The refusal, answered to `id`: 400 without a session id, 404 for one that is not
    /// live (the client starts over), 503 while the store does not answer.
    pub(crate) fn refusal(&self, id: Option<&RequestId>) -> axum::response::Response {
        let (status, error) = match self {
            Self::Missing => (
                StatusCode::BAD_REQUEST,
                RpcError::invalid_request(
                    "Bad Request: no Mcp-Session-Id; send initialize first, or the 2026-07-28 _meta",
                ),
            ),
            Self::Unknown => (
                StatusCode::NOT_FOUND,
                RpcError::invalid_request("Session not found; initialize a new one"),
            ),
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                RpcError::internal("The session store is unavailable; try again shortly"),
            ),
        };
        rpc_error(status, id, error)
    }
}

mod relay;
mod wake;

/// The live sessions of one endpoint.
pub(crate) struct Sessions {
    live: relay::Live,
    idle_timeout: Duration,
    max: usize,
    per_principal: usize,
    store: Arc<dyn EventStore>,
    retry: Duration,
    shared: Option<Arc<dyn SessionStore>>,
    /// In a fleet: this instance's name, and the answers relayed to it.
    relayer: Option<relay::Relayer>,
    /// Wakes readers here when another instance keeps an event in a shared store.
    waker: wake::Waker,
}

/// The limits of an endpoint's sessions, and where their events (and, for a fleet,
/// their records) are kept.
#[derive(Clone)]
pub(crate) struct Limits {
    pub(crate) idle_timeout: Duration,
    pub(crate) max: usize,
    pub(crate) per_principal: usize,
    pub(crate) store: Arc<dyn EventStore>,
    pub(crate) retry: Duration,
    pub(crate) shared: Option<Arc<dyn SessionStore>>,
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
            live: Arc::default(),
            idle_timeout: limits.idle_timeout,
            max: limits.max.max(1),
            per_principal: limits.per_principal.max(1),
            waker: wake::Waker::new(Arc::clone(&limits.store)),
            store: limits.store,
            retry: limits.retry,
            relayer: limits.shared.clone().map(relay::Relayer::new),
            shared: limits.shared,
        }
    }

    /// Registers a new session and returns its id (with its record in the store, if
    /// sessions are shared; `Err` when the store failed). At the cap, expired sessions
    /// go first, then the least recently used one serving nothing; an authenticated
    /// caller at its own cap gives up its own least recently used one instead, so one
    /// caller cannot push out the others. `Ok(None)` when every session is busy.
    /// The session hears the server's `events` on its GET stream from now on.
    pub(crate) async fn open(
        &self,
        session: Session,
        initialize: Option<&serde_json::Value>,
        auth: Option<&AuthInfo>,
        events: broadcast::Receiver<Stamped>,
    ) -> Result<Option<String>, crate::StoreError> {
        let id = new_session_id();
        let owner = auth.map(Principal::from_auth);
        // Kept only for a record in the store.
        let initialize = match (&self.shared, initialize) {
            (Some(_), Some(params)) => serde_json::value::to_raw_value(params).ok(),
            _ => None,
        };
        self.listen().await?;
        let Some(opened) = self.insert(&id, session, owner, initialize, events) else {
            return Ok(None);
        };
        if let Err(e) = self.save(&id, &opened).await {
            lock(&self.live).remove(&id);
            opened.end(true);
            return Err(e);
        }
        Ok(Some(id))
    }

    /// Listens, before a session is served here, for what the other instances of a
    /// fleet tell it: answers relayed here, and events kept in a shared event store.
    async fn listen(&self) -> Result<(), crate::StoreError> {
        if let Some(relayer) = &self.relayer {
            relayer.ensure_listening(&self.live).await?;
        }
        self.waker.ensure_listening(&self.live).await?;
        if let Some(store) = &self.shared {
            self.waker.ensure_hearing_choices(store, &self.live).await?;
        }
        Ok(())
    }

    /// Makes `session` live as `id`, within the caps; `None` when every session is busy.
    fn insert(
        &self,
        id: &str,
        session: Session,
        owner: Option<Principal>,
        initialize: Option<Box<RawValue>>,
        events: broadcast::Receiver<Stamped>,
    ) -> Option<Arc<HttpSession>> {
        let now = Instant::now();
        // A shared session pushed out here may live on elsewhere.
        let forget = self.shared.is_none();
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
                && !evict_lru(&mut live, forget, |s| s.owner.as_ref() == Some(owner))
            {
                return None;
            }
        }
        if live.len() >= self.max && !evict_lru(&mut live, forget, |_| true) {
            return None;
        }
        let streams = Arc::new(SessionStreams::new(
            id.to_owned(),
            Arc::clone(&self.store),
            self.retry,
            self.relayer.as_ref().map(|r| &*r.instance),
        ));
        let sink = Arc::clone(&streams);
        streams.set_forwarder(tokio::spawn(session.clone().forward_events(
            events,
            move |stamped, message| {
                let (sink, key) = (Arc::clone(&sink), stamped.key());
                async move {
                    sink.notify(&key, &message).await;
                    true
                }
            },
        )));
        if let Some(relayer) = &self.relayer {
            session.name_requests(Arc::clone(&relayer.instance));
        }
        let session = Arc::new(HttpSession {
            session,
            owner,
            last_seen: Mutex::new(now),
            in_flight: InFlight::default(),
            streams,
            initialize: initialize.filter(|_| self.shared.is_some()),
        });
        live.insert(id.to_owned(), Arc::clone(&session));
        Some(session)
    }

    /// Writes `session`'s record (its `initialize`, owner and the client's choices) to
    /// the store, when sessions are shared.
    pub(crate) async fn save(
        &self,
        id: &str,
        session: &HttpSession,
    ) -> Result<(), crate::StoreError> {
        let Some(store) = &self.shared else {
            return Ok(());
        };
        let (log_level, subscriptions) = session.session.choices();
        let record = Record {
            initialize: session.initialize.clone().unwrap_or_else(null),
            owner: session.owner.as_ref().map(Principal::owner_key),
            log_level,
            subscriptions,
        };
        store.put(id, record.to_text(), self.idle_timeout).await?;
        // The other instances serving the session filter its events by them too.
        wake::tell_choices(store.as_ref(), id, &record).await
    }

    /// The session a request names, if it is live and belongs to the caller (read from
    /// the store, when sessions are shared, and served here from then on); using it
    /// keeps it alive.
    pub(crate) async fn find(
        &self,
        server: &Server,
        headers: &impl Fields,
        auth: Option<&AuthInfo>,
    ) -> Result<Arc<HttpSession>, Lookup> {
        let name = session_name(headers).ok_or(Lookup::Missing)?;
        let here = self.find_here(name, auth);
        let Some(store) = &self.shared else {
            return here;
        };
        // Every id this server hands out is 32 hex digits: nothing else is looked up.
        if name.len() != 32 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Lookup::Unknown);
        }
        let record = match store.get(name, self.idle_timeout).await {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(error = %e, "could not read a session from the store");
                return Err(Lookup::Unavailable);
            }
        };
        let Some(record) = record.and_then(|text| Record::from_text(&text).ok()) else {
            // Ended (or expired) everywhere: here too.
            if let Some(session) = lock(&self.live).remove(name) {
                session.end(true);
            }
            return Err(Lookup::Unknown);
        };
        if record.owner != auth.map(|a| Principal::from_auth(a).owner_key()) {
            tracing::warn!("a request named a session another caller opened");
            return Err(Lookup::Unknown);
        }
        let session = match here {
            Ok(session) => session,
            Err(_) => {
                self.listen().await.map_err(|e| {
                    tracing::warn!(error = %e, "could not listen to the fleet's stores");
                    Lookup::Unavailable
                })?;
                self.adopt(server, name, &record, auth)?
            }
        };
        session
            .session
            .restore(record.log_level, record.subscriptions);
        Ok(session)
    }

    /// Serves here, from its record, a session another instance opened.
    fn adopt(
        &self,
        server: &Server,
        name: &str,
        record: &Record,
        auth: Option<&AuthInfo>,
    ) -> Result<Arc<HttpSession>, Lookup> {
        let params: Option<serde_json::Value> = serde_json::from_str(record.initialize.get()).ok();
        let (session, _) = server.open_session(params.as_ref()).map_err(|e| {
            tracing::warn!(error = %e.message, "a stored session could not be opened here");
            Lookup::Unknown
        })?;
        let owner = auth.map(Principal::from_auth);
        let initialize = Some(record.initialize.clone());
        self.insert(name, session, owner, initialize, server.events())
            .ok_or(Lookup::Unavailable)
    }

    /// Hands the client's `answer` to request `id` of the session the request names:
    /// here, or relayed to the instance of a fleet that sent the request. `Ok(false)`
    /// when that instance has gone (the session lives on).
    pub(crate) async fn answer(
        &self,
        headers: &impl Fields,
        session: &HttpSession,
        id: crate::types::v2026_07_28::RequestId,
        answer: Result<serde_json::Value, crate::jsonrpc::RpcError>,
    ) -> Result<bool, Lookup> {
        let Err(answer) = session.session.answer(&id, answer) else {
            return Ok(true);
        };
        let (Some(relayer), Some(name)) = (&self.relayer, session_name(headers)) else {
            tracing::debug!(?id, "a client response to no pending request");
            return Ok(true);
        };
        relayer.relay(name, id, answer).await.map_err(|e| {
            tracing::warn!(error = %e, "could not relay a client's answer");
            Lookup::Unavailable
        })
    }

    /// The session named `name` live in this process, if it belongs to the caller.
    fn find_here(&self, name: &str, auth: Option<&AuthInfo>) -> Result<Arc<HttpSession>, Lookup> {
        let now = Instant::now();
        let mut live = lock(&self.live);
        let session = live.get(name).cloned().ok_or(Lookup::Unknown)?;
        if session.owner != auth.map(Principal::from_auth) {
            tracing::warn!("a request named a session another caller opened");
            return Err(Lookup::Unknown);
        }
        if self.expired(&session, now) {
            live.remove(name);
            session.end(self.shared.is_none());
            return Err(Lookup::Unknown);
        }
        *lock(&session.last_seen) = now;
        Ok(session)
    }

    /// Ends the session a DELETE names, here and in the store.
    pub(crate) async fn end(
        &self,
        server: &Server,
        headers: &impl Fields,
        auth: Option<&AuthInfo>,
    ) -> Result<(), Lookup> {
        let session = self.find(server, headers, auth).await?;
        let name = session_name(headers).unwrap_or_default();
        lock(&self.live).remove(name);
        session.end(true);
        if let Some(store) = &self.shared {
            store.remove(name).await.map_err(|e| {
                tracing::warn!(error = %e, "could not remove a session from the store");
                Lookup::Unavailable
            })?;
        }
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
                // A shared session may live on elsewhere: only this instance lets go.
                session.end(self.shared.is_none());
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
    forget: bool,
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
    session.end(forget);
    true
}

fn session_name(headers: &impl Fields) -> Option<&str> {
    headers.text(&SESSION)
}

/// 128 random bits, hex: visible ASCII as the header requires, and unguessable.
/// JSON `null`, as raw text.
fn null() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

fn new_session_id() -> String {
    crate::util::random_hex::<16>()
}

#[cfg(test)]
mod tests;
