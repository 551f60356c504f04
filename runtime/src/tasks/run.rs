//! A tool call running as a task: created durably, then its body driven round by round
//! on this instance (its input requests become the task's, the answers delivered through
//! `tasks/update` its next round's `inputResponses`), the lease renewed while it runs,
//! and its end written to the store. Every write carries the lease's fencing token: an
//! instance whose task was taken over finds its renewal refused and stops its body,
//! and nothing it writes after is kept.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt as _;

use tokio_util::sync::CancellationToken;

use super::restart::Resume;
use super::{Admission, Status, TaskRecord, Tasks, Transition, millis, new_id, now_ms};
use crate::StoreError;
use crate::jsonrpc::RpcError;
use crate::protocol;
use crate::protocol::rounds::{Over, RoundLimits, Rounds, Step, drive as drive_rounds};
use crate::seal::Principal;
use crate::server::RequestContext;
use crate::server::caught_panic;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolOutcome, ClientCapabilities, InputRequiredResult, InputResponses, Outcome,
};

/// How an unauthenticated caller's owner starts: never a principal's (hex digits).
const ANONYMOUS: &str = "anon:";

/// Who a request's caller is, as a task's owner: the principal sealing binds, as a
/// digest; for an unauthenticated caller, its address (as listen streams tell callers
/// apart), so that each has its own cap; `anon:` alone when the transport knows none.
pub(crate) fn owner_of(ctx: &RequestContext) -> String {
    match (ctx.auth(), ctx.peer()) {
        (Some(auth), _) => Principal::from_auth(auth).owner_key(),
        (None, Some(ip)) => format!("{ANONYMOUS}{ip}"),
        (None, None) => ANONYMOUS.to_owned(),
    }
}

/// Whether `ctx`'s caller may see a task owned by `owner`: a principal its own; an
/// unauthenticated caller any unauthenticated caller's (from whatever address), whose
/// tasks are reachable by their unguessable ids alone.
pub(crate) fn may_see(ctx: &RequestContext, owner: &str) -> bool {
    match ctx.auth() {
        Some(auth) => owner == Principal::from_auth(auth).owner_key(),
        // "": stored before callers without credentials were told apart.
        None => owner.is_empty() || owner.starts_with(ANONYMOUS),
    }
}

/// A JSON-RPC error as a failed task's `error`, as JSON text.
pub(crate) fn failure(e: &RpcError) -> String {
    serde_json::to_string(e)
        .unwrap_or_else(|_| r#"{"code":-32603,"message":"Internal error"}"#.to_owned())
}

/// One more round of the body: called with the answers and the state of the last.
pub(crate) type NextRound = crate::mcp::ToolBody;

/// The code of a task refused at a cap: a JSON-RPC server error (-32000 to -32099 are
/// the implementation's own), with the message saying whose cap it was.
const TOO_MANY_TASKS: i64 = -32000;

/// Creates a task for `ctx`'s caller, `working`, and returns it once the store has it.
/// `resume` is a restartable task's first restart point.
pub(crate) async fn create(
    tasks: &Tasks,
    ctx: &RequestContext,
    resume: Option<String>,
) -> Result<TaskRecord, RpcError> {
    let now = now_ms();
    let record = TaskRecord {
        id: new_id(),
        owner: owner_of(ctx),
        status: Status::Working,
        message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms: millis(tasks.ttl),
        poll_interval_ms: millis(tasks.poll_interval),
        lease_ms: now.saturating_add(millis(tasks.lease)),
        fence: 0,
        asks: Vec::new(),
        result: None,
        error: None,
        cancel_requested: false,
        resume,
    };
    let admission = tasks
        .store
        .create(record.clone(), tasks.per_principal)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "could not create a task");
            RpcError::internal("Internal error")
        })?;
    match admission {
        Admission::Created => Ok(record),
        Admission::OwnerAtCap => Err(RpcError::new(
            TOO_MANY_TASKS,
            format!(
                "Too many tasks: you hold {} live tasks (working or waiting for input), \
                 the most one caller may; wait for one to finish or cancel some",
                tasks.per_principal
            ),
        )),
        // Refused like an overloaded server: nothing of this caller's is at fault.
        _ => Err(RpcError::new(
            TOO_MANY_TASKS,
            "Too many tasks: the server holds as many as it can; try again later",
        )),
    }
}

