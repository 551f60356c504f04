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
mod tests {
    use super::*;

    fn task(id: &str, ttl_ms: u64) -> TaskRecord {
        let now = now_ms();
        TaskRecord {
            id: id.into(),
            owner: String::new(),
            status: Status::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms,
            poll_interval_ms: 100,
            lease_ms: now + 10_000,
            asks: Vec::new(),
            result: None,
            error: None,
            cancel_requested: false,
        }
    }

    fn asking(keys: &[&str]) -> Transition {
        let mut t = Transition::to(Status::InputRequired, now_ms());
        t.asks = keys.iter().map(|k| ((*k).into(), "{}".into())).collect();
        t
    }

    #[tokio::test]
    async fn answers_to_keys_not_outstanding_are_ignored_and_the_last_one_resumes_the_task() {
        let store = MemoryTaskStore::default();
        assert_eq!(
            store.create(task("t", 60_000), 100).await.unwrap(),
            Admission::Created
        );
        store.transition("t", asking(&["a", "b"])).await.unwrap();
        let answer = |k: &str| {
            vec![
                (k.to_owned(), "1".to_owned()),
                ("never-asked".into(), "2".into()),
            ]
        };
        assert_eq!(
            store.deliver("t", answer("a"), now_ms()).await.unwrap(),
            ["a"]
        );
        // Answered once: a second answer to the same key is not outstanding any more.
        assert!(
            store
                .deliver("t", answer("a"), now_ms())
                .await
                .unwrap()
                .is_empty()
        );
        let r = store.get("t").await.unwrap().unwrap();
        assert_eq!((r.status, r.asks.len()), (Status::InputRequired, 1));
        assert_eq!(
            store.deliver("t", answer("b"), now_ms()).await.unwrap(),
            ["b"]
        );
        assert_eq!(
            store.get("t").await.unwrap().unwrap().status,
            Status::Working
        );
        let taken = store.take_answers("t").await.unwrap();
        assert_eq!(
            taken,
            [("a".to_owned(), "1".to_owned()), ("b".into(), "1".into())]
        );
        assert!(store.take_answers("t").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_terminal_task_changes_no_more_and_a_cancel_of_it_asks_nothing() {
        let store = MemoryTaskStore::default();
        assert_eq!(
            store.create(task("t", 60_000), 100).await.unwrap(),
            Admission::Created
        );
        let mut done = Transition::to(Status::Completed, now_ms());
        done.result = Some("{}".into());
        assert!(store.transition("t", done).await.unwrap());
        assert!(
            !store
                .transition("t", Transition::to(Status::Failed, now_ms()))
                .await
                .unwrap()
        );
        assert!(store.request_cancel("t").await.unwrap());
        let r = store.get("t").await.unwrap().unwrap();
        assert_eq!((r.status, r.cancel_requested), (Status::Completed, false));
        assert!(!store.request_cancel("missing").await.unwrap());
    }

    #[tokio::test]
    async fn a_task_is_kept_for_its_ttl_from_creation_and_then_forgotten() {
        let store = MemoryTaskStore::default();
        assert_eq!(
            store.create(task("short", 50), 100).await.unwrap(),
            Admission::Created
        );
        assert!(store.get("short").await.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(store.get("short").await.unwrap().is_none());
        // Renewing a forgotten task tells its body to stop.
        assert!(store.renew("short", now_ms() + 1000).await.unwrap());
    }

    #[tokio::test]
    async fn a_full_store_makes_room_only_from_expired_tasks() {
        let store = MemoryTaskStore::with_capacity(2);
        assert_eq!(
            store.create(task("a", 60_000), 100).await.unwrap(),
            Admission::Created
        );
        assert_eq!(
            store.create(task("b", 30), 100).await.unwrap(),
            Admission::Created
        );
        assert_eq!(
            store.create(task("c", 60_000), 100).await.unwrap(),
            Admission::StoreFull
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            store.create(task("c", 60_000), 100).await.unwrap(),
            Admission::Created
        );
        assert!(
            store.get("a").await.unwrap().is_some(),
            "a live task is never evicted"
        );
    }

    #[tokio::test]
    async fn one_owner_at_its_cap_is_refused_and_others_are_not() {
        let store = MemoryTaskStore::default();
        let owned_by = |id: &str, owner: &str, ttl_ms| TaskRecord {
            owner: owner.into(),
            ..task(id, ttl_ms)
        };
        for n in 0..3 {
            let mine = owned_by(&format!("m{n}"), "mallory", 60_000);
            assert_eq!(store.create(mine, 3).await.unwrap(), Admission::Created);
        }
        let more = owned_by("m3", "mallory", 60_000);
        assert_eq!(store.create(more, 3).await.unwrap(), Admission::OwnerAtCap);
        let theirs = owned_by("a0", "alice", 60_000);
        assert_eq!(store.create(theirs, 3).await.unwrap(), Admission::Created);
        // Expired tasks no longer count against their owner.
        let other = MemoryTaskStore::default();
        let short = owned_by("s", "bob", 20);
        assert_eq!(other.create(short, 1).await.unwrap(), Admission::Created);
        tokio::time::sleep(Duration::from_millis(40)).await;
        let next = owned_by("t", "bob", 60_000);
        assert_eq!(other.create(next, 1).await.unwrap(), Admission::Created);
    }
}
