//! Tasks on the client: a call answered with `resultType: "task"` is polled with
//! `tasks/get` at the server's `pollIntervalMs`, its input requests answered by the
//! same callbacks through `tasks/update`, and its end returned as the call's result;
//! [`TaskHandle`] does the same by hand, for a task kept across processes.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::Client;
use crate::Error;
use crate::protocol::tasks::{CancelTask, GetTask, UpdateTask, WithMeta};
use crate::types::ext_tasks::{
    CancelTaskRequestParams, CreateTaskResult, GetTaskRequestParams, GetTaskResult,
    UpdateTaskRequestParams,
};
use crate::types::v2026_07_28::{CallToolResult, InputRequests, InputResponses};

/// The shortest poll interval the client honours: a server asking for less gets this.
const MIN_POLL: Duration = Duration::from_millis(20);
/// The longest: a server asking for more is polled this often anyway.
const MAX_POLL: Duration = Duration::from_secs(30);

/// A task on a server, by its id: what [`Client::start_tool_call`] returns for a call
/// the server made a task, or [`Client::task`] makes from an id kept elsewhere.
#[derive(Clone, Debug)]
pub struct TaskHandle {
    client: Client,
    id: String,
    poll: Duration,
}

/// How a tool call started: done, or a task to follow.
#[derive(Debug)]
pub enum ToolCallStart {
    /// The call completed (after any input rounds) without becoming a task.
    Done(Box<CallToolResult>),
    /// The server made the call a task.
    Task(TaskHandle),
}

/// A task's state as `tasks/get` reports it, in the client's terms.
#[derive(Debug)]
pub enum TaskState {
    /// Running.
    Working,
    /// Waiting for answers to these requests (through [`TaskHandle::update`]).
    InputRequired(InputRequests),
    /// Finished with this result (JSON: the original request's result).
    Completed(Value),
    /// Failed with this JSON-RPC error.
    Failed(crate::jsonrpc::RpcError),
    /// Cancelled.
    Cancelled,
}

/// The work of [`Client::task`].
pub(super) fn task(client: &Client, id: impl Into<String>) -> TaskHandle {
    TaskHandle {
        client: client.clone(),
        id: id.into(),
        poll: Duration::from_secs(1),
    }
}

/// Follows the task `created` to its result as JSON, answering its input requests;
/// cancels it if this future is dropped first.
pub(super) async fn await_task(client: &Client, created: CreateTaskResult) -> crate::Result<Value> {
    let handle = handle_of(client, created);
    let mut guard = CancelOnDrop(Some(handle.clone()));
    let outcome = handle.wait_value().await;
    // Followed to its end: nothing to cancel.
    guard.0 = None;
    outcome
}

pub(super) fn handle_of(client: &Client, created: CreateTaskResult) -> TaskHandle {
    TaskHandle {
        client: client.clone(),
        poll: poll_interval(created.poll_interval_ms),
        id: created.task_id,
    }
}

/// The task a result announces (`resultType: "task"`), if it is one.
pub(super) fn created_task(
    raw: &crate::jsonrpc::RawResult,
) -> crate::Result<Option<CreateTaskResult>> {
    let [result_type] = crate::types::rpc::members(raw.get(), ["resultType"]);
    if result_type != Some(r#""task""#) {
        return Ok(None);
    }
    serde_json::from_str(raw.get()).map(Some).map_err(|source| {
        Error::Protocol(crate::ProtocolError::Decode {
            method:
                <crate::types::v2026_07_28::method::CallTool as crate::types::rpc::Request>::METHOD,
            source,
        })
    })
}

fn poll_interval(ms: Option<i64>) -> Duration {
    let ms = ms.and_then(|m| u64::try_from(m).ok()).unwrap_or(1000);
    Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL)
}

