//! Redemptions in Redis, shared by every instance that points at the same server: one
//! `SET NX PX` claims a token atomically, so of two instances redeeming it at once only
//! one runs the tool.

use std::time::Duration;

use crate::StoreError;
use crate::server::replay::{Redemption, ReplayStore, STORE, TokenId};
use crate::transport::BoxFuture;

/// A redeemed token whose flow has not completed (or went on to another round).
const SPENT: &str = "-";
/// The prefix of a completed flow's stored result.
const DONE: char = '+';

/// A [`ReplayStore`] in Redis (feature `redis`). Keys are `PREFIX` + the token id in
/// hex, each expiring with its redemption.
#[derive(Clone)]
pub struct RedisReplayStore {
    connection: crate::fleet::link::Link,
    prefix: String,
}

impl std::fmt::Debug for RedisReplayStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisReplayStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> StoreError {
    StoreError::caused_by(STORE, e)
}

use crate::fleet::link::millis;

impl RedisReplayStore {
    /// Connects to the Redis server at `url` (`redis://host:port/db`, or
    /// `redis+unix:///path/to.sock`), reconnecting on its own if the link drops. Keys
    /// start with `tern:replay:` unless [`prefix`](Self::prefix) says otherwise.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let connection = crate::fleet::link::connect(url).await.map_err(failed)?;
        Ok(Self::on(connection))
    }

    /// The store on a fleet's link.
    pub(crate) fn on(connection: crate::fleet::link::Link) -> Self {
        Self {
            connection,
            prefix: "tern:replay:".into(),
        }
    }

    /// Keys start with `prefix` (to share a Redis between servers that must not see each
    /// other's redemptions).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn key(&self, token: TokenId) -> String {
        format!("{}{}", self.prefix, token.to_hex())
    }
}

impl ReplayStore for RedisReplayStore {
    fn redeem(
        &self,
        token: TokenId,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Redemption, StoreError>> {
        let key = self.key(token);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let claimed: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(SPENT)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut connection)
                .await
                .map_err(failed)?;
            if claimed.is_some() {
                return Ok(Redemption::First);
            }
            let stored: Option<String> = redis::cmd("GET")
                .arg(&key)
                .query_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(match stored.as_deref().and_then(|v| v.strip_prefix(DONE)) {
                Some(result) => Redemption::Completed(result.to_owned()),
                // Spent, or expired just now: either way not a first redemption.
                None => Redemption::Spent,
            })
        })
    }

    fn complete(
        &self,
        token: TokenId,
        result: String,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let key = self.key(token);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let mut value = String::with_capacity(result.len() + 1);
            value.push(DONE);
            value.push_str(&result);
            redis::cmd("SET")
                .arg(&key)
                .arg(value)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }
}
