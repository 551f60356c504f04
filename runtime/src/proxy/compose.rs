//! Calls the gateway answers with more than one relay: a tool made of several upstream
//! tools called at once ([`Gateway::compose`](super::Gateway::compose)), and calls a
//! policy asks about ([`Gateway::policy`](super::Gateway::policy)). Every part's first
//! round and the policy's question go out together, so a round where several upstreams
//! and the gateway ask completes in one round trip of the client.
//!
//! A policy withholds the parts' answers until it allows the call: a part that asks
//! before it acts does not act without it. A part that completes at once has acted by
//! then; its result is held back (in the sealed state) until the policy allows the
//! call, and dropped if it refuses.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::catalog::Link;
use super::names;
use super::relay;
use crate::jsonrpc::RpcError;
use crate::mcp::Resolve;
use crate::server::RequestContext;
use crate::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ContentBlock, InputRequest,
    InputRequests, InputResponses, TextContent, method,
};

/// The name the gateway's own questions are keyed under (`gateway.key`).
pub(super) const OWN: &str = "gateway";

/// A policy, erased: which tools it asks about, its question, and its verdict.
pub(super) trait Check: Send + Sync {
    fn applies(&self, tool: &str) -> bool;
    fn key(&self) -> String;
    fn question(&self, arguments: &Value) -> Result<InputRequest, RpcError>;
    /// Whether the answer allows a call of `tool`; `None` when it does not fit (asked
    /// again).
    fn allows(&self, tool: &str, answer: &RawValue) -> Option<bool>;
}

impl std::fmt::Debug for dyn Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a policy asking {:?}", self.key())
    }
}

/// A policy asking the resolver `P` and deciding with `allow`.
pub(super) struct Policy<P, F> {
    pub(super) applies: Box<dyn Fn(&str) -> bool + Send + Sync>,
    pub(super) allow: F,
    pub(super) asks: std::marker::PhantomData<fn() -> P>,
}

impl<P, F> Check for Policy<P, F>
where
    P: Resolve<Value, Deps = ()>,
    F: Fn(&str, &P) -> bool + Send + Sync,
{
    fn applies(&self, tool: &str) -> bool {
        (self.applies)(tool)
    }
    fn key(&self) -> String {
        names::served(Some(OWN), &P::key())
    }
    fn question(&self, arguments: &Value) -> Result<InputRequest, RpcError> {
        P::question(arguments, &())
            .map_err(|e| RpcError::internal(format!("The gateway's policy could not ask: {e:?}")))
    }
    fn allows(&self, tool: &str, answer: &RawValue) -> Option<bool> {
        let answer = P::from_response(answer, &())?;
        Some((self.allow)(tool, &answer))
    }
}

/// One call that takes more than one relay: its parts, and the policy that asks about
/// it, if any.
pub(super) struct Plan<'a> {
    pub(super) tool: &'a str,
    pub(super) parts: Vec<(Arc<Link>, String)>,
    pub(super) policy: Option<&'a dyn Check>,
}

/// The gateway's state of a planned call between rounds.
#[derive(Default, Serialize, Deserialize)]
struct Progress {
    /// Each part's: its upstream's state while it asks, its result once it answered.
    #[serde(rename = "p")]
    parts: Vec<Part>,
    /// Whether the policy allowed the call.
    #[serde(rename = "g", default)]
    granted: bool,
}

#[derive(Default, Clone, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    result: Option<Box<CallToolResult>>,
}