/// Cancels the task when the call following it is dropped (a timeout, a caller that
/// gave up): nobody would read its result.
struct CancelOnDrop(Option<TaskHandle>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(handle) = self.0.take() else { return };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = handle.cancel().await {
                    tracing::debug!(task = %handle.id, error = %e, "could not cancel an abandoned task");
                }
            });
        }
    }
}

impl TaskHandle {
    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `tasks/get`: the task as the server sees it now.
    pub async fn get(&self) -> crate::Result<TaskState> {
        let params = WithMeta::new(GetTaskRequestParams::new(self.id.clone()));
        let result = self
            .client
            .send::<GetTask>(&params, Some(&self.id), None)
            .await?;
        Ok(state_of(result))
    }

    /// `tasks/update`: answers some or all of the outstanding input requests.
    pub async fn update(&self, responses: InputResponses) -> crate::Result<()> {
        let params = WithMeta::new(UpdateTaskRequestParams::new(responses, self.id.clone()));
        self.client
            .send::<UpdateTask>(&params, Some(&self.id), None)
            .await
            .map(drop)
    }

    /// `tasks/cancel`: asks the server to stop the task (it may finish first).
    pub async fn cancel(&self) -> crate::Result<()> {
        let params = WithMeta::new(CancelTaskRequestParams::new(self.id.clone()));
        self.client
            .send::<CancelTask>(&params, Some(&self.id), None)
            .await
            .map(drop)
    }

    /// Polls the task to its end, answering its input requests with the client's
    /// callbacks, and returns its result as a tool's.
    pub async fn wait(&self) -> crate::Result<CallToolResult> {
        let value = self.wait_value().await?;
        serde_json::from_value(value).map_err(|source| {
            Error::Protocol(crate::ProtocolError::Decode {
                method: <GetTask as crate::types::rpc::Request>::METHOD,
                source,
            })
        })
    }

    async fn wait_value(&self) -> crate::Result<Value> {
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut rounds = 0usize;
        loop {
            match self.get().await? {
                TaskState::Completed(result) => return Ok(result),
                TaskState::Failed(e) => return Err(Error::Rpc(Box::new(e))),
                TaskState::Cancelled => return Err(Error::TaskCancelled(self.id.clone())),
                TaskState::Working => {}
                TaskState::InputRequired(requests) => {
                    // Keys are unique over a task's life: one answered already is the
                    // server's lag, not a new question.
                    let fresh = InputRequests(
                        requests
                            .0
                            .into_iter()
                            .filter(|(k, _)| !answered.contains(k))
                            .collect(),
                    );
                    if !fresh.is_empty() {
                        rounds += 1;
                        let max_rounds = self.client.input_required_max_rounds();
                        if rounds > max_rounds {
                            return Err(Error::Input(crate::InputError::RoundsExceeded {
                                max_rounds,
                            }));
                        }
                        answered.extend(fresh.keys().cloned());
                        let asking = super::InputContext {
                            method: Some(<crate::types::v2026_07_28::method::CallTool as crate::types::rpc::Request>::METHOD),
                            round: rounds,
                            task: Some(self.id.clone()),
                            server: self.client.inner.server_name.clone(),
                            ..Default::default()
                        };
                        let responses = self
                            .client
                            .inner
                            .callbacks
                            .answer_all(fresh, asking, &self.client.inner.rounds)
                            .await?;
                        self.update(responses).await?;
                        continue;
                    }
                }
            }
            tokio::time::sleep(self.poll).await;
        }
    }
}

fn state_of(result: GetTaskResult) -> TaskState {
    match result {
        GetTaskResult::Working(_) => TaskState::Working,
        GetTaskResult::InputRequired(t) => TaskState::InputRequired(t.input_requests),
        GetTaskResult::Completed(t) => TaskState::Completed(Value::Object(t.result)),
        GetTaskResult::Failed(t) => TaskState::Failed(crate::jsonrpc::RpcError {
            code: t.error.code,
            message: t.error.message,
            data: t.error.data,
        }),
        GetTaskResult::Cancelled(_) => TaskState::Cancelled,
    }
}
