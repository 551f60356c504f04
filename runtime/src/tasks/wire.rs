//! The tasks methods served: `tasks/get`, `tasks/update` and `tasks/cancel` (their
//! markers in [`protocol::tasks`](crate::protocol::tasks)), their handlers, and a stored
//! task written as the extension's types.

use serde_json::{Map, Value};

use super::{Status, TaskRecord, Tasks, iso8601, now_ms};
use crate::jsonrpc::RpcError;
use crate::protocol::tasks::EXTENSION;
use crate::protocol::tasks::{CancelTask, GetTask, UpdateTask, WithMeta};
use crate::server::RequestContext;
use crate::types::ext_tasks as ext;
use crate::types::v2026_07_28::{ClientCapabilities, ErrorObject, InputRequests, InputResponse};

/// Whether `caps` declare the tasks extension.
pub(crate) fn declares(caps: &ClientCapabilities) -> bool {
    caps.extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(EXTENSION))
}

/// -32021 naming the tasks extension.
pub(crate) fn extension_required() -> RpcError {
    let mut required = ClientCapabilities::new();
    let mut extensions = std::collections::BTreeMap::new();
    extensions.insert(EXTENSION.to_owned(), Map::new());
    required.extensions = Some(extensions);
    RpcError::missing_capability(&required)
}

fn unknown_task() -> RpcError {
    RpcError::invalid_params("Unknown task")
}

fn store_failed(e: crate::StoreError) -> RpcError {
    tracing::error!(error = %e, "the task store failed");
    RpcError::internal("Internal error")
}

/// The task `id` as `ctx`'s caller may see it: after the capability check, unknown
/// unless it exists and the caller created it. A task whose lease lapsed is taken over
/// here if restartable, else marked `failed` first.
async fn visible(tasks: &Tasks, ctx: &RequestContext, id: &str) -> Result<TaskRecord, RpcError> {
    if !declares(ctx.client_capabilities()) {
        return Err(extension_required());
    }
    // Only what tern hands out reaches the store: no crafted key (`x:asks`), no
    // megabyte-long id.
    if !super::is_task_id(id) {
        return Err(unknown_task());
    }
    let record = tasks
        .store
        .get(id)
        .await
        .map_err(store_failed)?
        .filter(|r| super::run::may_see(ctx, &r.owner))
        .ok_or_else(unknown_task)?;
    settle(tasks, ctx, record).await
}

/// Whether `record`'s instance stopped: not terminal, its lease lapsed.
pub(crate) fn lapsed(record: &TaskRecord) -> bool {
    !record.status.is_terminal() && record.lease_ms < now_ms()
}

/// `record` as it stands once a lapsed lease is settled: taken over here (read through
/// `ctx`, whose caller owns it) and run again if it is restartable, else marked
/// `failed` under the lease taken; as it was when another instance took it first.
pub(crate) async fn settle(
    tasks: &Tasks,
    ctx: &RequestContext,
    record: TaskRecord,
) -> Result<TaskRecord, RpcError> {
    if !lapsed(&record) {
        return Ok(record);
    }
    let id = record.id.as_str();
    let now = now_ms();
    let until = now.saturating_add(super::millis(tasks.lease));
    let Some(fence) = tasks
        .store
        .take_over(id, now, until)
        .await
        .map_err(store_failed)?
    else {
        // Another instance took it first, or it ended meanwhile: not ours to settle.
        return Ok(record);
    };
    if super::run::restart(tasks, ctx, &record, fence) {
        return Ok(record);
    }
    let stopped = "The server instance running the task stopped";
    let mut change = super::Transition::to(Status::Failed, now);
    change.error = Some(super::run::failure(&RpcError::internal(stopped)));
    change.message = Some(stopped.into());
    tasks
        .store
        .transition(id, fence, change)
        .await
        .map_err(store_failed)?;
    tasks
        .store
        .get(id)
        .await
        .map_err(store_failed)?
        .ok_or_else(unknown_task)
}

pub(crate) async fn get(
    tasks: Tasks,
    ctx: RequestContext,
    params: WithMeta<ext::GetTaskRequestParams>,
) -> Result<ext::GetTaskResult, RpcError> {
    let record = visible(&tasks, &ctx, &params.params.task_id).await?;
    detailed(&record)
}

