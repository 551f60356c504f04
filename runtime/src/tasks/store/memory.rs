//! The in-memory [`TaskStore`]: one process's tasks behind one lock, bounded in number
//! and per owner, each forgotten when its TTL passes; the fencing of leases checked
//! under the same lock as the write it guards.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::{Admission, Status, TaskRecord, TaskStore, Transition};
use crate::StoreError;
use crate::transport::BoxFuture;

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
    /// How many tasks have ended: each ended task's place in that order.
    ends: u64,
}

struct Entry {
    record: TaskRecord,
    /// Its place among the ended tasks (0 while it runs): the oldest is forgotten first,
    /// in the order the tasks ended, where their times may fall in one millisecond.
    ended: u64,
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
    crate::tasks::now_ms()
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

    /// The live entry held under `fence`: `Ok(None)` when it is gone, refused when
    /// another instance holds its lease.
    fn held(&mut self, id: &str, fence: u64) -> Result<Option<&mut Entry>, StoreError> {
        match self.live(id) {
            Some(entry) if entry.record.fence != fence => Err(crate::tasks::lease_lost()),
            entry => Ok(entry),
        }
    }

    /// Admits `task` under its owner's caps: at most `per_owner` running; of its
    /// finished ones, the oldest forgotten past `per_owner`.
    fn admit(&mut self, task: &TaskRecord, per_owner: usize, capacity: usize) -> Admission {
        let now = now_ms();
        let live = |e: &Entry| e.record.created_ms.saturating_add(e.record.ttl_ms) > now;
        let mut running = 0;
        let mut finished = Vec::new();
        for (id, e) in &self.by_id {
            if e.record.owner != task.owner || !live(e) {
                continue;
            }
            if e.record.status.is_terminal() {
                finished.push((e.ended, id.clone()));
            } else {
                running += 1;
            }
        }
        if running >= per_owner {
            return Admission::OwnerAtCap;
        }
        if finished.len() > per_owner {
            finished.sort_unstable();
            let over = finished.len() - per_owner;
            for (_, id) in finished.iter().take(over) {
                self.by_id.remove(id);
            }
        }
        if self.by_id.len() >= capacity {
            self.by_id.retain(|_, e| live(e));
        }
        if self.by_id.len() >= capacity {
            return Admission::StoreFull;
        }
        Admission::Created
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
            let admission = tasks.admit(&task, per_owner, capacity);
            if admission == Admission::Created {
                let entry = Entry {
                    record: task,
                    ended: 0,
                    answers: Vec::new(),
                    notify: Arc::new(Notify::new()),
                };
                tasks.by_id.insert(entry.record.id.clone(), entry);
            }
            Ok(admission)
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
        fence: u64,
        change: Transition,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let applied = self.with(|tasks| {
            let next_end = tasks.ends + 1;
            let Some(entry) = tasks.held(id, fence)? else {
                return Ok(false);
            };
            if entry.record.status.is_terminal() {
                return Ok(false);
            }
            let ends = change.status.is_terminal();
            if ends {
                entry.ended = next_end;
            }
            let r = &mut entry.record;
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
            if ends {
                tasks.ends = next_end;
            }
            Ok(true)
        });
        Box::pin(async move { applied })
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
        fence: u64,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, StoreError>> {
        let answers = self.with(|tasks| {
            Ok(tasks
                .held(id, fence)?
                .map(|e| std::mem::take(&mut e.answers))
                .unwrap_or_default())
        });
        Box::pin(async move { answers })
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

    fn renew<'a>(
        &'a self,
        id: &'a str,
        fence: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let stop = self.with(|tasks| {
            Ok(match tasks.held(id, fence)? {
                Some(entry) => {
                    entry.record.lease_ms = until_ms;
                    entry.record.cancel_requested || entry.record.status.is_terminal()
                }
                None => true,
            })
        });
        Box::pin(async move { stop })
    }

    fn take_over<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let taken = self.with(|tasks| {
            let entry = tasks.live(id)?;
            let r = &mut entry.record;
            if r.lease_ms >= now_ms || r.status.is_terminal() {
                return None;
            }
            r.lease_ms = until_ms;
            r.fence = r.fence.saturating_add(1);
            // The old holder's body may be waiting on this task: wake it to find out.
            entry.notify.notify_waiters();
            Some(r.fence)
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
