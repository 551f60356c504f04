//! Session records in Redis: one string key per session, its expiry renewed by each
//! read (`GETEX PX`, Redis 6.2 or later). The key's id is a hash tag (`{id}`), so the
//! keys of one session share a slot on a Redis Cluster.

use std::time::Duration;

use crate::StoreError;
use crate::http::session_store::{Published, STORE, SessionStore};
use crate::transport::BoxFuture;

/// A [`SessionStore`] in Redis (feature `redis`). Keys are `PREFIX{id}`.
#[derive(Clone)]
pub struct RedisSessionStore {
    redis: crate::fleet::link::Connected,
    prefix: String,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> StoreError {
    StoreError::caused_by(STORE, e)
}

use crate::fleet::link::millis;

impl RedisSessionStore {
    /// Connects to the Redis server at `url` (`redis://host:port/db`), reconnecting on
    /// its own if the link drops. Keys start with `tern:session:` unless
    /// [`prefix`](Self::prefix) says otherwise.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let redis = crate::fleet::link::connect_node(url)
            .await
            .map_err(failed)?;
        Ok(Self::on(redis))
    }

    /// The store on a fleet's link.
    pub(crate) fn on(redis: crate::fleet::link::Connected) -> Self {
        Self {
            redis,
            prefix: "tern:session:".into(),
        }
    }

    /// Keys start with `prefix` (to share a Redis between fleets that must not see
    /// each other's sessions).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}{{{id}}}", self.prefix)
    }

    fn channel(&self, channel: &str) -> String {
        format!("{}channel:{channel}", self.prefix)
    }
}

impl SessionStore for RedisSessionStore {
    fn put(
        &self,
        id: &str,
        record: String,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let key = self.key(id);
        let mut connection = self.redis.link.clone();
        Box::pin(async move {
            redis::cmd("SET")
                .arg(&key)
                .arg(record)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn get(&self, id: &str, ttl: Duration) -> BoxFuture<'_, Result<Option<String>, StoreError>> {
        let key = self.key(id);
        let mut connection = self.redis.link.clone();
        Box::pin(async move {
            redis::cmd("GETEX")
                .arg(&key)
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn publish(&self, channel: &str, message: String) -> BoxFuture<'_, Result<bool, StoreError>> {
        let channel = self.channel(channel);
        let mut connection = self.redis.node.clone();
        Box::pin(async move {
            let listeners: i64 = redis::cmd("PUBLISH")
                .arg(&channel)
                .arg(message)
                .query_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(listeners > 0)
        })
    }

    fn listen(&self, channel: &str) -> BoxFuture<'_, Result<Published, StoreError>> {
        let channel = self.channel(channel);
        Box::pin(async move {
            crate::fleet::link::subscribe(&self.redis.client, &channel)
                .await
                .map_err(failed)
        })
    }

    fn remove(&self, id: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let key = self.key(id);
        let mut connection = self.redis.link.clone();
        Box::pin(async move {
            redis::cmd("DEL")
                .arg(&key)
                .query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }
}
