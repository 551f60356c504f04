//! One handler for both eras, for the direct form too (opt-in): an
//! `InputRequiredResult` a handler returns on a 2025-11-25 session is fulfilled over
//! the session's back channel (each input request sent to the client as the request it
//! is: `elicitation/create`, `sampling/createMessage`, `roots/list`), and the handler is
//! called again with the answers and the state, as a 2026-07-28 retry would be. The
//! state is sealed and verified exactly as on that retry; the rounds are capped and the
//! whole exchange has a deadline.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::jsonrpc::{RawParams, RpcError};
use crate::seal::{Principal, Sealer};
use crate::server::RequestContext;
use crate::server::{Call, Output, Route, Running, answer, state};
use crate::types::v2026_07_28::{ClientCapabilities, InputRequiredResult};

/// How a server fulfils the `InputRequiredResult`s its handlers return on 2025-11-25
/// sessions, when it is asked to ([`ServerBuilder::fulfil_input_on_sessions`](crate::server::ServerBuilder::fulfil_input_on_sessions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionInput {
    /// The most rounds one request may take (default 10); past it, -32603.
    pub max_rounds: usize,
    /// How long one request may wait for all its answers, over every round (default
    /// five minutes); past it, -32603.
    pub timeout: Duration,
}

impl Default for SessionInput {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            timeout: Duration::from_secs(5 * 60),
        }
    }
}

/// What the rounds need from the request being served.
pub(crate) struct Rounds<'a> {
    pub(crate) policy: SessionInput,
    pub(crate) route: Route,
    pub(crate) method: &'a str,
    /// The params as the client sent them: each retry adds the answers and the state.
    pub(crate) params: &'a RawParams,
    pub(crate) ctx: RequestContext,
    pub(crate) sealer: Option<&'a Sealer>,
    pub(crate) principal: Option<&'a Principal>,
    pub(crate) capabilities: &'a ClientCapabilities,
}

impl Rounds<'_> {
    /// Fulfils `asked`, and every later round's, until the handler completes: the
    /// session-form result, or the error that ended the exchange.
    pub(crate) async fn run(
        self,
        mut asked: Box<InputRequiredResult>,
        mut binding: Option<state::Binding>,
    ) -> Result<String, RpcError> {
        let deadline = tokio::time::Instant::now() + self.policy.timeout;
        for _ in 0..self.policy.max_rounds {
            let sealing = self.sealer.zip(binding.as_ref());
            state::check_and_seal(
                self.method,
                sealing,
                self.principal,
                self.capabilities,
                &mut asked,
            )?;
            let answers = tokio::time::timeout_at(deadline, self.answers(&asked))
                .await
                .map_err(|_| {
                    tracing::warn!(
                        method = self.method,
                        "a session's client did not answer in time"
                    );
                    RpcError::internal("Timed out waiting for the client's input")
                })??;
            let retry = with_answers(self.params, answers, asked.request_state.take())?;
            let call = Call {
                ctx: self.ctx.clone(),
                params: (self.route.decode)(&retry),
                sealing: self.sealer.map(|sealer| state::Sealing {
                    sealer,
                    principal: self.principal,
                }),
            };
            let Running {
                future,
                binding: next,
            } = (self.route.call)(call)?;
            match future.await? {
                Output::Complete(result) => return answer::on_session(&result),
                Output::InputRequired(more) => {
                    asked = more;
                    binding = next;
                }
            }
        }
        tracing::error!(
            method = self.method,
            rounds = self.policy.max_rounds,
            "a handler asked for input more rounds than a session request may take"
        );
        Err(RpcError::internal("Internal error: too many input rounds"))
    }

    /// Every input request of the round sent to the client at once; the answers by key.
    async fn answers(&self, asked: &InputRequiredResult) -> Result<Map<String, Value>, RpcError> {
        let requests = asked.input_requests.iter().flat_map(|r| r.iter());
        let asking = requests.map(|(key, request)| async move {
            let answer = self.ctx.request_input(request).await?;
            let value = serde_json::to_value(answer)
                .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
            Ok::<_, RpcError>((key.clone(), value))
        });
        futures_util::future::try_join_all(asking)
            .await
            .map(|answers| answers.into_iter().collect())
    }
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