/// How long a cancelled body has to stop on its own before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// How often a running body's instance looks for a cancellation and renews its lease.
fn watch_interval(tasks: &Tasks) -> Duration {
    (tasks.lease / 3).min(Duration::from_millis(200))
}

/// Task `id` as this instance holds it: under the lease's fencing token `fence`.
#[derive(Clone)]
pub(crate) struct Held {
    pub(crate) tasks: Tasks,
    pub(crate) id: String,
    pub(crate) fence: u64,
}

impl Held {
    /// Applies `change` under this holding's token.
    async fn transition(&self, change: Transition) -> Result<bool, StoreError> {
        self.tasks
            .store
            .transition(&self.id, self.fence, change)
            .await
    }
}

/// Drives task `held` in the background: `first` is the body's round under way, `next`
/// starts another. `cancel` is the body's token: cancelled when the task is, or when
/// this instance loses its lease. A restartable task's `resume` is where it started,
/// moved on as rounds are answered.
pub(crate) fn spawn(
    held: Held,
    capabilities: ClientCapabilities,
    cancel: CancellationToken,
    body: Body,
) {
    tokio::spawn(async move {
        let done = CancellationToken::new();
        tokio::spawn(keep_lease(held.clone(), cancel.clone(), done.clone()));
        // A body that panics fails its task (-32603, the panic logged and counted), as a
        // request's would be answered: left running, its lease renewed, it would read
        // `working` and hold its caller's place until this instance ends.
        let end = AssertUnwindSafe(drive(&held, &capabilities, &cancel, body))
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| End::Failed(caught_panic(&*panic)));
        done.cancel();
        let mut change = Transition::to(Status::Cancelled, now_ms());
        match end {
            End::Cancelled => {}
            End::Completed(result) => {
                change.status = Status::Completed;
                change.result = Some(result);
            }
            End::Failed(e) => {
                change.status = Status::Failed;
                change.message = Some(e.message.clone());
                change.error = Some(failure(&e));
            }
            End::Gone => return,
        }
        match held.transition(change).await {
            Err(e) if e.is_lease_lost() => {
                tracing::warn!(task = %held.id, "another instance took this task over: this body's end is not kept");
            }
            Err(e) => tracing::error!(task = %held.id, error = %e, "could not record a task's end"),
            Ok(_) => {}
        }
    });
}

/// Runs task `record` (read through `ctx`'s request, whose caller owns it) again here,
/// held under `fence` (just taken over), if it is restartable and its tool is served
/// here; whether it runs.
pub(crate) fn restart(
    tasks: &Tasks,
    ctx: &RequestContext,
    record: &TaskRecord,
    fence: u64,
) -> bool {
    let Some(resume) = record
        .resume
        .as_deref()
        .and_then(|text| serde_json::from_str::<Resume>(text).ok())
    else {
        return false;
    };
    let cancel = CancellationToken::new();
    let Some(body) = tasks
        .server
        .get()
        .and_then(|weak| weak.upgrade())
        .and_then(|server| {
            server.tool_body(
                &resume.tool,
                ctx.for_task(cancel.clone()),
                resume.arguments.clone(),
            )
        })
    else {
        tracing::warn!(task = %record.id, tool = %resume.tool, "a restartable task's tool is not served here");
        return false;
    };
    tracing::info!(task = %record.id, tool = %resume.tool, rounds = resume.rounds, fence, "took over a task whose instance stopped");
    let first = body.call(resume.responses.clone(), resume.state.clone());
    let capabilities = resume.capabilities.clone();
    let body = Body {
        first,
        next: body,
        resume: Some(resume),
    };
    let held = Held {
        tasks: tasks.clone(),
        id: record.id.clone(),
        fence,
    };
    spawn(held, capabilities, cancel, body);
    true
}

