//! The tasks extension on the server's extension seam: declared, its methods routed,
//! the calls of tools that may run as tasks taken (inline, a task from the start, or
//! inline until the tool asks), and `notifications/tasks` on listen streams.

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::restart::{Restartable, Resume};
use super::watch::Watch;
use super::{TaskRecord, TaskSupport, Tasks, run, wire};
use crate::jsonrpc::RpcError;
use crate::mcp::Detaching;
use crate::mcp::{ListenFeed, McpExtension, ToolHandoff, ToolReply, ToolSetting};
use crate::protocol::tasks::EXTENSION;
use crate::server::{ProtocolExtension, RequestContext, ServerBuilder};
use crate::transport::BoxFuture;
use crate::types::ext_tasks::method::TaskStatus;
use crate::types::rpc::Notification as _;
use crate::types::v2026_07_28::SubscriptionFilter;

/// A tool that may run as a task, run inline until it asks
/// ([`ToolContext::continue_as_task`](crate::mcp::ToolContext::continue_as_task)):
/// what [`TaskSupport::on_request`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnRequest(pub TaskSupport);

impl TaskSupport {
    /// This support, for a call that runs inline (answering its input rounds as MRTR
    /// rounds) until the tool calls
    /// [`continue_as_task`](crate::mcp::ToolContext::continue_as_task): from there it
    /// is a task, answered with `resultType: "task"`, and the tool runs on.
    pub const fn on_request(self) -> OnRequest {
        OnRequest(self)
    }
}

impl ToolSetting for TaskSupport {
    const EXTENSION: &'static str = EXTENSION;
}

impl ToolSetting for OnRequest {
    const EXTENSION: &'static str = EXTENSION;
}

impl ProtocolExtension for Tasks {
    fn id(&self) -> &'static str {
        EXTENSION
    }

    fn routes(&self, server: ServerBuilder) -> ServerBuilder {
        wire::routes(server, self)
    }
}

impl McpExtension for Tasks {
    fn register(&self, server: &crate::mcp::McpServer) {
        let _ = self.server.set(server.downgrade());
    }

    fn call_tool(&self, call: ToolHandoff) -> BoxFuture<'static, Result<ToolReply, RpcError>> {
        let (support, on_request, restartable) = if let Some(OnRequest(s)) = call.setting() {
            (*s, true, false)
        } else if let Some(Restartable(s)) = call.setting() {
            (*s, false, true)
        } else {
            (call.setting().copied().unwrap_or_default(), false, false)
        };
        // Never on a 2025-11-25 session: its client cannot have declared the extension.
        let ctx = call.context();
        let declared =
            ctx.era() == crate::Era::Stateless && wire::declares(ctx.client_capabilities());
        match (support, declared) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => {
                Box::pin(async move { call.run().await.map(ToolReply::Result) })
            }
            (TaskSupport::Required, false) => Box::pin(async { Err(wire::extension_required()) }),
            (_, true) => {
                let on_request = on_request && call.can_detach();
                Box::pin(as_task(self.clone(), call, on_request, restartable))
            }
        }
    }

    fn listen(
        &self,
        ctx: &RequestContext,
        filter: &SubscriptionFilter,
    ) -> BoxFuture<'static, Result<Option<Box<dyn ListenFeed>>, RpcError>> {
        if !filter.extra.contains_key("taskIds") {
            return Box::pin(async { Ok(None) });
        }
        let (tasks, ctx, filter) = (self.clone(), ctx.clone(), filter.clone());
        Box::pin(async move {
            let watch = Watch::start(&tasks, &ctx, &filter).await?;
            Ok(Some(Box::new(watch) as Box<dyn ListenFeed>))
        })
    }
}

/// Runs `call` as a task: made one now, or (`on_request`) when its body asks.
async fn as_task(
    tasks: Tasks,
    call: ToolHandoff,
    on_request: bool,
    restartable: bool,
) -> Result<ToolReply, RpcError> {
    let ctx = call.context().clone();
    let cancel = CancellationToken::new();
    let task_ctx = ctx.for_task(cancel.clone());
    let capabilities = ctx.client_capabilities().clone();
    if !on_request {
        let (body, (responses, state)) = call.detach(task_ctx);
        let resume = restartable
            .then(|| Resume::new(&body, &capabilities, responses.clone(), state.clone()));
        let text = resume.as_ref().and_then(Resume::to_text);
        let record = run::create(&tasks, &ctx, text).await?;
        let first = body.call(responses, state);
        let body = run::Body {
            first,
            next: body,
            resume,
        };
        run::spawn(held(tasks, &record), capabilities, cancel, body);
        return created(&record);
    }
    match call.run_until_detached(task_ctx, cancel.clone()).await {
        Detaching::Finished(outcome) => outcome.map(ToolReply::Result),
        Detaching::Asked(asked) => {
            let record = match run::create(&tasks, &ctx, None).await {
                Ok(record) => record,
                Err(e) => {
                    asked.refuse(e.clone());
                    return Err(e);
                }
            };
            let (first, next) = asked.accept();
            let body = run::Body {
                first,
                next,
                resume: None,
            };
            run::spawn(held(tasks, &record), capabilities, cancel, body);
            created(&record)
        }
    }
}

/// Task `record`, just created, as its creator holds it.
fn held(tasks: Tasks, record: &TaskRecord) -> run::Held {
    run::Held {
        tasks,
        id: record.id.clone(),
        fence: record.fence,
    }
}

/// The answer to a call made task `record`.
fn created(record: &TaskRecord) -> Result<ToolReply, RpcError> {
    serde_json::value::to_raw_value(&wire::created(record))
        .map(ToolReply::Instead)
        .map_err(|e| {
            tracing::error!(error = %e, "could not encode a created task");
            RpcError::internal("Internal error")
        })
}

impl ListenFeed for Watch {
    fn accepted(&self) -> Map<String, Value> {
        let mut accepted = Map::new();
        accepted.insert("taskIds".into(), Value::from(self.ids()));
        accepted
    }

    fn next<'a>(&'a mut self, meta: &'a Value) -> BoxFuture<'a, Vec<(&'static str, Value)>> {
        Box::pin(async move {
            let changed = self.changes(meta).await;
            changed
                .into_iter()
                .map(|params| (TaskStatus::METHOD, params))
                .collect()
        })
    }
}
