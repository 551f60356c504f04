//! Tasks in Redis (feature `redis`), shared by every instance that points at the same
//! server. Each task is three keys, all expiring with the task's TTL: a hash of its
//! fields (`PREFIX{id}`, the id a hash tag so the three share a Redis Cluster slot), a
//! hash of its outstanding input requests (`…:asks`) and a
//! hash of the answers delivered and not yet taken (`…:answers`). Every change that
//! reads before it writes is one Lua script (`scripts.rs`), so it is atomic in Redis;
//! the running instance's writes are fenced there by its lease's token. Each owner has
//! two sorted sets of its tasks by expiry, both tagged with the owner (one slot): the
//! running ones (`PREFIX` + `running:{owner}`), which caps how many one principal runs
//! across the fleet, and the finished ones (`…finished:{owner}`), which bounds how many
//! it keeps (the oldest forgotten first). A task moves from one to the other when the
//! instance that ends it has stored its end.
//!
//! The instance running a task's body learns of answers and cancellation by reading
//! these keys (every 50 ms while it waits), not through a channel of its own: any
//! instance may take the `tasks/update` or `tasks/cancel`.

use std::collections::HashMap;
use std::time::Duration;

use crate::StoreError;
use crate::tasks::{Admission, Status, TaskRecord, TaskStore, Transition};
use crate::transport::BoxFuture;

mod owners;
mod scripts;

use scripts::{LEASE_LOST, Scripts};

/// How often a waiting body looks for answers and cancellation in Redis.
const POLL: Duration = Duration::from_millis(50);

/// A [`TaskStore`] in Redis (feature `redis`).
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: crate::fleet::link::Link,
    prefix: String,
    scripts: std::sync::Arc<Scripts>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> StoreError {
    StoreError::caused_by(crate::tasks::STORE, e)
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Working => "working",
        Status::InputRequired => "input_required",
        Status::Completed => "completed",
        Status::Failed => "failed",
        Status::Cancelled => "cancelled",
    }
}

fn status_of(s: &str) -> Option<Status> {
    Some(match s {
        "working" => Status::Working,
        "input_required" => Status::InputRequired,
        "completed" => Status::Completed,
        "failed" => Status::Failed,
        "cancelled" => Status::Cancelled,
        _ => return None,
    })
}

impl RedisTaskStore {
    /// Connects to the Redis server at `url` (`redis://host:port/db`), reconnecting on
    /// its own if the link drops. Keys start with `tern:task:` unless
    /// [`prefix`](Self::prefix) says otherwise.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let connection = crate::fleet::link::connect(url).await.map_err(failed)?;
        Ok(Self::on(connection))
    }

    pub(super) fn on(connection: crate::fleet::link::Link) -> Self {
        Self {
            connection,
            prefix: "tern:task:".into(),
            scripts: std::sync::Arc::new(Scripts::new()),
        }
    }

    /// Keys start with `prefix` (to share a Redis between fleets that must not see
    /// each other's tasks).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The sets of `owner`'s tasks.
    fn owner(&self, owner: &str) -> owners::Owner {
        owners::Owner::new(&self.prefix, owner)
    }

    fn keys(&self, id: &str) -> [String; 3] {
        // The id is a hash tag: a task's three keys share a slot on a Redis Cluster, as
        // its scripts need.
        let task = format!("{}{{{id}}}", self.prefix);
        [format!("{task}:asks"), format!("{task}:answers"), task]
    }
}

fn pairs(flat: Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    out
}

fn field<T: std::str::FromStr>(h: &HashMap<String, String>, name: &str) -> Result<T, StoreError> {
    h.get(name).and_then(|v| v.parse().ok()).ok_or_else(|| {
        StoreError::new(
            crate::tasks::STORE,
            format!("a stored task has no valid {name}"),
        )
    })
}

fn optional(h: &HashMap<String, String>, name: &str) -> Option<String> {
    h.get(name).filter(|v| !v.is_empty()).cloned()
}