/// One round of a planned call.
pub(super) async fn round(
    plan: Plan<'_>,
    ctx: &RequestContext,
    mut params: CallToolRequestParams,
) -> Result<CallToolOutcome, RpcError> {
    let responses = params.input_responses.take().unwrap_or_default();
    let mut progress = match params.request_state.take() {
        // The gateway's own, opened by its server: only a bug makes it unreadable.
        Some(text) => serde_json::from_str::<Progress>(&text)
            .ok()
            .filter(|p| p.parts.len() == plan.parts.len())
            .ok_or_else(RpcError::invalid_request_state)?,
        None => Progress {
            parts: vec![Part::default(); plan.parts.len()],
            granted: plan.policy.is_none(),
        },
    };
    let mut questions = InputRequests(Default::default());
    if let Some(policy) = plan.policy.filter(|_| !progress.granted) {
        let key = policy.key();
        match responses
            .raw(&key)
            .and_then(|a| policy.allows(plan.tool, a))
        {
            Some(true) => progress.granted = true,
            Some(false) => return Ok(refused(plan.tool)),
            None => {
                let arguments = params.arguments.as_ref().and_then(|a| a.decode().ok());
                let arguments = arguments.unwrap_or(Value::Null);
                questions.0.insert(key, policy.question(&arguments)?);
            }
        }
    }
    // Until the policy allows the call, a part gets no answers: asked again, it asks
    // the same.
    let answers = progress.granted.then_some(&responses);
    call_parts(&plan, ctx, &params, answers, &mut progress, &mut questions).await?;
    let done = progress.parts.iter().all(|p| p.result.is_some());
    if done && progress.granted {
        return Ok(CallToolOutcome::Complete(merged(progress.parts)));
    }
    let mut asked = crate::types::v2026_07_28::InputRequiredResult::new();
    asked.input_requests = (!questions.0.is_empty()).then_some(questions);
    let state = serde_json::to_string(&progress).map_err(|e| RpcError::internal(e.to_string()))?;
    asked.request_state = Some(state);
    Ok(CallToolOutcome::InputRequired(asked))
}

/// Calls every part that has not answered yet, at once, each with its own answers (if
/// `answers` are given) and state; its result kept, or its questions added to
/// `questions` under its upstream's name.
async fn call_parts(
    plan: &Plan<'_>,
    ctx: &RequestContext,
    params: &CallToolRequestParams,
    answers: Option<&InputResponses>,
    progress: &mut Progress,
    questions: &mut InputRequests,
) -> Result<(), RpcError> {
    let calls = plan
        .parts
        .iter()
        .zip(&progress.parts)
        .map(|((link, own), part)| {
            let mut call = params.clone();
            call.name = own.clone();
            async move {
                if part.result.is_some() {
                    return Ok(None);
                }
                if let Some(answers) = answers {
                    call.input_responses = Some(names::answers(link.name.as_deref(), answers)?);
                }
                call.request_state = part.state.clone();
                relay::send::<method::CallTool>(link, ctx, call)
                    .await
                    .map(Some)
            }
        });
    let outcomes = futures_util::future::try_join_all(calls).await?;
    let parts = plan.parts.iter().zip(progress.parts.iter_mut());
    for (((link, _), part), outcome) in parts.zip(outcomes) {
        match outcome {
            None => {}
            Some(CallToolOutcome::Complete(result)) => {
                *part = Part {
                    state: None,
                    result: Some(Box::new(result)),
                };
            }
            Some(CallToolOutcome::InputRequired(asked)) => {
                part.state = asked.request_state;
                if let Some(asked) = asked.input_requests {
                    let named = names::questions(link.name.as_deref(), asked);
                    questions.0.extend(named.0);
                }
            }
        }
    }
    Ok(())
}

/// The parts' results as one: their content in order, an error if any part's was.
fn merged(parts: Vec<Part>) -> CallToolResult {
    let mut content = Vec::new();
    let mut error = false;
    for result in parts.into_iter().filter_map(|p| p.result) {
        content.extend(result.content);
        error |= result.is_error == Some(true);
    }
    let mut result = CallToolResult::new(content);
    result.is_error = error.then_some(true);
    result
}

/// The call refused by the gateway's policy, as the model reads it.
fn refused(tool: &str) -> CallToolOutcome {
    let text = format!("The gateway's policy did not allow this call of {tool}.");
    let mut result = CallToolResult::new(vec![ContentBlock::Text(TextContent::new(text))]);
    result.is_error = Some(true);
    CallToolOutcome::Complete(result)
}
