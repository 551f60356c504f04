//! One request relayed to an upstream: sent for the gateway's client (its capabilities
//! and log level), within the upstream's deadline, the notifications of its stream
//! passed on; and, for a method that may ask for input, its rounds: the upstream's
//! questions keyed under its name, its state nested in the gateway's, the retry's
//! answers given back under the upstream's own keys.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::bridge::Holds;
use super::catalog::Link;
use super::forward;
use super::names;
use crate::jsonrpc::{RawResult, RpcError};
use crate::server::{Reply, RequestContext};
use crate::types::rpc::{ClientRequestMethod, MayRequireInput};
use crate::types::v2026_07_28::method::ClientRequestParams;
use crate::types::v2026_07_28::{
    CallToolRequestParams, GetPromptRequestParams, InputRequiredResult, InputResponses, Outcome,
    ReadResourceRequestParams, method,
};

/// A method whose rounds the gateway relays: how the upstream's name for the target
/// goes into its params, and how a retry's round comes out of them.
pub(super) trait Relayed:
    MayRequireInput<InputResponses = InputResponses, Params: ClientRequestParams> + ClientRequestMethod
{
    /// Names the target as the upstream knows it.
    fn retarget(params: &mut Self::Params, own: String);
    /// The retry's answers and state, taken out of `params`.
    fn take_round(params: &mut Self::Params) -> (Option<InputResponses>, Option<String>);
    /// The result, as the outcome it is.
    fn outcome(result: Self::Result) -> Outcome<Self::Complete>;
    /// The outcome, as the result.
    fn result(outcome: Outcome<Self::Complete>) -> Self::Result;
}

macro_rules! relayed {
    ($marker:ty, $params:ty, $target:ident) => {
        impl Relayed for $marker {
            fn retarget(params: &mut $params, own: String) {
                params.$target = own;
            }
            fn take_round(params: &mut $params) -> (Option<InputResponses>, Option<String>) {
                (params.input_responses.take(), params.request_state.take())
            }
            fn outcome(result: Self::Result) -> Outcome<Self::Complete> {
                result
            }
            fn result(outcome: Outcome<Self::Complete>) -> Self::Result {
                outcome
            }
        }
    };
}
relayed!(method::CallTool, CallToolRequestParams, name);
relayed!(method::GetPrompt, GetPromptRequestParams, name);
relayed!(method::ReadResource, ReadResourceRequestParams, uri);

/// The gateway's `requestState` before it is sealed: what it must remember of the
/// upstream between rounds.
#[derive(Default, Serialize, Deserialize)]
struct Nested {
    /// The upstream's own `requestState`.
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    upstream: Option<String>,
    /// The call this gateway holds on a session of its own (a 2025-11-25 upstream's).
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    held: Option<String>,
}

