//! One handler for both eras, for the direct form too (opt-in): an
//! `InputRequiredResult` a handler returns on a 2025-11-25 session is fulfilled over
//! the session's back channel (each input request sent to the client as the request it
//! is: `elicitation/create`, `sampling/createMessage`, `roots/list`), and the handler is
//! called again with the answers and the state, as a 2026-07-28 retry would be. The
//! state is sealed and verified exactly as on that retry; the rounds are capped and the
//! whole exchange has a deadline.

use serde_json::{Map, Value};

use super::state::{SessionInput, SessionState};
use crate::jsonrpc::{RawParams, RpcError};
use crate::server::context::{Channel as _, Retry};
use crate::server::{Call, Output, RequestContext, Running, state};
use crate::types::v2026_07_28::InputRequiredResult;

/// Fulfils `asked`, and every later round's, until the handler completes: the result
/// in `session`'s form, or the error that ended the exchange.
pub(super) async fn rounds(
    policy: SessionInput,
    method: &str,
    retry: Retry<'_>,
    mut asked: Box<InputRequiredResult>,
    session: &SessionState,
) -> Result<String, RpcError> {
    let Retry {
        route,
        params,
        ctx,
        sealer,
        principal,
        capabilities,
        mut binding,
    } = retry;
    let deadline = tokio::time::Instant::now() + policy.timeout;
    for _ in 0..policy.max_rounds {
        let sealing = sealer.zip(binding.as_ref());
        state::check_and_seal(method, sealing, principal, capabilities, &mut asked)?;
        let answers = tokio::time::timeout_at(deadline, answers(&ctx, &asked))
            .await
            .map_err(|_| {
                tracing::warn!(method, "a session's client did not answer in time");
                RpcError::internal("Timed out waiting for the client's input")
            })??;
        let again = with_answers(params, answers, asked.request_state.take())?;
        let call = Call {
            ctx: ctx.clone(),
            params: (route.decode)(&again),
            sealing: sealer.map(|sealer| state::Sealing { sealer, principal }),
        };
        let Running {
            future,
            binding: next,
        } = (route.call)(call)?;
        match future.await? {
            Output::Complete(result) => return session.complete(&result),
            Output::Shared(shared) => return session.complete(shared.text()),
            Output::InputRequired(more) => {
                asked = more;
                binding = next;
            }
        }
    }
    tracing::error!(
        method,
        rounds = policy.max_rounds,
        "a handler asked for input more rounds than a session request may take"
    );
    Err(RpcError::internal("Internal error: too many input rounds"))
}

/// Every input request of the round sent to the client at once; the answers by key.
async fn answers(
    ctx: &RequestContext,
    asked: &InputRequiredResult,
) -> Result<Map<String, Value>, RpcError> {
    let requests = asked.input_requests.iter().flat_map(|r| r.iter());
    let asking = requests.map(|(key, request)| async move {
        let answer = ctx.request_input(request).await?;
        let value = serde_json::to_value(answer)
            .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
        Ok::<_, RpcError>((key.clone(), value))
    });
    futures_util::future::try_join_all(asking)
        .await
        .map(|answers| answers.into_iter().collect())
}

/// The params of the retry: as sent, with `inputResponses` and `requestState` set.
fn with_answers(
    params: &RawParams,
    answers: Map<String, Value>,
    state: Option<String>,
) -> Result<String, RpcError> {
    let mut object: Map<String, Value> = serde_json::from_str(params.get())
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))?;
    // A session's `_meta` is not the 2026-07-28 one the typed params would ask for.
    object.remove(crate::protocol::META);
    object.insert("inputResponses".into(), Value::Object(answers));
    match state {
        Some(state) => object.insert("requestState".into(), Value::String(state)),
        None => object.remove("requestState"),
    };
    serde_json::to_string(&object).map_err(|e| RpcError::internal(format!("Internal error: {e}")))
}