/// A new task's hash fields.
fn fields(task: &TaskRecord, expires: u64) -> [(&'static str, String); 15] {
    [
        ("id", task.id.clone()),
        ("owner", task.owner.clone()),
        ("status", status_name(task.status).to_owned()),
        ("message", task.message.clone().unwrap_or_default()),
        ("created", task.created_ms.to_string()),
        ("updated", task.updated_ms.to_string()),
        ("ttl", task.ttl_ms.to_string()),
        ("poll", task.poll_interval_ms.to_string()),
        ("lease", task.lease_ms.to_string()),
        ("fence", task.fence.to_string()),
        ("expires", expires.to_string()),
        ("cancel", "0".to_owned()),
        ("result", String::new()),
        ("error", String::new()),
        ("resume", task.resume.clone().unwrap_or_default()),
    ]
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        task: TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        let [_, _, key] = self.keys(&task.id);
        let owner = self.owner(&task.owner);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let expires = task.created_ms.saturating_add(task.ttl_ms);
            if !owner
                .admit(&mut connection, &task.id, expires, per_owner)
                .await?
            {
                return Ok(Admission::OwnerAtCap);
            }
            redis::pipe()
                .atomic()
                .cmd("HSET")
                .arg(&key)
                .arg(&fields(&task, expires))
                .ignore()
                .cmd("PEXPIREAT")
                .arg(&key)
                .arg(expires)
                .ignore()
                .query_async::<()>(&mut connection)
                .await
                .map_err(failed)?;
            owner
                .forget_finished(&mut connection, per_owner, self)
                .await;
            Ok(Admission::Created)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let [asks, _, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let (h, asked): (HashMap<String, String>, Vec<String>) = redis::pipe()
                .cmd("HGETALL")
                .arg(&key)
                .cmd("HGETALL")
                .arg(&asks)
                .query_async(&mut connection)
                .await
                .map_err(failed)?;
            if h.is_empty() {
                return Ok(None);
            }
            let status = h.get("status").and_then(|s| status_of(s)).ok_or_else(|| {
                StoreError::new(crate::tasks::STORE, "a stored task has no valid status")
            })?;
            Ok(Some(TaskRecord {
                id: id.to_owned(),
                owner: h.get("owner").cloned().unwrap_or_default(),
                status,
                message: optional(&h, "message"),
                created_ms: field(&h, "created")?,
                updated_ms: field(&h, "updated")?,
                ttl_ms: field(&h, "ttl")?,
                poll_interval_ms: field(&h, "poll")?,
                lease_ms: field(&h, "lease")?,
                fence: h.get("fence").and_then(|f| f.parse().ok()).unwrap_or(0),
                asks: pairs(asked),
                result: optional(&h, "result"),
                error: optional(&h, "error"),
                cancel_requested: h.get("cancel").is_some_and(|c| c == "1"),
                resume: optional(&h, "resume"),
            }))
        })
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
        change: Transition,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let [asks, _, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let ended = change.status.is_terminal();
            let mut call = self.scripts.transition.key(&key);
            call.key(&asks)
                .arg(fence)
                .arg(status_name(change.status))
                .arg(change.message.unwrap_or_default())
                .arg(change.result.unwrap_or_default())
                .arg(change.error.unwrap_or_default())
                .arg(change.at_ms)
                .arg(change.resume.unwrap_or_default());
            for (k, v) in &change.asks {
                call.arg(k).arg(v);
            }
            let (applied, owner, expires): (i64, String, u64) =
                call.invoke_async(&mut connection).await.map_err(failed)?;
            if applied == LEASE_LOST {
                return Err(crate::tasks::lease_lost());
            }
            if ended && applied == 1 {
                self.owner(&owner)
                    .finished(&mut connection, id, expires)
                    .await;
            }
            Ok(applied == 1)
        })
    }

    fn deliver<'a>(
        &'a self,
        id: &'a str,
        answers: Vec<(String, String)>,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        let [asks, answered, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let mut call = self.scripts.deliver.key(&key);
            call.key(&asks).key(&answered).arg(at_ms);
            for (k, v) in &answers {
                call.arg(k).arg(v);
            }
            call.invoke_async(&mut connection).await.map_err(failed)
        })
    }

    fn take_answers<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, StoreError>> {
        let [_, answered, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let (taken, flat): (i64, Vec<String>) = self
                .scripts
                .take
                .key(&key)
                .key(&answered)
                .arg(fence)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            if taken == LEASE_LOST {
                return Err(crate::tasks::lease_lost());
            }
            Ok(pairs(flat))
        })
    }

    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let [_, _, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let exists: i64 = self
                .scripts
                .cancel
                .key(&key)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(exists == 1)
        })
    }

    fn renew<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let [_, _, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let stop: i64 = self
                .scripts
                .renew
                .key(&key)
                .arg(fence)
                .arg(until_ms)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            if stop == LEASE_LOST {
                return Err(crate::tasks::lease_lost());
            }
            Ok(stop == 1)
        })
    }

    fn take_over<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let [_, _, key] = self.keys(id);
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let fence: u64 = self
                .scripts
                .take_over
                .key(&key)
                .arg(now_ms)
                .arg(until_ms)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok((fence > 0).then_some(fence))
        })
    }

    fn changed<'a>(&'a self, _id: &'a str, at_most: Duration) -> BoxFuture<'a, ()> {
        Box::pin(tokio::time::sleep(at_most.min(POLL)))
    }
}
