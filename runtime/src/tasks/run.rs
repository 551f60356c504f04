//! A tool call running as a task: created durably, then its body driven round by round
//! on this instance (its input requests become the task's, the answers delivered through
//! `tasks/update` its next round's `inputResponses`), the lease renewed while it runs,
//! and its end written to the store.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::restart::Resume;
use super::{Admission, Status, TaskRecord, Tasks, Transition, millis, new_id, now_ms};
use crate::StoreError;
use crate::jsonrpc::RpcError;
use crate::protocol;
use crate::seal::Principal;
use crate::server::RequestContext;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{CallToolOutcome, ClientCapabilities, InputResponses, Outcome};

/// Who a request's caller is, as a task's owner: the principal sealing binds, as a
/// digest; the same (empty) owner for every unauthenticated caller, whose tasks are
/// reachable by their unguessable ids alone.
pub(crate) fn owner_of(ctx: &RequestContext) -> String {
    ctx.auth()
        .map(|a| Principal::from_auth(a).owner_key())
        .unwrap_or_default()
}

/// A JSON-RPC error as a failed task's `error`, as JSON text.
pub(crate) fn failure(e: &RpcError) -> String {
    serde_json::to_string(e)
        .unwrap_or_else(|_| r#"{"code":-32603,"message":"Internal error"}"#.to_owned())
}

/// One more round of the body: called with the answers and the state of the last.
pub(crate) type NextRound = crate::server::mcp::ToolBody;

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
                "Too many tasks: you hold {} live tasks, the most one caller may; \
                 wait for them to expire or cancel some",
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

/// The rounds a task's body may take: one that keeps asking is failed there.
const MAX_ROUNDS: u32 = 100;

/// How often a running body's instance looks for a cancellation and renews its lease.
fn watch_interval(tasks: &Tasks) -> Duration {
    (tasks.lease / 3).min(Duration::from_millis(200))
}

/// Drives task `id` in the background: `first` is the body's round under way, `next`
/// starts another. `cancel` is the body's token: cancelled when the task is. A
/// restartable task's `resume` is where it started, moved on as rounds are answered.
pub(crate) fn spawn(
    tasks: Tasks,
    id: String,
    capabilities: ClientCapabilities,
    cancel: CancellationToken,
    body: Body,
) {
    tokio::spawn(async move {
        let done = CancellationToken::new();
        tokio::spawn(keep_lease(
            tasks.clone(),
            id.clone(),
            cancel.clone(),
            done.clone(),
        ));
        let end = drive(&tasks, &id, &capabilities, &cancel, body).await;
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
        if let Err(e) = tasks.store.transition(&id, change).await {
            tracing::error!(task = %id, error = %e, "could not record a task's end");
        }
    });
}

/// Takes over task `record` (read through `ctx`'s request, whose caller owns it) if it
/// is restartable and its instance stopped, and runs its body again here; whether it
/// runs on (here or, having been taken by another instance first, there).
pub(crate) async fn take_over(
    tasks: &Tasks,
    ctx: &RequestContext,
    record: &TaskRecord,
) -> Result<bool, StoreError> {
    let Some(resume) = record
        .resume
        .as_deref()
        .and_then(|text| serde_json::from_str::<Resume>(text).ok())
    else {
        return Ok(false);
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
        return Ok(false);
    };
    let now = now_ms();
    if !tasks
        .store
        .take_over(&record.id, now, now.saturating_add(millis(tasks.lease)))
        .await?
    {
        // Another instance took it first, or it ended meanwhile: not ours to fail.
        return Ok(true);
    }
    tracing::info!(task = %record.id, tool = %resume.tool, rounds = resume.rounds, "took over a task whose instance stopped");
    let first = body.call(resume.responses.clone(), resume.state.clone());
    let capabilities = resume.capabilities.clone();
    let body = Body {
        first,
        next: body,
        resume: Some(resume),
    };
    spawn(tasks.clone(), record.id.clone(), capabilities, cancel, body);
    Ok(true)
}

/// Renews the lease until `done`, cancelling `cancel` when the task's cancellation is
/// asked for (or the task is gone or finished elsewhere).
async fn keep_lease(tasks: Tasks, id: String, cancel: CancellationToken, done: CancellationToken) {
    let every = watch_interval(&tasks);
    loop {
        tokio::select! {
            () = done.cancelled() => return,
            () = tasks.store.changed(&id, every) => {}
        }
        let until = now_ms().saturating_add(millis(tasks.lease));
        match tasks.store.renew(&id, until).await {
            Ok(true) => cancel.cancel(),
            Ok(false) => {}
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
    tasks: &Tasks,
    id: &str,
    capabilities: &ClientCapabilities,
    cancel: &CancellationToken,
    body: Body,
) -> End {
    let Body {
        first: mut round,
        next,
        mut resume,
    } = body;
    let (mut used, done): (BTreeSet<String>, u32) = resume
        .as_ref()
        .map(|r| (r.used.iter().cloned().collect(), r.rounds))
        .unwrap_or_default();
    for number in done + 1.. {
        // On a cancellation the body gets a moment to see its token and stop on its
        // own (releasing what it holds) before it is dropped; what it answers then does
        // not matter: the task was cancelled.
        let outcome = tokio::select! {
            o = &mut round => o,
            () = cancel.cancelled() => {
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut round).await;
                return End::Cancelled;
            }
        };
        if cancel.is_cancelled() {
            return End::Cancelled;
        }
        let asked = match outcome {
            Err(e) => return End::Failed(e),
            Ok(Outcome::Complete(result)) => {
                return match serde_json::to_string(&result) {
                    Ok(text) => End::Completed(text),
                    Err(e) => {
                        tracing::error!(task = %id, error = %e, "could not encode a task's result");
                        End::Failed(RpcError::internal("Internal error"))
                    }
                };
            }
            Ok(Outcome::InputRequired(asked)) => asked,
        };
        if number >= MAX_ROUNDS {
            tracing::warn!(task = %id, "a task's body asked for input {MAX_ROUNDS} times");
            return End::Failed(RpcError::internal(
                "The task asked for input too many times",
            ));
        }
        let requests = asked.input_requests.clone();
        if let Some(missing) = requests
            .as_ref()
            .and_then(|r| protocol::missing_capabilities(r, capabilities))
        {
            return End::Failed(RpcError::missing_capability(&missing));
        }
        let Some((asks, keys)) = task_keys(requests.as_ref(), &mut used, number) else {
            return End::Failed(RpcError::internal("Internal error"));
        };
        let answers = if asks.is_empty() {
            InputResponses::new()
        } else {
            match answers(tasks, id, cancel, asks, &keys).await {
                Ok(answers) => answers,
                Err(end) => return end,
            }
        };
        if let Some(moved) = resume.as_mut() {
            *moved = moved.at(&answers, asked.request_state.as_deref());
            moved.used = used.iter().cloned().collect();
            moved.rounds = number;
            checkpoint(tasks, id, moved).await;
        }
        round = next.call(Some(answers), asked.request_state);
    }
    End::Gone
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

/// Keeps `resume` as the task's restart point: the round its answers start.
async fn checkpoint(tasks: &Tasks, id: &str, resume: &Resume) {
    let mut change = Transition::to(Status::Working, now_ms());
    change.resume = resume.to_text();
    if let Err(e) = tasks.store.transition(id, change).await {
        tracing::warn!(task = %id, error = %e, "could not keep a task's restart point");
    }
}

/// Records `asks` (each with its task key) as the task's input requests and waits until
/// the client has answered every one of `keys` (task key to the body's key): the
/// answers under the body's keys, or how the task ended meanwhile.
async fn answers(
    tasks: &Tasks,
    id: &str,
    cancel: &CancellationToken,
    asks: Vec<(String, String)>,
    keys: &BTreeMap<String, String>,
) -> Result<InputResponses, End> {
    let mut change = Transition::to(Status::InputRequired, now_ms());
    change.asks = asks;
    match tasks.store.transition(id, change).await {
        Ok(true) => {}
        Ok(false) => return Err(End::Gone),
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
        let taken = match tasks.store.take_answers(id).await {
            Ok(taken) => taken,
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
