//! One handler for both eras, for the direct form too (opt-in): an
//! `InputRequiredResult` a handler returns on a 2025-11-25 session is fulfilled over
//! the session's back channel (each input request sent to the client as the request it
//! is: `elicitation/create`, `sampling/createMessage`, `roots/list`), and the handler is
//! called again with the answers and the state, as a 2026-07-28 retry would be. The
//! state is sealed and verified exactly as on that retry; the rounds are capped and the
//! whole exchange has a deadline.

use futures_util::{StreamExt as _, TryStreamExt as _};
use serde_json::{Map, Value};

use super::state::{SessionInput, SessionState};
use crate::jsonrpc::{RawParams, RpcError};
use crate::protocol::rounds::{Over, RoundLimits, Rounds, Step, drive};
use crate::server::context::{Channel as _, Retry};
use crate::server::{Call, Output, RequestContext, Running, state};
use crate::types::v2026_07_28::{InputRequest, InputRequiredResult, InputResponse, InputResponses};

/// Fulfils `asked`, and every later round's, until the handler completes: the result
/// in `session`'s form, or the error that ended the exchange.
pub(super) async fn rounds(
    policy: SessionInput,
    method: &str,
    retry: Retry<'_>,
    mut asked: Box<InputRequiredResult>,
    session: &SessionState,
) -> Result<String, RpcError> {
    let mut fulfil = Fulfil {
        method,
        retry,
        session,
    };
    fulfil.seal(&mut asked)?;
    drive(&mut fulfil, &policy.limits(), Step::Asked(*asked)).await
}

/// A session request's rounds: its handler called again (`retry` says how) with each
/// round's answers, which its client gives over the session.
struct Fulfil<'a> {
    method: &'a str,
    retry: Retry<'a>,
    session: &'a SessionState,
}

impl Fulfil<'_> {
    /// Checks the round's questions against the client's capabilities and seals its
    /// state, exactly as a 2026-07-28 answer would be.
    fn seal(&self, asked: &mut InputRequiredResult) -> Result<(), RpcError> {
        let Retry {
            sealer,
            principal,
            capabilities,
            binding,
            ..
        } = &self.retry;
        let sealing = sealer.zip(binding.as_ref());
        state::check_and_seal(self.method, sealing, *principal, capabilities, asked)
    }
}

impl Rounds for Fulfil<'_> {
    type Done = String;
    type Error = RpcError;

    /// Every question of the round sent to the client, `limits.concurrency` at once,
    /// then the handler called again with the answers.
    async fn next(
        &mut self,
        _round: usize,
        asked: InputRequiredResult,
        limits: &RoundLimits,
    ) -> Result<Step<String>, RpcError> {
        let answers = ask_all(&self.retry.ctx, &asked, limits).await?;
        let retry = &self.retry;
        let again = with_answers(retry.params, answers, asked.request_state)?;
        let call = Call {
            ctx: retry.ctx.clone(),
            params: (retry.route.decode)(&again),
            sealing: retry.sealer.map(|sealer| state::Sealing {
                sealer,
                principal: retry.principal,
            }),
        };
        let Running { future, binding } = (retry.route.call)(call)?;
        match future.await? {
            Output::Complete(result) => self.session.complete(&result).map(Step::Done),
            Output::Shared(shared) => self.session.complete(shared.text()).map(Step::Done),
            Output::InputRequired(mut more) => {
                self.retry.binding = binding;
                self.seal(&mut more)?;
                Ok(Step::Asked(*more))
            }
        }
    }

    fn over(&self, over: Over) -> RpcError {
        let method = self.method;
        match over {
            Over::Deadline(_) => {
                tracing::warn!(method, "a session's client did not answer in time");
                RpcError::internal("Timed out waiting for the client's input")
            }
            Over::Rounds(rounds) => {
                tracing::error!(
                    method,
                    rounds,
                    "a handler asked for input more rounds than a session request may take"
                );
                RpcError::internal("Internal error: too many input rounds")
            }
            Over::Questions { asked, max } => RpcError::internal(format!(
                "Internal error: a round asked {asked} questions, over the {max} a session request may"
            )),
        }
    }
}

/// Every question of `asked` sent to the client over the request's session,
/// `limits.concurrency` at once; the answers under the questions' keys.
pub(crate) async fn ask_all(
    ctx: &RequestContext,
    asked: &InputRequiredResult,
    limits: &RoundLimits,
) -> Result<InputResponses, RpcError> {
    // Owned: the futures borrow nothing of the round but the context.
    let requests: Vec<(String, InputRequest)> = asked
        .input_requests
        .iter()
        .flat_map(|r| r.iter())
        .map(|(key, request)| (key.clone(), request.clone()))
        .collect();
    let answered: Vec<(String, InputResponse)> = futures_util::stream::iter(
        requests
            .into_iter()
            .map(|(key, request)| ask(ctx, key, request)),
    )
    .buffer_unordered(limits.concurrency.max(1))
    .try_collect()
    .await?;
    let mut answers = InputResponses::new();
    for (key, answer) in answered {
        answers
            .insert(key, answer)
            .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
    }
    Ok(answers)
}

async fn ask(
    ctx: &RequestContext,
    key: String,
    request: InputRequest,
) -> Result<(String, InputResponse), RpcError> {
    Ok((key, ctx.request_input(&request).await?))
}

/// The params of the retry: as sent, with `inputResponses` and `requestState` set.
fn with_answers(
    params: &RawParams,
    answers: InputResponses,
    state: Option<String>,
) -> Result<String, RpcError> {
    let mut object: Map<String, Value> = serde_json::from_str(params.get())
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))?;
    // A session's `_meta` is not the 2026-07-28 one the typed params would ask for.
    object.remove(crate::protocol::META);
    let answers = serde_json::to_value(&answers)
        .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
    object.insert("inputResponses".into(), answers);
    match state {
        Some(state) => object.insert("requestState".into(), Value::String(state)),
        None => object.remove("requestState"),
    };
    serde_json::to_string(&object).map_err(|e| RpcError::internal(format!("Internal error: {e}")))
}