/// Renews the lease until `done`, cancelling `cancel` when the task's cancellation is
/// asked for (or the task is gone or finished elsewhere), or when another instance took
/// it over (the renewal refused: its lease lost).
async fn keep_lease(held: Held, cancel: CancellationToken, done: CancellationToken) {
    let Held { tasks, id, fence } = held;
    let every = watch_interval(&tasks);
    loop {
        tokio::select! {
            () = done.cancelled() => return,
            () = tasks.store.changed(&id, every) => {}
        }
        let until = now_ms().saturating_add(millis(tasks.lease));
        match tasks.store.renew(&id, fence, until).await {
            Ok(true) => cancel.cancel(),
            Ok(false) => {}
            Err(e) if e.is_lease_lost() => {
                tracing::warn!(task = %id, fence, "lost the lease on a task to another instance: its body here is stopped");
                cancel.cancel();
                return;
            }
            Err(e) => tracing::warn!(task = %id, error = %e, "could not renew a task's lease"),
        }
    }
}

enum End {
    Completed(String),
    Failed(RpcError),
    Cancelled,
    /// The task is no longer this body's to finish (expired, or ended elsewhere).
    Gone,
}

/// A task's body: its round under way, how to start the next, and (restartable) where
/// it would start again.
pub(crate) struct Body {
    pub(crate) first: BoxFuture<'static, Result<CallToolOutcome, RpcError>>,
    pub(crate) next: NextRound,
    pub(crate) resume: Option<Resume>,
}

async fn drive(
    held: &Held,
    capabilities: &ClientCapabilities,
    cancel: &CancellationToken,
    body: Body,
) -> End {
    let Body {
        first,
        next,
        resume,
    } = body;
    // A task started again goes on from the round it had reached.
    let (used, done) = resume
        .as_ref()
        .map(|r| (r.used.iter().cloned().collect(), r.rounds))
        .unwrap_or_default();
    let mut rounds = TaskRounds {
        held,
        capabilities,
        cancel,
        next,
        resume,
        used,
        done,
    };
    let limits = RoundLimits {
        max_rounds: held.tasks.max_rounds.saturating_sub(done as usize),
        max_questions: usize::MAX,
        deadline: None,
        concurrency: 1,
    };
    let first = match rounds.settle(first).await {
        Ok(first) => first,
        Err(end) => return end,
    };
    match drive_rounds(&mut rounds, &limits, first).await {
        Ok(result) => End::Completed(result),
        Err(end) => end,
    }
}

/// A task's body, round by round: its questions become the task's, answered through
/// `tasks/update`; a restartable task's restart point is written after each round.
struct TaskRounds<'a> {
    held: &'a Held,
    capabilities: &'a ClientCapabilities,
    cancel: &'a CancellationToken,
    next: NextRound,
    resume: Option<Resume>,
    /// The task keys asked so far, over the task's life.
    used: BTreeSet<String>,
    /// The rounds answered before this instance took the task on.
    done: u32,
}

impl TaskRounds<'_> {
    /// The body's round run to its answer. On a cancellation the body gets a moment to
    /// see its token and stop on its own (releasing what it holds) before it is
    /// dropped; what it answers then does not matter: the task was cancelled.
    async fn settle(
        &self,
        mut round: BoxFuture<'static, Result<CallToolOutcome, RpcError>>,
    ) -> Result<Step<String>, End> {
        let outcome = tokio::select! {
            o = &mut round => o,
            () = self.cancel.cancelled() => {
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut round).await;
                return Err(End::Cancelled);
            }
        };
        if self.cancel.is_cancelled() {
            return Err(End::Cancelled);
        }
        match outcome.map_err(End::Failed)? {
            Outcome::Complete(result) => match serde_json::to_string(&result) {
                Ok(text) => Ok(Step::Done(text)),
                Err(e) => {
                    tracing::error!(task = %self.held.id, error = %e, "could not encode a task's result");
                    Err(End::Failed(RpcError::internal("Internal error")))
                }
            },
            Outcome::InputRequired(asked) => Ok(Step::Asked(asked)),
        }
    }
}

