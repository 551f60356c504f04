//! The client's half of the tasks extension, on the client's extension seam
//! ([`ClientTasks`]): a call answered with `resultType: "task"` is polled with
//! `tasks/get` at the server's `pollIntervalMs`, its input requests answered by the
//! same callbacks through `tasks/update`, and its end returned as the call's result;
//! [`TaskHandle`] does the same by hand, for a task kept across processes.
//!
//! ```
//! use tern_mcp::client::Client;
//! use tern_mcp::tasks::ClientTasks;
//!
//! // Tool calls a server makes tasks are followed to their end: a call stays a call.
//! let builder = Client::builder("host", "1.0.0").extension(ClientTasks);
//! # let _ = builder;
//! ```

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::Error;
use crate::client::{Client, ClientExtension, Deferred, InputContext};
use crate::protocol::tasks::{CancelTask, EXTENSION, GetTask, UpdateTask, WithMeta};
use crate::transport::BoxFuture;
use crate::types::ext_tasks::{
    CancelTaskRequestParams, CreateTaskResult, GetTaskRequestParams, GetTaskResult,
    UpdateTaskRequestParams,
};
use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::{CallToolResult, InputRequests, InputResponses, method};

/// The tasks extension, spoken by a client ([`ClientBuilder::extension`](crate::client::ClientBuilder::extension)):
/// declared on every request, so that a server may make a tool call a task; the
/// automatic loop ([`Client::call_tool`]) then follows the task to its end, as if the
/// call had been synchronous, and cancels it if the call is dropped first.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientTasks;

impl ClientExtension for ClientTasks {
    fn id(&self) -> &'static str {
        EXTENSION
    }

    fn result_type(&self) -> Option<&'static str> {
        Some("task")
    }

    fn follow(&self, deferred: Deferred) -> BoxFuture<'static, crate::Result<Value>> {
        Box::pin(async move { await_task(TaskHandle::of(deferred)?).await })
    }
}

impl Client {
    /// Calls a tool, running its input rounds, and stops where the server makes the call
    /// a task (for a client that speaks [`ClientTasks`]): the [`TaskHandle`] can be kept
    /// (its id) and followed later, elsewhere.
    pub async fn start_tool_call(
        &self,
        name: impl Into<String>,
        arguments: impl Serialize,
    ) -> crate::Result<ToolCallStart> {
        let params = crate::client::tool_params(name, arguments)?;
        match self.run_until_deferred::<method::CallTool>(params).await? {
            Ok(result) => Ok(ToolCallStart::Done(Box::new(result))),
            Err(deferred) => TaskHandle::of(deferred).map(ToolCallStart::Task),
        }
    }

    /// The task `id` on this client's server (one created earlier, perhaps by another
    /// process), polled at one-second intervals until it says otherwise.
    pub fn task(&self, id: impl Into<String>) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            id: id.into(),
            poll: Duration::from_secs(1),
        }
    }
}

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

/// Follows `handle`'s task to its result as JSON, answering its input requests;
/// cancels it if this future is dropped first, or if the client gives up on it (its
/// round cap, an answer it cannot read) before it ended.
async fn await_task(handle: TaskHandle) -> crate::Result<Value> {
    let mut guard = CancelOnDrop(Some(handle.clone()));
    let mut ended = false;
    let outcome = handle.wait_value(&mut ended).await;
    if ended {
        // Followed to its end: nothing to cancel.
        guard.0 = None;
    }
    outcome
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
    /// The task a server made of a call, from the result the manual loop handed over
    /// ([`Step::Deferred`](crate::client::Step::Deferred)); refused unless it is a task
    /// (`resultType: "task"`) with its id.
    pub fn of(deferred: Deferred) -> crate::Result<TaskHandle> {
        let created: CreateTaskResult = match deferred.extension() {
            EXTENSION => serde_json::from_str(deferred.result()).map_err(|source| {
                Error::Protocol(crate::ProtocolError::Decode {
                    method: deferred.method(),
                    source,
                })
            })?,
            _ => return Err(deferred.unknown()),
        };
        Ok(TaskHandle {
            client: deferred.client().clone(),
            poll: poll_interval(created.poll_interval_ms),
            id: created.task_id,
        })
    }

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
        let about = id_of(&result);
        if about != self.id {
            let said = format!("it answered about task {about:?}, not {:?}", self.id);
            return Err(Error::Protocol(crate::ProtocolError::Decode {
                method: GetTask::METHOD,
                source: serde::de::Error::custom(said),
            }));
        }
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
        let value = self.wait_value(&mut false).await?;
        crate::client::read_followed(GetTask::METHOD, value)
    }

    /// Polls the task to its end, answering its questions; `ended` says whether it
    /// reached one (completed, failed or cancelled), whatever is returned.
    async fn wait_value(&self, ended: &mut bool) -> crate::Result<Value> {
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut rounds = 0usize;
        loop {
            let state = self.get().await?;
            *ended = matches!(
                state,
                TaskState::Completed(_) | TaskState::Failed(_) | TaskState::Cancelled
            );
            match state {
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
                        let asking = InputContext {
                            method: Some(method::CallTool::METHOD),
                            round: rounds,
                            task: Some(self.id.clone()),
                            ..Default::default()
                        };
                        let responses = self.client.answer(fresh, asking).await?;
                        self.update(responses).await?;
                        continue;
                    }
                }
            }
            tokio::time::sleep(self.poll).await;
        }
    }
}

/// The id of the task a `tasks/get` result is about.
fn id_of(result: &GetTaskResult) -> &str {
    match result {
        GetTaskResult::Working(t) => &t.task_id,
        GetTaskResult::InputRequired(t) => &t.task_id,
        GetTaskResult::Completed(t) => &t.task_id,
        GetTaskResult::Failed(t) => &t.task_id,
        GetTaskResult::Cancelled(t) => &t.task_id,
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
