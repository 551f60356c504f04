//! A flow as data: a call stopped at its questions ([`PendingCall`], serde), resumed
//! with the answers by any client of the same server, in any process.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::input_loop::{Answered, InputLoopMethod};
use super::{Client, Deferred};
use crate::Error;
use crate::types::v2026_07_28::{InputRequests, InputResponses};

/// A call waiting on the answers to its questions, as data: what the retry needs and
/// nothing else. Store it (it is `Serialize`/`Deserialize`, as JSON for instance), show
/// its [`input_requests`](Self::input_requests) to a user, and finish it with
/// [`Client::resume`], from this process or another.
///
/// The `requestState` it holds is the server's (sealed, when the server is tern's):
/// a server that restarted with an ephemeral key, or another instance with a
/// different key, refuses it, and `resume` fails with
/// [`Error::StateRejected`](crate::Error::StateRejected); start the call again.
///
/// Plain data: what it holds is read from its fields, and it travels as JSON (serde).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PendingCall {
    /// The call's method (`tools/call`, `prompts/get`, `resources/read`).
    pub method: String,
    /// The call's params as first sent (no answers, no state).
    pub params: Value,
    /// How many input-required answers the call has had: 1 after its first.
    pub round: usize,
    /// The server's state, to be echoed with the answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The questions outstanding, by key.
    pub input_requests: InputRequests,
}

impl PendingCall {
    /// The call with another `requestState` (the test kit's altered state).
    #[cfg(feature = "testing")]
    pub(crate) fn with_request_state(mut self, state: Option<String>) -> Self {
        self.request_state = state;
        self
    }
}

/// Where [`Client::start`] or [`Client::resume`] stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum Step<C> {
    /// The complete result.
    Done(C),
    /// The server asked: answer [`PendingCall::input_requests`] and resume.
    NeedsInput(PendingCall),
    /// The server answered with a result of an extension's type (a task it made of a
    /// tool call, for a client that speaks the tasks extension): follow it with
    /// [`Deferred::follow`], or as the extension offers
    /// ([`TaskHandle::of`](crate::tasks::TaskHandle::of)).
    Deferred(Deferred),
}

/// The work of [`Client::start`].
pub(super) async fn start<M: InputLoopMethod>(
    client: &Client,
    mut params: M::Params,
) -> crate::Result<Step<M::Complete>> {
    M::set_round(&mut params, None, None);
    step::<M>(client, params, 0).await
}

/// The work of [`Client::resume`].
pub(super) async fn resume<M: InputLoopMethod>(
    client: &Client,
    pending: PendingCall,
    answers: InputResponses,
) -> crate::Result<Step<M::Complete>> {
    // The call's identity, not a fact: it resumes only as the method it was made as.
    if pending.method != M::METHOD {
        return Err(Error::Resume(format!(
            "it is a {} call, resumed as {}",
            pending.method,
            M::METHOD
        )));
    }
    if let Some((stray, _)) = answers
        .iter()
        .find(|(k, _)| !pending.input_requests.contains_key(k.as_ref()))
    {
        return Err(Error::Resume(format!(
            "an answer for `{stray}`, which the server did not ask"
        )));
    }
    let mut params: M::Params =
        serde_json::from_value(pending.params).map_err(|e| Error::Resume(e.to_string()))?;
    M::set_round(&mut params, Some(answers), pending.request_state);
    step::<M>(client, params, pending.round).await
}

/// Sends `params` (round `round` of the flow) until a complete result, questions
/// or a task.
async fn step<M: InputLoopMethod>(
    client: &Client,
    mut params: M::Params,
    mut round: usize,
) -> crate::Result<Step<M::Complete>> {
    let mut delay = client.inner.backoff.first;
    loop {
        let asked = match super::input_loop::one_round::<M>(client, &params, None, None).await? {
            Answered::Done(done) => return Ok(Step::Done(done)),
            Answered::Deferred(deferred) => return Ok(Step::Deferred(deferred)),
            Answered::Asked(asked) => asked,
        };
        round = super::input_loop::count_round(client, round)?;
        match asked.input_requests.filter(|r| !r.is_empty()) {
            Some(input_requests) => {
                M::set_round(&mut params, None, None);
                return Ok(Step::NeedsInput(PendingCall {
                    method: M::METHOD.to_owned(),
                    params: serde_json::to_value(&params).map_err(Error::Encode)?,
                    round,
                    request_state: asked.request_state,
                    input_requests,
                }));
            }
            None if asked.request_state.is_some() => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(client.inner.backoff.max);
                M::set_round(&mut params, None, asked.request_state);
            }
            None => return Err(Error::Protocol(crate::ProtocolError::EmptyInputRequired)),
        }
    }
}
