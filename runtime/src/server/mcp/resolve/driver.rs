//! The resolver driver: a tool in the resolver form, run round by round until its
//! resolvers are answered, as input-required results (2026-07-28) or as the session's
//! own requests to the client (2025-11-25).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::{Node, Resolution, ResolveSet, ResolverHandler};
use crate::jsonrpc::RpcError;
use crate::server::mcp::schema;
use crate::server::mcp::tool::{ToolBuilder, ToolCall, ToolEntry, ToolFn};
use crate::types::v2026_07_28::CallToolOutcome;

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
            Box::pin(async move {
                let args: A = call.entry.decode(&call.arguments)?;
                let on_session = call.ctx.era() == crate::Era::Session;
                let mut responses = call.input_responses;
                let mut state = call.request_state;
                // On a 2025-11-25 session there is no input-required result: the same
                // questions go to the client as requests of their own, one dependency
                // level at a time, and the body runs when all are answered.
                let mut levels = 0;
                let store = loop {
                    let round =
                        super::resolve_round(&nodes, &args, responses.as_ref(), state.as_deref());
                    match round {
                        Ok(Resolution::Ready(store)) => break store,
                        Ok(Resolution::Ask(asked)) if !on_session => {
                            return Ok(CallToolOutcome::InputRequired(*asked));
                        }
                        Ok(Resolution::Ask(asked)) => {
                            levels += 1;
                            if levels > nodes.len() + 1 {
                                tracing::error!(tool = %name, "resolvers did not settle on a 2025-11-25 session");
                                return Err(RpcError::internal("Internal error"));
                            }
                            let asked = *asked;
                            let mut answers = crate::types::v2026_07_28::InputResponses::new();
                            for (key, request) in asked.input_requests.iter().flat_map(|r| r.iter())
                            {
                                // Boxed: the session era's path stays out of every
                                // call's future.
                                let answer = Box::pin(call.ctx.request_input(request)).await?;
                                answers.insert(key.clone(), answer).map_err(|e| {
                                    RpcError::internal(format!("Internal error: {e}"))
                                })?;
                            }
                            responses = Some(answers);
                            state = asked.request_state;
                        }
                        Err(e) => return e.into_outcome(),
                    }
                };
                let Some(resolved) = P::fetch(&store) else {
                    tracing::error!(tool = %name, "resolved values did not assemble");
                    return Err(RpcError::internal("Internal error"));
                };
                match handler.call(args, resolved).await {
                    Ok(result) => Ok(CallToolOutcome::Complete(result)),
                    Err(e) => e.into_outcome(),
                }
            })
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