impl Nested {
    fn write(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Relays one round of `M` to `link`, its target there `own`: the retry's answers and
/// state given back as the upstream wrote them, its questions and state made the
/// gateway's; a call the upstream made a task answered as that task.
pub(super) async fn round<M: Relayed>(
    link: &Link,
    holds: &Holds,
    ctx: &RequestContext,
    mut params: M::Params,
    own: String,
) -> Result<Reply<M::Result>, RpcError> {
    let (responses, state) = M::take_round(&mut params);
    let nested = match state {
        // The gateway's own, opened by its server: only a bug makes it unreadable.
        Some(text) => {
            serde_json::from_str::<Nested>(&text).map_err(|_| RpcError::invalid_request_state())?
        }
        None => Nested::default(),
    };
    let responses = responses
        .map(|r| names::answers(link.name.as_deref(), &r))
        .transpose()?;
    if let Some(http) = &link.sessions {
        let turn = match nested.held {
            // Held here, bound (by the sealed state) to this client, target and arguments.
            Some(id) => {
                let call = holds
                    .take(&id)
                    .ok_or_else(RpcError::invalid_request_state)?;
                super::bridge::resume(link, holds, ctx, call, responses.as_ref()).await?
            }
            None => {
                M::retarget(&mut params, own);
                super::bridge::start::<M>(link, http, holds, ctx, params).await?
            }
        };
        return match turn {
            super::bridge::Turn::Answered(raw) => answered::<M>(link, &raw),
            super::bridge::Turn::Asks(id, questions) => {
                let mut asked = InputRequiredResult::new();
                asked.input_requests = Some(questions);
                asked.request_state = Some(
                    Nested {
                        upstream: None,
                        held: Some(id),
                    }
                    .write(),
                );
                Ok(Reply::Now(M::result(Outcome::InputRequired(asked))))
            }
        };
    }
    M::retarget(&mut params, own);
    M::set_round(&mut params, responses, nested.upstream);
    let raw = send_raw::<M>(link, ctx, params).await?;
    answered::<M>(link, &raw)
}

/// What the upstream answered a round of `M` with, as the gateway's answer: a task as
/// that task, questions named and state nested, a complete result as it is.
fn answered<M: Relayed>(link: &Link, raw: &RawResult) -> Result<Reply<M::Result>, RpcError> {
    if M::MAY_BECOME_TASK && names::is_task(raw) {
        return names::task(link.name.as_deref(), raw)
            .map(Reply::Instead)
            .map_err(|e| link.failed_with(&format!("a task that is not JSON: {e}")));
    }
    let result = link
        .client
        .decode_relayed::<M>(raw)
        .map_err(|e| link.failed(e))?;
    let outcome = match M::outcome(result) {
        Outcome::InputRequired(mut asked) => {
            asked.input_requests = asked
                .input_requests
                .map(|r| names::questions(link.name.as_deref(), r));
            asked.request_state = asked.request_state.map(|upstream| {
                Nested {
                    upstream: Some(upstream),
                    held: None,
                }
                .write()
            });
            Outcome::InputRequired(asked)
        }
        complete => complete,
    };
    Ok(Reply::Now(M::result(outcome)))
}

/// Sends `params` to `link` for the client `ctx` serves (its capabilities, its log
/// level), within the upstream's deadline, each notification of the request's stream
/// passed on to the client as it arrives.
pub(super) async fn send<M: ClientRequestMethod>(
    link: &Link,
    ctx: &RequestContext,
    params: M::Params,
) -> Result<M::Result, RpcError>
where
    M::Params: ClientRequestParams,
{
    let raw = send_raw::<M>(link, ctx, params).await?;
    link.client
        .decode_relayed::<M>(&raw)
        .map_err(|e| link.failed(e))
}

/// [`send`], the result left as the upstream wrote it; a round past the upstream's
/// budgets refused (see [`budget::round`](super::budget::round)).
async fn send_raw<M: ClientRequestMethod>(
    link: &Link,
    ctx: &RequestContext,
    mut params: M::Params,
) -> Result<RawResult, RpcError>
where
    M::Params: ClientRequestParams,
{
    forward::unmeta(&mut params);
    let meta = ctx.meta();
    // The upstream is asked for what the client may take; the gateway filters by
    // what it takes.
    let wire_meta = link
        .client
        .relayed_meta(&meta.client_capabilities, ctx.log_floor());
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let call = link.client.relay::<M>(&params, &wire_meta, Some(&tx));
    let call = tokio::time::timeout(link.deadline, call);
    tokio::pin!(call);
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            Some(message) = rx.recv() => forward::pass_on(ctx, message),
        }
    };
    while let Ok(message) = rx.try_recv() {
        forward::pass_on(ctx, message);
    }
    match result {
        Ok(Ok(result)) if M::MAY_REQUIRE_INPUT => {
            // Its questions and state counted before they are read.
            super::budget::round(&link.budgets, &result).map_err(|o| link.over(o, M::METHOD))?;
            Ok(result)
        }
        Ok(Ok(result)) => Ok(result),
        Ok(Err(e)) => Err(link.failed(e)),
        Err(_) => Err(link.late()),
    }
}
