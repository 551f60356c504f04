//! Where tasks live: the [`TaskStore`] trait every instance of a fleet shares, and the
//! in-memory default.
//!
//! A store keeps, per task, its fixed facts (owner, times, TTL), its status, the input
//! requests still outstanding, the answers delivered and not yet taken by the running
//! body, a cancellation flag and the running instance's lease. Every operation that
//! reads and writes is atomic in the store, so two instances answering, cancelling or
//! finishing one task at once cannot lose an update.
//!
//! **Leases are fenced.** A lease carries a fencing token ([`TaskRecord::fence`]): 0
//! for the instance that created the task, one more with each
//! [take-over](TaskStore::take_over). The instance running the body passes its token
//! to every write it makes (renewal, status changes, its end, taking answers); a store
//! refuses such a write with [`StoreError::lease_lost`] when the task's token is not
//! that one any more, so an instance that stalled past its lease (paused, partitioned)
//! and was taken over can neither overwrite the new holder's work nor steal its
//! answers: its renewal is refused, and it stops its body. Only the client's own writes
//! ([`deliver`](TaskStore::deliver), [`request_cancel`](TaskStore::request_cancel))
//! carry no token.

use std::time::Duration;

use serde::{Deserialize, Serialize};

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
    /// Whose task it is: a digest of the principal that created it, or for a caller
    /// without credentials `anon:` and its address (which tells such callers apart for
    /// the cap; any of them may see the task by its id).
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
    /// The lease's fencing token: 0 when created, one more with each take-over. A
    /// write that carries another token is refused ([`StoreError::lease_lost`]).
    #[serde(default)]
    pub fence: u64,
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
///
/// The methods given a `fence` are the running instance's writes: each first compares
/// `fence` with the task's [`TaskRecord::fence`] and, when they differ, changes nothing
/// and returns `Err(`[`StoreError::lease_lost`]`)` (whatever else the task's state).
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task unless its owner already holds `per_owner` running (not
    /// terminal, unexpired) tasks, or the store is full; it is readable by every
    /// instance once this returns [`Admission::Created`]. Finished tasks do not count
    /// against the cap, but an owner's are bounded too: at each create, its finished
    /// ones past `per_owner` are forgotten, the oldest first (before their TTL).
    fn create(
        &self,
        task: TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'_, Result<Admission, StoreError>>;

    /// The task, if the store still has it.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Applies `change` unless the task is terminal (or gone); whether it applied.
    /// Fenced: refused unless `fence` is the task's.
    fn transition<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
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

    /// Takes the answers delivered since the last call. Fenced: refused (the answers
    /// left for the holder) unless `fence` is the task's.
    fn take_answers<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, StoreError>>;

    /// Asks for the task's cancellation (nothing for a terminal task); whether the task
    /// exists.
    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Extends the running instance's lease to `until_ms`; whether a cancellation was
    /// asked for (or the task is gone or terminal: the body should stop either way).
    /// Fenced: refused unless `fence` is the task's (the instance lost the task and
    /// stops its body).
    fn renew<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Takes over a task whose instance stopped: when it is not terminal and its lease
    /// lapsed before `now_ms`, its fencing token grows by one and it is held until
    /// `until_ms` by the caller, which gets the new token to run it again (a
    /// [restartable](TaskRecord::resume) task) or mark it failed. `None` when the task
    /// is gone, terminal or held (of several instances that try at once, one gets it).
    fn take_over<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>>;

    /// Waits until something may have changed for task `id` (an answer, a cancellation)
    /// or `at_most` passes. A store that cannot tell sleeps `at_most`.
    fn changed<'a>(&'a self, id: &'a str, at_most: Duration) -> BoxFuture<'a, ()>;
}

mod memory;

pub use memory::MemoryTaskStore;

#[cfg(test)]
mod tests;
