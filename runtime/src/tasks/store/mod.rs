//! Where tasks live: the [`TaskStore`] trait every instance of a fleet shares, and the
//! in-memory default.
//!
//! A store keeps, per task, its fixed facts (owner, times, TTL), its status, the input
//! requests still outstanding, the answers delivered and not yet taken by the running
//! body, a cancellation flag and the running instance's lease. Every operation that
//! reads and writes is atomic in the store, so two instances answering, cancelling or
//! finishing one task at once cannot lose an update.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::StoreError;
use crate::transport::BoxFuture;

/// A task's status, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The body is running.
    Working,
    /// The body waits for answers to its outstanding input requests.
    InputRequired,
    /// The body finished with a result (a tool error is a result too).
    Completed,
    /// The body failed with a JSON-RPC error, or its instance went away.
    Failed,
    /// The task was cancelled.
    Cancelled,
}

impl Status {
    /// Whether nothing changes a task in this status any more.
    pub(crate) fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// One task, as a store holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id (at least 128 random bits, URL-safe).
    pub id: String,
    /// Who may see the task: a digest of the principal that created it.
    pub owner: String,
    /// The status.
    pub status: Status,
    /// A message for the user about the status.
    pub message: Option<String>,
    /// When the task was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When its status last changed.
    pub updated_ms: u64,
    /// How long after creation the task is kept.
    pub ttl_ms: u64,
    /// How often clients should poll.
    pub poll_interval_ms: u64,
    /// Until when the running instance holds the task; a task not terminal whose lease
    /// lapsed has lost its instance.
    pub lease_ms: u64,
    /// The input requests still outstanding, by key, each as JSON text.
    pub asks: Vec<(String, String)>,
    /// The result (JSON text) of a completed task.
    pub result: Option<String>,
    /// The JSON-RPC error (JSON text) of a failed task.
    pub error: Option<String>,
    /// Whether a cancellation was asked for.
    pub cancel_requested: bool,
    /// For a restartable task, where its body starts again when its instance stops:
    /// the call and its last durable round, as JSON text written by the server and
    /// read back by another instance (`None` for a task that is not restartable).
    pub resume: Option<String>,
}

/// A change of status, applied only to a task that is not terminal.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Transition {
    /// The new status.
    pub status: Status,
    /// The new message (replacing the old one).
    pub message: Option<String>,
    /// The outstanding input requests, replacing the old ones (for `InputRequired`).
    pub asks: Vec<(String, String)>,
    /// The result, for `Completed`.
    pub result: Option<String>,
    /// The error, for `Failed`.
    pub error: Option<String>,
    /// When the change happened.
    pub at_ms: u64,
    /// A new restart point for a restartable task (the old one is kept when `None`).
    pub resume: Option<String>,
}

impl Transition {
    /// A change to `status` with nothing else.
    pub(crate) fn to(status: Status, at_ms: u64) -> Self {
        Self {
            status,
            message: None,
            asks: Vec::new(),
            result: None,
            error: None,
            at_ms,
            resume: None,
        }
    }
}

/// Whether a store took a new task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// The task is stored.
    Created,
    /// Its owner already holds as many live tasks as one owner may.
    OwnerAtCap,
    /// The store holds as many tasks as it can.
    StoreFull,
}

/// Where a fleet keeps its tasks. Every method is atomic in the store.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task unless its owner already holds `per_owner` live (unexpired)
    /// tasks, or the store is full; it is readable by every instance once this returns
    /// [`Admission::Created`].
    fn create(
        &self,
        task: TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'_, Result<Admission, StoreError>>;

    /// The task, if the store still has it.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Applies `change` unless the task is terminal (or gone); whether it applied.
    fn transition<'a>(
        &'a self,
        id: &'a str,
        change: Transition,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Delivers answers: those whose key is outstanding leave the outstanding requests
    /// and wait for the body; the others are ignored. Once none is outstanding, the task
    /// is `working` again. Returns the keys accepted.
    fn deliver<'a>(
        &'a self,
        id: &'a str,
        answers: Vec<(String, String)>,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>>;

    /// Takes the answers delivered since the last call.
    fn take_answers<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, StoreError>>;

    /// Asks for the task's cancellation (nothing for a terminal task); whether the task
    /// exists.
    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Extends the running instance's lease to `until_ms`; whether a cancellation was
    /// asked for (or the task is gone or terminal: the body should stop either way).
    fn renew<'a>(&'a self, id: &'a str, until_ms: u64) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Takes over a restartable task (one with [`TaskRecord::resume`]) whose instance
    /// stopped: when it is not terminal and its lease lapsed before `now_ms`, it is held
    /// until `until_ms` by the caller, which runs it again; whether the caller holds it
    /// now (of several instances that try at once, one does).
    fn take_over<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Waits until something may have changed for task `id` (an answer, a cancellation)
    /// or `at_most` passes. A store that cannot tell sleeps `at_most`.
    fn changed<'a>(&'a self, id: &'a str, at_most: Duration) -> BoxFuture<'a, ()>;
}

/// The in-memory [`TaskStore`]: one process's tasks, bounded in number (10,000 by
/// [`Default`]), each forgotten when its TTL from creation passes. The default; a fleet
/// shares a `RedisTaskStore` (feature `redis`) instead.
#[derive(Clone, Default)]
pub struct MemoryTaskStore {
    inner: Arc<Mutex<Tasks>>,
    capacity: Option<usize>,
}

#[derive(Default)]
struct Tasks {
    by_id: HashMap<String, Entry>,
}

