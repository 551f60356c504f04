//! What a server tells its clients outside any request: list changes, resource
//! updates and log messages. One broadcast per server; `subscriptions/listen` streams
//! (2026-07-28) and 2025-11-25 sessions each hear it and keep what their client asked
//! for.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::types::v2026_07_28::LoggingLevel;

/// How many events a slow listener may fall behind before it misses some (it is told
/// it lagged, and goes on).
pub(crate) const EVENT_BACKLOG: usize = 1024;

/// Something the server tells clients outside any request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesChanged,
    /// The resource at this URI changed (`notifications/resources/updated`): heard only
    /// by clients that subscribed to the URI.
    ResourceUpdated(Arc<str>),
    /// A log message outside any request (`notifications/message`): heard by sessions
    /// whose `logging/setLevel` lets it through.
    Log {
        /// Its severity.
        level: LoggingLevel,
        /// The logger's name, if any.
        logger: Option<Arc<str>>,
        /// What is logged.
        data: Arc<Value>,
    },
}

/// The sending side of a server's events, shared by the servers built over one
/// registry (an `McpServer` and the `Server` it builds): what every listener here
/// hears, and apart, the events that began here (what a fleet's bus carries to the
/// other instances).
#[derive(Debug, Clone)]
pub(crate) struct Events {
    all: broadcast::Sender<Stamped>,
    local: broadcast::Sender<Stamped>,
    /// This instance's name among a fleet's, in the stamps of the events begun here.
    origin: Arc<str>,
    /// The number of the next event begun here.
    next: Arc<AtomicU64>,
}

/// An event as every listener hears it: with the name it has across a fleet (the
/// instance it began on, and its number there), so that instances telling one
/// session's stream about it keep it once.
#[derive(Debug, Clone)]
// The stamp is read by a fleet's HTTP endpoints only.
#[cfg_attr(not(feature = "http-server"), allow(dead_code))]
pub(crate) struct Stamped {
    pub(crate) origin: Arc<str>,
    pub(crate) n: u64,
    pub(crate) event: ServerEvent,
}

impl Stamped {
    /// The event's name across a fleet.
    #[cfg(feature = "http-server")]
    pub(crate) fn key(&self) -> String {
        format!("{}.{}", self.origin, self.n)
    }
}

impl Default for Events {
    fn default() -> Self {
        Self {
            all: broadcast::channel(EVENT_BACKLOG).0,
            local: broadcast::channel(EVENT_BACKLOG).0,
            origin: crate::util::random_id().into(),
            next: Arc::default(),
        }
    }
}

impl Events {
    /// An event that began here.
    pub(crate) fn publish(&self, event: ServerEvent) {
        let stamped = Stamped {
            origin: Arc::clone(&self.origin),
            n: self.next.fetch_add(1, Ordering::Relaxed),
            event,
        };
        // Nobody listening is not an error: the event is simply heard by no one.
        if self.local.receiver_count() > 0 {
            let _ = self.local.send(stamped.clone());
        }
        let _ = self.all.send(stamped);
    }

    /// An event that began on another instance: heard here, not sent on again.
    #[cfg(feature = "http-server")]
    pub(crate) fn deliver(&self, stamped: Stamped) {
        let _ = self.all.send(stamped);
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.all.subscribe()
    }

    /// The events that begin here from now on.
    #[cfg(feature = "http-server")]
    pub(crate) fn subscribe_local(&self) -> broadcast::Receiver<Stamped> {
        self.local.subscribe()
    }

    /// This instance's name in the stamps of its events.
    #[cfg(feature = "http-server")]
    pub(crate) fn origin(&self) -> &Arc<str> {
        &self.origin
    }
}
