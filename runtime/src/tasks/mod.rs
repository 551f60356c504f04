//! Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a `tools/call` the
//! server answers with a task the client polls, answers and cancels, instead of the
//! result, for tools that outlive a request.
//!
//! A server serves the extension with [`McpServer::extension`](crate::mcp::McpServer::extension)
//! given a [`Tasks`]; a tool opts in with
//! [`ToolBuilder::extension`](crate::mcp::ToolBuilder::extension) given its
//! [`TaskSupport`]. The server makes a call a task only when that request's
//! capabilities declare the extension (never on a 2025-11-25 session). The body runs on the instance that took
//! the call and holds a lease on the task it renews; `tasks/get`, `tasks/update` and
//! `tasks/cancel` work on any instance that shares the [`TaskStore`]. A task whose
//! instance went away is `failed` once its lease lapses, unless its tool is
//! [restartable](TaskSupport::restartable): then another instance runs it again. The
//! lease is fenced: an instance that stalled past it and was taken over finds its
//! renewal refused and stops its body, and the store keeps nothing it writes after.
//! A task is visible only to the principal that created it (the one sealing binds).
//!
//! A client speaks the extension with
//! [`ClientBuilder::extension`](crate::client::ClientBuilder::extension) given
//! [`ClientTasks`]: its tool calls a server makes tasks are followed to their end.
//!
//! MRTR runs inside a task unchanged: the body's `InputRequiredResult` becomes the
//! task's `inputRequests` (status `input_required`), the client's `tasks/update`
//! answers come back to the body as its `inputResponses`, and its `requestState` never
//! leaves the server.
//!
//! ```
//! use std::time::Duration;
//! use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
//! use tern_mcp::tasks::{MemoryTaskStore, TaskSupport, Tasks};
//!
//! let tasks = Tasks::new(MemoryTaskStore::default())
//!     .ttl(Duration::from_secs(3600))
//!     .poll_interval(Duration::from_millis(500));
//! let mcp = McpServer::new("deployer", "1.0.0").extension(tasks);
//! mcp.tool("deploy")
//!     .extension(TaskSupport::Optional)
//!     .run(|_: NoArgs, _ctx: ToolContext| async { Ok("deployed") });
//! # let _ = mcp.server()?;
//! # Ok::<(), tern_mcp::Error>(())
//! ```

mod client;
mod restart;
mod run;
mod serve;
mod store;
mod watch;
mod wire;

use std::sync::Arc;
use std::time::Duration;

pub use client::{ClientTasks, TaskHandle, TaskState, ToolCallStart};
pub use restart::Restartable;
pub use serve::OnRequest;
pub use store::{Admission, MemoryTaskStore, Status, TaskRecord, TaskStore, Transition};

/// How a task store names itself in its errors.
pub(crate) const STORE: &str = "task store";

/// The refusal of a write under a fencing token another instance's take-over replaced,
/// as tern's own stores say it.
pub(crate) fn lease_lost() -> crate::StoreError {
    crate::StoreError::lease_lost(STORE)
}

/// How many running tasks one principal may hold unless told otherwise
/// ([`Tasks::max_per_principal`]): far below any store's capacity, so that one caller
/// cannot fill it for everyone.
pub(crate) const DEFAULT_TASKS_PER_PRINCIPAL: usize = 100;

/// How many rounds a task's body may ask for input, unless [`Tasks::max_rounds`] says.
const DEFAULT_TASK_ROUNDS: usize = 100;

/// Whether a tool may run as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never: the call is answered inline (the default).
    #[default]
    Forbidden,
    /// When the request declares the extension; inline otherwise.
    Optional,
    /// Only as a task: a request that does not declare the extension is answered
    /// -32021 naming it, before the tool runs.
    Required,
}

/// How a server runs tasks: where they are kept and the timings it tells clients.
#[derive(Clone)]
pub struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) per_principal: usize,
    pub(crate) max_rounds: usize,
    /// The server whose tools run as these tasks (set when it is added to an
    /// [`McpServer`](crate::mcp::McpServer)): a restartable tool is run again from it.
    pub(crate) server: Arc<std::sync::OnceLock<crate::mcp::WeakMcpServer>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("lease", &self.lease)
            .field("per_principal", &self.per_principal)
            .field("max_rounds", &self.max_rounds)
            .finish_non_exhaustive()
    }
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new(MemoryTaskStore::default())
    }
}

impl Tasks {
    /// Tasks kept in `store`: an hour from creation, polled every second, each held by
    /// its instance on a 10-second lease.
    pub fn new(store: impl TaskStore) -> Self {
        Self {
            store: Arc::new(store),
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(10),
            per_principal: DEFAULT_TASKS_PER_PRINCIPAL,
            max_rounds: DEFAULT_TASK_ROUNDS,
            server: Arc::default(),
        }
    }

    /// How many live tasks (working or waiting for input) one principal may hold; one
    /// more is refused with an error naming this cap. Finished tasks do not count: when
    /// a principal starts a task, its finished ones past the same number are forgotten,
    /// the oldest first (before their TTL), so it keeps at most twice the cap in all
    /// (tasks that finished since its last start among them). Callers without authentication are told apart by their address (over
    /// tern's own HTTP accept loop; one principal together otherwise).
    pub fn max_per_principal(mut self, max: usize) -> Self {
        self.per_principal = max.max(1);
        self
    }

    /// How many rounds a task's body may ask for input (default 100): one more asking
    /// fails the task, -32603 "The task asked for input too many times".
    pub fn max_rounds(mut self, max: usize) -> Self {
        self.max_rounds = max;
        self
    }

    /// How long a task is kept after its creation (its `ttlMs`), finished or not.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How often clients are asked to poll (`pollIntervalMs`).
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every.max(Duration::from_millis(1));
        self
    }

    /// How long a running task stays `working` after its instance stops renewing it
    /// (renewed every third of it): past this, any instance reading the task takes it
    /// over if its tool is [restartable](TaskSupport::restartable), and marks it
    /// `failed` if not. The instance that lost it stops its body when it next renews.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A new task id: 128 random bits, URL-safe base64.
pub(crate) fn new_id() -> String {
    crate::util::random_id()
}

/// Whether `id` has the form [`new_id`] gives: 22 URL-safe base64 characters.
pub(crate) fn is_task_id(id: &str) -> bool {
    id.len() == 22
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `ms` since the Unix epoch as an ISO 8601 UTC timestamp with milliseconds.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_796_157_296_789), "2026-12-01T20:34:56.789Z");
    }

    #[test]
    fn ids_carry_128_random_bits() {
        let a = new_id();
        assert_eq!(a.len(), 22);
        assert!(is_task_id(&a));
        assert_ne!(a, new_id());
    }

    #[test]
    fn only_ids_of_that_form_are_looked_up() {
        assert!(!is_task_id("gate-test"));
        assert!(!is_task_id("AAAAAAAAAAAAAAAAAAAA:asks"));
        assert!(!is_task_id("AAAAAAAAAAAAAAAAAAAAA/"));
        assert!(!is_task_id(&"A".repeat(1 << 20)));
    }
}
