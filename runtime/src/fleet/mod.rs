//! Everything a fleet keeps in Redis (feature `redis`), on one link
//! ([`link`](self)): 2025-11-25 sessions ([`RedisSessionStore`]) and their streams'
//! events ([`RedisEventStore`]), single-use state ([`RedisReplayStore`]) and tasks
//! ([`RedisTaskStore`]). [`RedisFleet`] connects once and hands each of them out;
//! [`HttpServer::fleet`] puts an endpoint's sessions, their streams and the server's
//! event bus on it in one call. The stores implement the traits of the rooms they serve
//! (`http`'s [`SessionStore`] and [`EventStore`], the server's
//! [`ReplayStore`](crate::server::replay::ReplayStore), the tasks'
//! [`TaskStore`](crate::tasks::TaskStore)); none of those rooms imports this one.

#[cfg(feature = "http-server")]
use std::sync::Arc;

#[cfg(feature = "http-server")]
mod events;
pub(crate) mod link;
mod replay;
#[cfg(feature = "http-server")]
mod sessions;
mod tasks;

#[cfg(feature = "http-server")]
pub use events::RedisEventStore;
pub use replay::RedisReplayStore;
#[cfg(feature = "http-server")]
pub use sessions::RedisSessionStore;
pub use tasks::RedisTaskStore;

#[cfg(feature = "http-server")]
use crate::StoreError;
#[cfg(feature = "http-server")]
use crate::http::{EventStore, HttpServer, SessionStore};
#[cfg(feature = "http-server")]
use link::Link;

/// What the instances of a fleet share on one Redis (or Redis Cluster), connected once.
#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
#[derive(Clone)]
pub struct RedisFleet {
    sessions: RedisSessionStore,
    events: RedisEventStore,
    replay: RedisReplayStore,
    link: Link,
}

#[cfg(feature = "http-server")]
impl std::fmt::Debug for RedisFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFleet").finish_non_exhaustive()
    }
}

#[cfg(feature = "http-server")]
impl RedisFleet {
    /// Connects to the Redis at `url` (a Redis Cluster is found by asking the server):
    /// one link every store shares, reconnecting on its own.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let redis = link::connect_node(url)
            .await
            .map_err(|e| StoreError::caused_by("fleet", e))?;
        Ok(Self {
            sessions: RedisSessionStore::on(redis.clone()),
            events: RedisEventStore::on(redis.clone()),
            replay: RedisReplayStore::on(redis.link.clone()),
            link: redis.link,
        })
    }

    /// Where single-use tools record their redemptions, for
    /// [`McpServer::replay_store`](crate::mcp::McpServer::replay_store).
    pub fn replay_store(&self) -> Arc<RedisReplayStore> {
        Arc::new(self.replay.clone())
    }

    /// Where a fleet's tasks are kept, on the fleet's link: for
    /// [`Tasks::new`](crate::tasks::Tasks::new).
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::on(self.link.clone())
    }
}

#[cfg(feature = "http-server")]
impl HttpServer {
    /// Serves as one instance of a fleet on `fleet`'s Redis: 2025-11-25 sessions and
    /// their streams' events kept there (any instance serves any request of any
    /// session and resumes any stream), and the server's events (list changes,
    /// resource updates, log messages) carried to every instance. With a shared
    /// sealing key ([`RequestStateSecurity::keys`](crate::seal::RequestStateSecurity::keys)),
    /// single-use state on [`RedisFleet::replay_store`] and tasks on
    /// [`RedisFleet::task_store`], no request needs sticky routing.
    pub fn fleet(self, fleet: &RedisFleet) -> Self {
        let sessions: Arc<dyn SessionStore> = Arc::new(fleet.sessions.clone());
        let events: Arc<dyn EventStore> = Arc::new(fleet.events.clone());
        self.session_store(sessions).event_store(events)
    }
}
