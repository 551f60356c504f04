//! A `tools/call` handed to the extension its tool named: run inline as if no extension
//! were there, or (within tern, for the tasks extension) detached from its request and
//! driven round by round.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::detach::Detach;
use super::setting::ToolSetting;
use super::single_use::SingleUse;
use super::tool::{ToolCall, ToolEntry};
use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{CallToolOutcome, InputResponses, ToolArguments};

/// A `tools/call` an [`McpExtension`](super::McpExtension) takes: the tool, its
/// setting for the extension, the request, and the checked arguments.
pub struct ToolHandoff {
    entry: Arc<ToolEntry>,
    ctx: RequestContext,
    arguments: ToolArguments,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
    guard: Option<SingleUse>,
}

impl std::fmt::Debug for ToolHandoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolHandoff")
            .field("tool", &self.entry.tool.name)
            .finish_non_exhaustive()
    }
}

/// The answers and state of a call's first round.
pub(crate) type Round = (Option<InputResponses>, Option<String>);

impl ToolHandoff {
    pub(super) fn new(
        entry: Arc<ToolEntry>,
        ctx: RequestContext,
        arguments: ToolArguments,
        round: Round,
        guard: Option<SingleUse>,
    ) -> Self {
        let (input_responses, request_state) = round;
        let guard = guard.filter(|_| entry.single_use);
        Self {
            entry,
            ctx,
            arguments,
            input_responses,
            request_state,
            guard,
        }
    }

    /// The request.
    pub fn context(&self) -> &RequestContext {
        &self.ctx
    }

    /// The tool's setting of type `S`, if it was registered with one.
    pub fn setting<S: ToolSetting>(&self) -> Option<&S> {
        self.entry
            .settings
            .iter()
            .filter(|(id, _)| *id == S::EXTENSION)
            .find_map(|(_, s)| s.downcast_ref::<S>())
    }

    /// Runs the tool inline, as if no extension had taken the call.
    pub fn run(self) -> BoxFuture<'static, Result<CallToolOutcome, RpcError>> {
        Box::pin(self.inline())
    }

    /// [`run`](Self::run) without the box: a call no extension takes runs this, in the
    /// route's own future.
    pub(crate) async fn inline(self) -> Result<CallToolOutcome, RpcError> {
        if let Some(guard) = &self.guard {
            if let Some(answered) = guard.begin(&self.ctx).await? {
                return Ok(answered);
            }
        }
        let outcome = (self.entry.call)(ToolCall {
            ctx: self.ctx.clone(),
            entry: Arc::clone(&self.entry),
            arguments: self.arguments,
            input_responses: self.input_responses,
            request_state: self.request_state,
            detach: None,
        })
        .await?;
        if let Some(guard) = &self.guard {
            guard.finish(&self.ctx, &outcome).await?;
        }
        Ok(outcome)
    }

    /// Whether the body can ask mid-call to go on detached (a resolver tool's cannot:
    /// it has no context to ask from).
    pub(crate) fn can_detach(&self) -> bool {
        self.entry.can_detach
    }

    /// The call detached from its request: its body under `ctx` (whose
    /// [`continue_as_task`](crate::mcp::ToolContext::continue_as_task) says it is
    /// one already), and the first round's answers and state.
    pub(crate) fn detach(self, ctx: RequestContext) -> (ToolBody, Round) {
        let body = ToolBody {
            entry: self.entry,
            ctx,
            arguments: self.arguments,
        };
        (body, (self.input_responses, self.request_state))
    }

    /// Runs the body inline under `ctx` until it finishes or asks to go on detached;
    /// the request's cancellation reaches it until then.
    pub(crate) async fn run_until_detached(
        self,
        ctx: RequestContext,
        body_cancel: CancellationToken,
    ) -> Detaching {
        let (detach, asked) = Detach::new();
        let detached = CancellationToken::new();
        {
            let (request, detached) = (self.ctx.cancellation().clone(), detached.clone());
            let body_cancel = body_cancel.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = request.cancelled() => body_cancel.cancel(),
                    () = detached.cancelled() => {}
                }
            });
        }
        let name = self.entry.tool.name.clone();
        let (tool_body, (input_responses, request_state)) = self.detach(ctx);
        let mut running = tokio::spawn((tool_body.entry.call)(ToolCall {
            ctx: tool_body.ctx.clone(),
            entry: Arc::clone(&tool_body.entry),
            arguments: tool_body.arguments.clone(),
            input_responses,
            request_state,
            detach: Some(detach),
        }));
        let joined = move |r: Result<Result<CallToolOutcome, RpcError>, tokio::task::JoinError>| {
            r.unwrap_or_else(|e| {
                tracing::error!(tool = %name, error = %e, "a tool's body panicked");
                Err(RpcError::internal("Internal error"))
            })
        };
        tokio::select! {
            finished = &mut running => {
                detached.cancel();
                Detaching::Finished(joined(finished))
            }
            ack = asked => {
                detached.cancel();
                match ack {
                    // The body dropped its context without asking: wait for its answer.
                    Err(_) => Detaching::Finished(joined(running.await)),
                    Ok(ack) => Detaching::Asked(DetachRequest {
                        ack,
                        rest: Box::pin(async move { joined(running.await) }),
                        body: tool_body,
                    }),
                }
            }
        }
    }
}

