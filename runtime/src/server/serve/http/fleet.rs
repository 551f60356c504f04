//! A fleet's Redis in one value (feature `redis`): [`RedisFleet`] connects once and
//! hands out the stores the instances share (2025-11-25 sessions and their events,
//! single-use state, and tasks: `RedisFleet::task_store`), all on the one link; [`HttpServer::fleet`](super::HttpServer::fleet)
//! puts an endpoint's sessions, their streams and the server's event bus on it in one
//! call.

use std::sync::Arc;

use super::events::{EventStore, RedisEventStore};
use super::session_store::{RedisSessionStore, SessionStore};
use crate::StoreError;
use crate::server::replay::RedisReplayStore;

/// What the instances of a fleet share on one Redis (or Redis Cluster), connected once.
#[derive(Clone)]
pub struct RedisFleet {
    sessions: RedisSessionStore,
    events: RedisEventStore,
    replay: RedisReplayStore,
    /// The link, for the stores above this module (tasks).
    pub(crate) link: crate::util::redis::Link,
}

impl std::fmt::Debug for RedisFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFleet").finish_non_exhaustive()
    }
}

impl RedisFleet {
    /// Connects to the Redis at `url` (a Redis Cluster is found by asking the server):
    /// one link every store shares, reconnecting on its own.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let redis = crate::util::redis::connect_node(url)
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

    pub(super) fn sessions(&self) -> Arc<dyn SessionStore> {
        Arc::new(self.sessions.clone())
    }

    pub(super) fn events(&self) -> Arc<dyn EventStore> {
        Arc::new(self.events.clone())
    }
}
