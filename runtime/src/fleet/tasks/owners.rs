//! An owner's tasks in Redis: the running ones, which the per-principal cap counts,
//! and the finished ones, kept up to the same number (the oldest forgotten first). Two
//! sorted sets scored by each task's expiry, tagged with the owner so that one atomic
//! pipeline reaches both on a Redis Cluster.

use super::{RedisTaskStore, failed};
use crate::StoreError;
use crate::fleet::link::Link;

/// One owner's two sets.
pub(super) struct Owner {
    running: String,
    finished: String,
}

impl Owner {
    pub(super) fn new(prefix: &str, owner: &str) -> Self {
        Self {
            running: format!("{prefix}running:{{{owner}}}"),
            finished: format!("{prefix}finished:{{{owner}}}"),
        }
    }

    /// Counts task `id` (expiring at `expires`) among the running ones unless that is
    /// one more than `per_owner` (never over the cap, even when two instances create
    /// at once: added, counted, taken out again if too many); whether it was.
    pub(super) async fn admit(
        &self,
        connection: &mut Link,
        id: &str,
        expires: u64,
        per_owner: usize,
    ) -> Result<bool, StoreError> {
        let count: usize = redis::pipe()
            .atomic()
            .cmd("ZREMRANGEBYSCORE")
            .arg(&self.running)
            .arg("-inf")
            .arg(crate::tasks::now_ms())
            .ignore()
            .cmd("ZADD")
            .arg(&self.running)
            .arg(expires)
            .arg(id)
            .ignore()
            .cmd("PEXPIREAT")
            .arg(&self.running)
            .arg(expires)
            .arg("NX")
            .ignore()
            .cmd("PEXPIREAT")
            .arg(&self.running)
            .arg(expires)
            .arg("GT")
            .ignore()
            .cmd("ZCARD")
            .arg(&self.running)
            .query_async::<(usize,)>(connection)
            .await
            .map_err(failed)?
            .0;
        if count <= per_owner {
            return Ok(true);
        }
        redis::cmd("ZREM")
            .arg(&self.running)
            .arg(id)
            .query_async::<()>(connection)
            .await
            .map_err(failed)?;
        Ok(false)
    }

    /// Moves task `id` (expiring at `expires`), just ended, from the running ones to
    /// the finished ones. Not fatal when it fails: the task counts as running until it
    /// expires.
    pub(super) async fn finished(&self, connection: &mut Link, id: &str, expires: u64) {
        let moved = redis::pipe()
            .atomic()
            .cmd("ZREM")
            .arg(&self.running)
            .arg(id)
            .ignore()
            .cmd("ZADD")
            .arg(&self.finished)
            .arg(expires)
            .arg(id)
            .ignore()
            .cmd("PEXPIREAT")
            .arg(&self.finished)
            .arg(expires)
            .arg("NX")
            .ignore()
            .cmd("PEXPIREAT")
            .arg(&self.finished)
            .arg(expires)
            .arg("GT")
            .ignore()
            .query_async::<()>(connection)
            .await;
        if let Err(e) = moved {
            tracing::warn!(task = %id, error = %e, "could not count a finished task as finished");
        }
    }

    /// Forgets the owner's finished tasks past the newest `keep` (and the expired).
    pub(super) async fn forget_finished(
        &self,
        connection: &mut Link,
        keep: usize,
        store: &RedisTaskStore,
    ) {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX - 1);
        let over: Result<(Vec<String>,), _> = redis::pipe()
            .atomic()
            .cmd("ZREMRANGEBYSCORE")
            .arg(&self.finished)
            .arg("-inf")
            .arg(crate::tasks::now_ms())
            .ignore()
            .cmd("ZRANGE")
            .arg(&self.finished)
            .arg(0)
            .arg(-(keep + 1))
            .query_async(connection)
            .await;
        let over = match over {
            Ok((over,)) => over,
            Err(e) => {
                tracing::warn!(error = %e, "could not read an owner's finished tasks");
                return;
            }
        };
        for id in over {
            // A task's three keys share its slot; the set is the owner's.
            let forgot = redis::cmd("UNLINK")
                .arg(&store.keys(&id))
                .query_async::<()>(connection)
                .await;
            let dropped = redis::cmd("ZREM")
                .arg(&self.finished)
                .arg(&id)
                .query_async::<()>(connection)
                .await;
            if let Err(e) = forgot.and(dropped) {
                tracing::warn!(task = %id, error = %e, "could not forget a finished task");
            }
        }
    }
}