pub(crate) async fn update(
    tasks: Tasks,
    ctx: RequestContext,
    params: WithMeta<ext::UpdateTaskRequestParams>,
) -> Result<ext::UpdateTaskResult, RpcError> {
    let id = params.params.task_id.as_str();
    let record = visible(&tasks, &ctx, id).await?;
    let mut answers = Vec::new();
    // Answers to keys not outstanding are ignored unread; the others must be answers to
    // what was asked.
    for (key, value) in params.params.input_responses.iter() {
        let Some((_, asked)) = record.asks.iter().find(|(k, _)| *k == key) else {
            continue;
        };
        let method = serde_json::from_str::<Value>(asked)
            .ok()
            .and_then(|a| a.get("method").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        InputResponse::decode_for(&method, value).map_err(|e| {
            RpcError::invalid_params(format!("The answer to {key} is not a {method} result: {e}"))
        })?;
        answers.push((key.into_owned(), value.get().to_owned()));
    }
    if !answers.is_empty() {
        tasks
            .store
            .deliver(id, answers, now_ms())
            .await
            .map_err(store_failed)?;
    }
    Ok(ext::UpdateTaskResult::new())
}

pub(crate) async fn cancel(
    tasks: Tasks,
    ctx: RequestContext,
    params: WithMeta<ext::CancelTaskRequestParams>,
) -> Result<ext::CancelTaskResult, RpcError> {
    let id = params.params.task_id.as_str();
    let record = visible(&tasks, &ctx, id).await?;
    if !record.status.is_terminal() {
        tasks.store.request_cancel(id).await.map_err(store_failed)?;
    }
    Ok(ext::CancelTaskResult::new())
}

fn status_of(status: Status) -> ext::TaskStatus {
    match status {
        Status::Working => ext::TaskStatus::Working,
        Status::InputRequired => ext::TaskStatus::InputRequired,
        Status::Completed => ext::TaskStatus::Completed,
        Status::Failed => ext::TaskStatus::Failed,
        Status::Cancelled => ext::TaskStatus::Cancelled,
    }
}

/// The `CreateTaskResult` of a task just created.
pub(crate) fn created(record: &TaskRecord) -> ext::CreateTaskResult {
    let mut result = ext::CreateTaskResult::new(
        iso8601(record.created_ms),
        iso8601(record.updated_ms),
        status_of(record.status),
        record.id.clone(),
    );
    result.ttl_ms = i64::try_from(record.ttl_ms).ok();
    result.poll_interval_ms = i64::try_from(record.poll_interval_ms).ok();
    result.status_message = record.message.clone();
    result
}

fn invalid_record(what: &str, e: serde_json::Error) -> RpcError {
    tracing::error!(error = %e, "a stored task's {what} is not what was stored");
    RpcError::internal("Internal error")
}

/// The `tasks/get` result for a stored task.
pub(crate) fn detailed(record: &TaskRecord) -> Result<ext::GetTaskResult, RpcError> {
    let created = iso8601(record.created_ms);
    let updated = iso8601(record.updated_ms);
    let id = record.id.clone();
    macro_rules! fill {
        ($v:expr) => {{
            let mut v = $v;
            v.ttl_ms = i64::try_from(record.ttl_ms).ok();
            v.poll_interval_ms = i64::try_from(record.poll_interval_ms).ok();
            v.status_message = record.message.clone();
            v.into()
        }};
    }
    Ok(match record.status {
        Status::Working => fill!(ext::GetTaskResultWorkingTask::new(created, updated, id)),
        Status::Cancelled => fill!(ext::GetTaskResultCancelledTask::new(created, updated, id)),
        Status::InputRequired => {
            let mut requests = Map::new();
            for (key, asked) in &record.asks {
                let value =
                    serde_json::from_str(asked).map_err(|e| invalid_record("request", e))?;
                requests.insert(key.clone(), value);
            }
            let requests: InputRequests = serde_json::from_value(Value::Object(requests))
                .map_err(|e| invalid_record("requests", e))?;
            fill!(ext::GetTaskResultInputRequiredTask::new(
                created, requests, updated, id
            ))
        }
        Status::Completed => {
            let result = record.result.as_deref().unwrap_or("{}");
            let result = serde_json::from_str(result).map_err(|e| invalid_record("result", e))?;
            fill!(ext::GetTaskResultCompletedTask::new(
                created, updated, result, id
            ))
        }
        Status::Failed => {
            let error = record.error.as_deref().unwrap_or("{}");
            let error: ErrorObject =
                serde_json::from_str(error).map_err(|e| invalid_record("error", e))?;
            fill!(ext::GetTaskResultFailedTask::new(
                created, error, updated, id
            ))
        }
    })
}

/// `builder` with the tasks methods served from `tasks`.
pub(crate) fn routes(
    builder: crate::server::ServerBuilder,
    tasks: &Tasks,
) -> crate::server::ServerBuilder {
    let (t1, t2, t3) = (tasks.clone(), tasks.clone(), tasks.clone());
    builder
        .handle::<GetTask, _, _>(move |ctx, params| get(t1.clone(), ctx, params))
        .handle::<UpdateTask, _, _>(move |ctx, params| update(t2.clone(), ctx, params))
        .handle::<CancelTask, _, _>(move |ctx, params| cancel(t3.clone(), ctx, params))
}
