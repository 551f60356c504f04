//! The resolver driver: a tool in the resolver form, run round by round until its
//! resolvers are answered, as input-required results (2026-07-28) or as the session's
//! own requests to the client (2025-11-25).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::{Node, Resolution, ResolveSet, ResolverHandler, Store};
use crate::jsonrpc::RpcError;
use crate::mcp::schema;
use crate::mcp::tool::{ToolBuilder, ToolCall, ToolEntry, ToolError, ToolFn};
use crate::protocol::rounds::{Over, RoundLimits, Rounds, Step, drive};
use crate::server::RequestContext;
use crate::types::v2026_07_28::{CallToolOutcome, InputRequiredResult};

impl<'a> ToolBuilder<'a> {
    /// Registers `handler` as the tool, in the resolver form: after the typed arguments,
    /// each parameter is a resolver ([`Elicit<T>`](super::Elicit), [`Sample<P>`](super::Sample), [`ListRoots`](super::ListRoots), or your
    /// own [`Resolve`](super::Resolve) type). tern asks what is missing, batching independent questions
    /// into one round, keeps the answers in the sealed state, and runs the body once,
    /// when everything is answered. The body returns a complete result: a tool that uses
    /// resolvers cannot return `InputRequiredResult` (that does not compile).
    pub fn resolve<A, P, H>(mut self, handler: H)
    where
        A: DeserializeOwned + JsonSchema + Send + Sync + 'static,
        P: ResolveSet<A>,
        H: ResolverHandler<A, P>,
    {
        let derived = self.input_schema.is_none();
        self.tool.input_schema = self
            .input_schema
            .take()
            .unwrap_or_else(schema::object_schema::<A>);
        let name = self.tool.name.clone();
        let mut nodes: Vec<Node<A>> = Vec::new();
        P::nodes(&mut nodes);
        let nodes = Arc::new(nodes);
        let handler = Arc::new(handler);
        let call: ToolFn = Arc::new(move |call: ToolCall| {
            let handler = Arc::clone(&handler);
            let nodes = Arc::clone(&nodes);
            let name = name.clone();
            Box::pin(async move { run(call, &nodes, handler.as_ref(), &name).await })
        });
        // Resolvers have no context to ask to go on detached from: an extension that
        // would wait for them to ask detaches their calls from the start, or not at all.
        let mut entry = ToolEntry::new(self.tool, call, self.single_use, self.scopes)
            .with_settings(self.settings, self.gates);
        if derived {
            entry = entry.derived_schema();
        }
        entry.can_detach = false;
        self.server.add_tool(entry);
    }
}

/// One call of a resolver tool: its resolvers answered (this round's answers and
/// state, or over its session), then its body run.
async fn run<A, P, H>(
    call: ToolCall,
    nodes: &[Node<A>],
    handler: &H,
    name: &str,
) -> Result<CallToolOutcome, RpcError>
where
    A: DeserializeOwned + Send + Sync + 'static,
    P: ResolveSet<A>,
    H: ResolverHandler<A, P>,
{
    let args: A = call.entry.decode(&call.arguments)?;
    let first = super::resolve_round(
        nodes,
        &args,
        call.input_responses.as_ref(),
        call.request_state.as_deref(),
    );
    let store = match (first, call.ctx.channel_input_limits()) {
        (Ok(Resolution::Ready(store)), _) => store,
        // 2026-07-28: the questions go back in an input-required result.
        (Ok(Resolution::Ask(asked)), None) => {
            return Ok(CallToolOutcome::InputRequired(*asked));
        }
        // Boxed: the session era's path stays out of every call's future.
        (Ok(Resolution::Ask(asked)), Some(limits)) => {
            let rounds = OnSession {
                nodes,
                args: &args,
                ctx: &call.ctx,
                tool: name,
            };
            match Box::pin(rounds.resolve(limits, *asked)).await {
                Ok(store) => store,
                Err(Ended::Tool(e)) => return e.into_outcome(),
                Err(Ended::Rpc(e)) => return Err(e),
            }
        }
        (Err(e), _) => return e.into_outcome(),
    };
    let Some(resolved) = P::fetch(&store) else {
        tracing::error!(tool = %name, "resolved values did not assemble");
        return Err(RpcError::internal("Internal error"));
    };
    match handler.call(args, resolved).await {
        Ok(result) => Ok(CallToolOutcome::Complete(result)),
        Err(e) => e.into_outcome(),
    }
}

/// A resolver tool's call on a 2025-11-25 session, which has no input-required result:
/// the same questions go to the client as requests of its own, one dependency level a
/// round, and the body runs once all are answered.
struct OnSession<'a, A> {
    nodes: &'a [Node<A>],
    args: &'a A,
    ctx: &'a RequestContext,
    tool: &'a str,
}

/// What ended a call on a session before its body ran.
enum Ended {
    /// A resolver failed (the tool's error result, or a protocol error).
    Tool(ToolError),
    /// The session's rounds did.
    Rpc(RpcError),
}

impl<A: Sync> OnSession<'_, A> {
    /// Every resolver answered, from the first round's `asked`, within the session's
    /// `limits` (and no more rounds than the resolvers have levels).
    async fn resolve(
        mut self,
        limits: RoundLimits,
        asked: InputRequiredResult,
    ) -> Result<Store, Ended> {
        let limits = RoundLimits {
            max_rounds: limits.max_rounds.min(self.nodes.len() + 1),
            ..limits
        };
        drive(&mut self, &limits, Step::Asked(asked)).await
    }
}

impl<A: Sync> Rounds for OnSession<'_, A> {
    type Done = Store;
    type Error = Ended;

    /// The round's questions asked over the session, then the resolvers worked out
    /// again with the answers.
    async fn next(
        &mut self,
        _round: usize,
        asked: InputRequiredResult,
        limits: &RoundLimits,
    ) -> Result<Step<Store>, Ended> {
        let answers = crate::server::ask_all(self.ctx, &asked, limits).await;
        let answers = answers.map_err(Ended::Rpc)?;
        let state = asked.request_state.as_deref();
        match super::resolve_round(self.nodes, self.args, Some(&answers), state) {
            Ok(Resolution::Ready(store)) => Ok(Step::Done(store)),
            Ok(Resolution::Ask(asked)) => Ok(Step::Asked(*asked)),
            Err(e) => Err(Ended::Tool(e)),
        }
    }

    fn over(&self, over: Over) -> Ended {
        let tool = self.tool;
        Ended::Rpc(match over {
            Over::Deadline(_) => {
                tracing::warn!(tool, "a session's client did not answer a resolver in time");
                RpcError::internal("Timed out waiting for the client's input")
            }
            Over::Rounds(_) | Over::Questions { .. } => {
                tracing::error!(
                    tool,
                    ?over,
                    "resolvers did not settle on a 2025-11-25 session"
                );
                RpcError::internal("Internal error")
            }
        })
    }
}
