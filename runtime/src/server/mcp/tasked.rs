//! A `tools/call` of a tool that may run as a task: inline, a task from the start, or
//! inline until the tool asks to go on as a task.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::detach::Detach;
use super::tool::{ToolCall, ToolEntry};
use crate::jsonrpc::RpcError;
use crate::server::{RequestContext, Tasked};
use crate::tasks::{TaskSupport, Tasks, run, wire};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{CallToolOutcome, CallToolRequestParams, InputResponses};

/// Whether a call of `entry` under `ctx` runs as a task: `Ok(false)` inline, -32021 for
/// a tool that must be a task and a request that cannot have one.
pub(super) fn as_task(entry: &ToolEntry, ctx: &RequestContext) -> Result<bool, RpcError> {
    let declared = ctx.era() == crate::Era::Stateless && wire::declares(ctx.client_capabilities());
    match (entry.tasks.support, declared) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(false),
        (TaskSupport::Required, false) => Err(wire::extension_required()),
        (_, true) => Ok(true),
    }
}

/// Calls `entry` for a request that may be a task.
pub(super) async fn call(
    tasks: Tasks,
    entry: Arc<ToolEntry>,
    ctx: RequestContext,
    params: CallToolRequestParams,
    arguments: Map<String, Value>,
) -> Result<Tasked<CallToolOutcome>, RpcError> {
    let cancel = CancellationToken::new();
    let task_ctx = ctx.for_task(cancel.clone());
    let next = next_round(&entry, &task_ctx, &arguments);
    let capabilities = ctx.client_capabilities().clone();
    if !entry.tasks.on_request {
        let record = run::create(&tasks, &ctx).await?;
        let first = next(params.input_responses, params.request_state);
        run::spawn(tasks, record.id.clone(), capabilities, cancel, first, next);
        return Ok(Tasked::Task(Box::new(wire::created(&record))));
    }
    // Inline until the body asks: the request's cancellation reaches it until then.
    let (detach, asked) = Detach::new();
    let detached = CancellationToken::new();
    {
        let (request, body, detached) =
            (ctx.cancellation().clone(), cancel.clone(), detached.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = request.cancelled() => body.cancel(),
                () = detached.cancelled() => {}
            }
        });
    }
    let mut body = tokio::spawn((entry.call)(ToolCall {
        ctx: task_ctx,
        arguments,
        input_responses: params.input_responses,
        request_state: params.request_state,
        detach: Some(detach),
    }));
    tokio::select! {
        finished = &mut body => {
            detached.cancel();
            finished.map(|r| r.map(Tasked::Now)).unwrap_or_else(|e| {
                tracing::error!(tool = %entry.tool.name, error = %e, "a tool's body panicked");
                Err(RpcError::internal("Internal error"))
            })
        }
        ack = asked => {
            let Ok(ack) = ack else {
                // The body dropped its context without asking: wait for its answer.
                detached.cancel();
                return body.await.map(|r| r.map(Tasked::Now)).unwrap_or_else(|_| Err(RpcError::internal("Internal error")));
            };
            detached.cancel();
            let record = match run::create(&tasks, &ctx).await {
                Ok(r) => r,
                Err(e) => {
                    let _ = ack.send(Err(e.clone()));
                    return Err(e);
                }
            };
            let _ = ack.send(Ok(()));
            let first: BoxFuture<'static, Result<CallToolOutcome, RpcError>> = Box::pin(async move {
                body.await.unwrap_or_else(|_| Err(RpcError::internal("Internal error")))
            });
            run::spawn(tasks, record.id.clone(), capabilities, cancel, first, next);
            Ok(Tasked::Task(Box::new(wire::created(&record))))
        }
    }
}

/// How a task's body is called again, with a round's answers: `entry` with the same
/// context and arguments, already a task.
fn next_round(
    entry: &Arc<ToolEntry>,
    ctx: &RequestContext,
    arguments: &Map<String, Value>,
) -> run::NextRound {
    let (entry, ctx, arguments) = (Arc::clone(entry), ctx.clone(), arguments.clone());
    Arc::new(
        move |input_responses: Option<InputResponses>, request_state: Option<String>| {
            (entry.call)(ToolCall {
                ctx: ctx.clone(),
                arguments: arguments.clone(),
                input_responses,
                request_state,
                detach: Some(Detach::detached()),
            })
        },
    )
}