impl Rounds for TaskRounds<'_> {
    type Done = String;
    type Error = End;

    /// The round's questions become the task's, answered through `tasks/update` (a
    /// restartable task's restart point written after), then the body's next round.
    async fn next(
        &mut self,
        round: usize,
        asked: InputRequiredResult,
        _limits: &RoundLimits,
    ) -> Result<Step<String>, End> {
        let held = self.held;
        let number = self.done + u32::try_from(round).unwrap_or(u32::MAX);
        let requests = asked.input_requests.as_ref();
        if let Some(missing) =
            requests.and_then(|r| protocol::missing_capabilities(r, self.capabilities))
        {
            return Err(End::Failed(RpcError::missing_capability(&missing)));
        }
        let Some((asks, keys)) = task_keys(requests, &mut self.used, number) else {
            return Err(End::Failed(RpcError::internal("Internal error")));
        };
        let answers = if asks.is_empty() {
            InputResponses::new()
        } else {
            answers(held, self.cancel, asks, &keys).await?
        };
        if let Some(moved) = self.resume.as_mut() {
            *moved = moved.at(&answers, asked.request_state.as_deref());
            moved.used = self.used.iter().cloned().collect();
            moved.rounds = number;
            checkpoint(held, moved).await?;
        }
        let round = self.next.call(Some(answers), asked.request_state);
        self.settle(round).await
    }

    fn over(&self, over: Over) -> End {
        tracing::warn!(task = %self.held.id, ?over, "a task's body asked for input too many times");
        End::Failed(RpcError::internal(
            "The task asked for input too many times",
        ))
    }
}

/// The round's `requests` under their task keys (as JSON text), and each task key's
/// key in the body's round. Keys are unique over the task's life (`used`): one the
/// body asks again gets the round's number. `None` if a request does not encode.
#[expect(clippy::type_complexity, reason = "the two halves of one round's keys")]
fn task_keys(
    requests: Option<&crate::types::v2026_07_28::InputRequests>,
    used: &mut BTreeSet<String>,
    number: u32,
) -> Option<(Vec<(String, String)>, BTreeMap<String, String>)> {
    let mut keys = BTreeMap::new();
    let mut asks = Vec::new();
    for (key, request) in requests.iter().flat_map(|r| r.iter()) {
        let mut task_key = key.clone();
        if used.contains(&task_key) {
            task_key = format!("{key}#{number}");
        }
        used.insert(task_key.clone());
        let text = serde_json::to_string(request).ok()?;
        keys.insert(task_key.clone(), key.clone());
        asks.push((task_key, text));
    }
    Some((asks, keys))
}

/// Keeps `resume` as the task's restart point: the round its answers start; `Gone`
/// when the task is not this instance's any more.
async fn checkpoint(held: &Held, resume: &Resume) -> Result<(), End> {
    let mut change = Transition::to(Status::Working, now_ms());
    change.resume = resume.to_text();
    match held.transition(change).await {
        Err(e) if e.is_lease_lost() => Err(End::Gone),
        Err(e) => {
            tracing::warn!(task = %held.id, error = %e, "could not keep a task's restart point");
            Ok(())
        }
        Ok(_) => Ok(()),
    }
}

/// Records `asks` (each with its task key) as the task's input requests and waits until
/// the client has answered every one of `keys` (task key to the body's key): the
/// answers under the body's keys, or how the task ended meanwhile.
async fn answers(
    held: &Held,
    cancel: &CancellationToken,
    asks: Vec<(String, String)>,
    keys: &BTreeMap<String, String>,
) -> Result<InputResponses, End> {
    let Held { tasks, id, fence } = held;
    let mut change = Transition::to(Status::InputRequired, now_ms());
    change.asks = asks;
    match held.transition(change).await {
        Ok(true) => {}
        Ok(false) => return Err(End::Gone),
        Err(e) if e.is_lease_lost() => return Err(End::Gone),
        Err(e) => {
            tracing::error!(task = %id, error = %e, "could not record a task's input requests");
            return Err(End::Failed(RpcError::internal("Internal error")));
        }
    }
    let mut answers = InputResponses::new();
    while answers.len() < keys.len() {
        tokio::select! {
            () = tasks.store.changed(id, watch_interval(tasks)) => {}
            () = cancel.cancelled() => return Err(End::Cancelled),
        }
        let taken = match tasks.store.take_answers(id, *fence).await {
            Ok(taken) => taken,
            Err(e) if e.is_lease_lost() => return Err(End::Gone),
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "could not read a task's answers");
                continue;
            }
        };
        for (task_key, text) in taken {
            let (Some(key), Ok(value)) = (
                keys.get(&task_key),
                serde_json::from_str::<&serde_json::value::RawValue>(&text),
            ) else {
                continue;
            };
            // A delivered answer was checked when it came, and its key is a string:
            // this cannot fail.
            let _ = answers.insert_raw(key.clone(), value);
        }
    }
    Ok(answers)
}