/// Where a call run by [`ToolHandoff::run_until_detached`] stopped.
#[expect(
    clippy::large_enum_variant,
    reason = "moved once per call, like the outcome it holds"
)]
pub(crate) enum Detaching {
    /// The body finished inline.
    Finished(Result<CallToolOutcome, RpcError>),
    /// The body asked to go on detached.
    Asked(DetachRequest),
}

/// A body's request to go on detached, waiting for the answer.
pub(crate) struct DetachRequest {
    ack: tokio::sync::oneshot::Sender<Result<(), RpcError>>,
    rest: BoxFuture<'static, Result<CallToolOutcome, RpcError>>,
    body: ToolBody,
}

impl DetachRequest {
    /// Tells the body it is detached: the rest of its run, and its body for the next
    /// rounds.
    pub(crate) fn accept(
        self,
    ) -> (
        BoxFuture<'static, Result<CallToolOutcome, RpcError>>,
        ToolBody,
    ) {
        let _ = self.ack.send(Ok(()));
        (self.rest, self.body)
    }

    /// Tells the body it could not be detached: `continue_as_task` fails with `error`.
    pub(crate) fn refuse(self, error: RpcError) {
        let _ = self.ack.send(Err(error));
    }
}

/// A tool's body detached from its request, callable round after round.
#[derive(Clone)]
pub(crate) struct ToolBody {
    entry: Arc<ToolEntry>,
    ctx: RequestContext,
    arguments: ToolArguments,
}

impl ToolBody {
    pub(super) fn new(
        entry: Arc<ToolEntry>,
        ctx: RequestContext,
        arguments: ToolArguments,
    ) -> Self {
        Self {
            entry,
            ctx,
            arguments,
        }
    }

    /// The tool's name.
    pub(crate) fn name(&self) -> &str {
        &self.entry.tool.name
    }

    /// The call's arguments.
    pub(crate) fn arguments(&self) -> &ToolArguments {
        &self.arguments
    }

    /// The body called with a round's answers and state.
    pub(crate) fn call(
        &self,
        input_responses: Option<InputResponses>,
        request_state: Option<String>,
    ) -> BoxFuture<'static, Result<CallToolOutcome, RpcError>> {
        (self.entry.call)(ToolCall {
            ctx: self.ctx.clone(),
            entry: Arc::clone(&self.entry),
            arguments: self.arguments.clone(),
            input_responses,
            request_state,
            detach: Some(Detach::detached()),
        })
    }
}