struct Entry {
    record: TaskRecord,
    answers: Vec<(String, String)>,
    notify: Arc<Notify>,
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

/// How many tasks a [`MemoryTaskStore`] holds unless told otherwise.
pub(crate) const DEFAULT_TASK_CAPACITY: usize = 10_000;

impl MemoryTaskStore {
    /// A store holding at most `capacity` tasks: creating one more first forgets the
    /// expired ones, then fails if the store is still full (a running task is never
    /// dropped to make room).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            inner: Arc::default(),
            capacity: Some(capacity),
        }
    }

    fn capacity(&self) -> usize {
        self.capacity.unwrap_or(DEFAULT_TASK_CAPACITY)
    }

    fn with<T>(&self, f: impl FnOnce(&mut Tasks) -> T) -> T {
        let mut tasks = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut tasks)
    }
}

fn now_ms() -> u64 {
    super::now_ms()
}

impl Tasks {
    /// The entry, unless its TTL passed (then it is forgotten).
    fn live(&mut self, id: &str) -> Option<&mut Entry> {
        let expired = self
            .by_id
            .get(id)
            .is_some_and(|e| e.record.created_ms.saturating_add(e.record.ttl_ms) <= now_ms());
        if expired {
            self.by_id.remove(id);
        }
        self.by_id.get_mut(id)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        task: TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        let capacity = self.capacity();
        let outcome = self.with(|tasks| {
            let now = now_ms();
            let live = |e: &Entry| e.record.created_ms.saturating_add(e.record.ttl_ms) > now;
            let owned = tasks
                .by_id
                .values()
                .filter(|e| e.record.owner == task.owner && live(e))
                .take(per_owner)
                .count();
            if owned >= per_owner {
                return Ok(Admission::OwnerAtCap);
            }
            if tasks.by_id.len() >= capacity {
                tasks.by_id.retain(|_, e| live(e));
            }
            if tasks.by_id.len() >= capacity {
                return Ok(Admission::StoreFull);
            }
            let id = task.id.clone();
            tasks.by_id.insert(
                id,
                Entry {
                    record: task,
                    answers: Vec::new(),
                    notify: Arc::new(Notify::new()),
                },
            );
            Ok(Admission::Created)
        });
        Box::pin(async move { outcome })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let record = self.with(|tasks| tasks.live(id).map(|e| e.record.clone()));
        Box::pin(async move { Ok(record) })
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        change: Transition,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let applied = self.with(|tasks| {
            let Some(entry) = tasks.live(id) else {
                return false;
            };
            let r = &mut entry.record;
            if r.status.is_terminal() {
                return false;
            }
            r.status = change.status;
            r.message = change.message;
            r.asks = change.asks;
            r.result = change.result;
            r.error = change.error;
            r.updated_ms = change.at_ms;
            if change.resume.is_some() {
                r.resume = change.resume;
            }
            entry.notify.notify_waiters();
            true
        });
        Box::pin(async move { Ok(applied) })
    }

    fn deliver<'a>(
        &'a self,
        id: &'a str,
        answers: Vec<(String, String)>,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        let accepted = self.with(|tasks| {
            let Some(entry) = tasks.live(id) else {
                return Vec::new();
            };
            if entry.record.status != Status::InputRequired {
                return Vec::new();
            }
            let mut accepted = Vec::new();
            for (key, answer) in answers {
                if let Some(at) = entry.record.asks.iter().position(|(k, _)| *k == key) {
                    entry.record.asks.remove(at);
                    entry.answers.push((key.clone(), answer));
                    accepted.push(key);
                }
            }
            if !accepted.is_empty() {
                entry.record.updated_ms = at_ms;
                if entry.record.asks.is_empty() {
                    entry.record.status = Status::Working;
                }
                entry.notify.notify_waiters();
            }
            accepted
        });
        Box::pin(async move { Ok(accepted) })
    }

    fn take_answers<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, StoreError>> {
        let answers = self.with(|tasks| {
            tasks
                .live(id)
                .map(|e| std::mem::take(&mut e.answers))
                .unwrap_or_default()
        });
        Box::pin(async move { Ok(answers) })
    }

    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let exists = self.with(|tasks| match tasks.live(id) {
            Some(entry) => {
                if !entry.record.status.is_terminal() {
                    entry.record.cancel_requested = true;
                    entry.notify.notify_waiters();
                }
                true
            }
            None => false,
        });
        Box::pin(async move { Ok(exists) })
    }

    fn renew<'a>(&'a self, id: &'a str, until_ms: u64) -> BoxFuture<'a, Result<bool, StoreError>> {
        let stop = self.with(|tasks| match tasks.live(id) {
            Some(entry) => {
                entry.record.lease_ms = until_ms;
                entry.record.cancel_requested || entry.record.status.is_terminal()
            }
            None => true,
        });
        Box::pin(async move { Ok(stop) })
    }

    fn take_over<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let taken = self.with(|tasks| {
            let Some(entry) = tasks.live(id) else {
                return false;
            };
            let r = &mut entry.record;
            let lapsed = r.lease_ms < now_ms && !r.status.is_terminal() && r.resume.is_some();
            if lapsed {
                r.lease_ms = until_ms;
            }
            lapsed
        });
        Box::pin(async move { Ok(taken) })
    }

    fn changed<'a>(&'a self, id: &'a str, at_most: Duration) -> BoxFuture<'a, ()> {
        let notify = self.with(|tasks| tasks.live(id).map(|e| Arc::clone(&e.notify)));
        Box::pin(async move {
            match notify {
                Some(n) => {
                    let _ = tokio::time::timeout(at_most, n.notified()).await;
                }
                None => tokio::time::sleep(at_most).await,
            }
        })
    }
}

#[cfg(test)]
mod tests;
