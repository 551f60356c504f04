//! The automatic input-required loop.

use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Client, RoundEvent};
use crate::Error;
use crate::types::rpc::{ClientRequestMethod, MayRequireInput, Request};
use crate::types::v2026_07_28::{InputRequests, InputRequiredResult, InputResponses, Outcome};

/// A method the automatic loop drives: a client request that may ask for input, whose
/// result is the `Outcome` of its complete result. Every such generated marker is one
/// (`tools/call`, `prompts/get`, `resources/read`); its facts, how a retry is written
/// and whether it may become a task, are the generated [`MayRequireInput`]'s.
pub trait InputLoopMethod:
    ClientRequestMethod
    + MayRequireInput<InputResponses = InputResponses>
    + Request<Result = Outcome<<Self as MayRequireInput>::Complete>>
{
}

impl<M> InputLoopMethod for M where
    M: ClientRequestMethod
        + MayRequireInput<InputResponses = InputResponses>
        + Request<Result = Outcome<<M as MayRequireInput>::Complete>>
{
}

/// The complete result of a task `M`'s request became (the task's `result`).
fn task_result<M: InputLoopMethod>(result: serde_json::Value) -> crate::Result<M::Complete> {
    if !M::MAY_BECOME_TASK {
        return Err(Error::Protocol(crate::ProtocolError::UnknownResultType(
            "task".into(),
        )));
    }
    serde_json::from_value(result).map_err(|source| {
        Error::Protocol(crate::ProtocolError::Decode {
            method: M::METHOD,
            source,
        })
    })
}

/// Where an input loop stopped: the complete result, or the task the server made of
/// the request.
pub(crate) enum Started<C> {
    Done(C),
    Task(Box<crate::types::ext_tasks::CreateTaskResult>),
}

/// The work of [`Client::run_input_loop`].
pub(super) async fn run_input_loop<M: InputLoopMethod>(
    client: &Client,
    params: M::Params,
) -> crate::Result<M::Complete> {
    client.run_input_loop_with_notices::<M>(params, None).await
}

/// The work of [`Client::run_input_loop_with_notices`].
pub(super) async fn run_input_loop_with_notices<M: InputLoopMethod>(
    client: &Client,
    params: M::Params,
    notices: Option<mpsc::UnboundedSender<super::Notice>>,
) -> crate::Result<M::Complete> {
    let sink = super::listen::notice_sink(client, notices);
    let started = run_input_loop_until_task::<M>(client, params, sink.as_ref()).await;
    if let Some(sink) = sink {
        sink.close().await;
    }
    match started? {
        Started::Done(done) => Ok(done),
        Started::Task(created) => {
            task_result::<M>(super::tasks::await_task(client, *created).await?)
        }
    }
}

/// The input loop up to the complete result or a task.
pub(crate) async fn run_input_loop_until_task<M: InputLoopMethod>(
    client: &Client,
    mut params: M::Params,
    sink: Option<&super::listen::NoticeSink>,
) -> crate::Result<Started<M::Complete>> {
    let notifications = sink.map(|s| &s.raw);
    // Built only when someone listens: a round's keys are copied for the event.
    let event = |e: &dyn Fn() -> RoundEvent| {
        if let Some(s) = sink {
            let _ = s.rounds.send(e());
        }
    };
    let span = tracing::info_span!(
        "mcp.call",
        method = M::METHOD,
        target = M::target(&params).unwrap_or_default()
    );
    async move {
        let mut delay = client.inner.backoff.first;
        let mut round = 0usize;
        // The `requestState` a retry echoes (the first round's, if any, is the params'
        // own).
        let mut state: Option<String> = None;
        // A refused state starts the call over once, from its first round: the
        // params without answers or state are the first round's.
        let mut may_restart = client.inner.restart_on_rejected_state;
        loop {
            let asked = match one_round::<M>(client, &params, state.as_deref(), notifications).await {
                Err(Error::StateRejected(_)) if round > 0 && may_restart => {
                    tracing::info!(method = M::METHOD, round, "the server refused the state: starting the call over");
                    event(&|| RoundEvent::Rejected { round });
                    may_restart = false;
                    M::set_round(&mut params, None, None);
                    state = None;
                    round = 0;
                    delay = client.inner.backoff.first;
                    continue;
                }
                Err(e) => return Err(e),
                Ok(Answered::Task(created)) => {
                    event(&|| RoundEvent::BecameTask { rounds: round, task_id: created.task_id.clone() });
                    return Ok(Started::Task(created));
                }
                Ok(Answered::Done(done)) => {
                    event(&|| RoundEvent::Done { rounds: round });
                    return Ok(Started::Done(done));
                }
                Ok(Answered::Asked(asked)) => asked,
            };
            round = count_round(client, round)?;
            let requests = asked.input_requests.filter(|r| !r.is_empty());
            let round_span = tracing::debug_span!("mcp.round", round, keys = ?Keys(requests.as_ref()));
            let responses = match requests {
                Some(r) => {
                    delay = client.inner.backoff.first;
                    event(&|| RoundEvent::NeedsInput { round, keys: r.keys().cloned().collect() });
                    let asking = asking::<M>(client, &params, round);
                    Some(client.inner.callbacks.answer_all(r, asking).instrument(round_span).await?)
                }
                None if asked.request_state.is_some() => {
                    tracing::debug!(parent: &round_span, delay_ms = delay.as_millis() as u64, "state only: backing off");
                    event(&|| RoundEvent::BackingOff { round, delay });
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(client.inner.backoff.max);
                    None
                }
                None => return Err(Error::Protocol(crate::ProtocolError::EmptyInputRequired)),
            };
            // The state goes beside the params, not into them: written as it came.
            M::set_round(&mut params, responses, None);
            state = asked.request_state;
        }
    }
    .instrument(span)
    .await
}

/// What the callbacks of round `round` of a call of `M` with `params` are told.
fn asking<M: InputLoopMethod>(
    client: &Client,
    params: &M::Params,
    round: usize,
) -> super::InputContext {
    super::InputContext {
        key: None,
        method: Some(M::METHOD),
        target: M::target(params).map(str::to_owned),
        arguments: M::arguments(params)
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .map(std::sync::Arc::new),
        round,
        task: None,
        server: client.inner.server_name.clone(),
    }
}

/// How one round was answered. Not boxed: it is taken apart as soon as it is returned,
/// and a box would cost every round an allocation (the `Outcome` it comes from holds
/// the `InputRequiredResult` inline too).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Answered<C> {
    /// The complete result.
    Done(C),
    /// The task the server made of the request.
    Task(Box<crate::types::ext_tasks::CreateTaskResult>),
    /// Input required.
    Asked(InputRequiredResult),
}

/// Sends one round of `M` (`state`, when given, echoed beside params that carry
/// none) and reads its answer: as the method's result first, a task being the rare
/// answer, told by the union's refusal of its `resultType`.
pub(crate) async fn one_round<M: InputLoopMethod>(
    client: &Client,
    params: &M::Params,
    state: Option<&str>,
    notifications: Option<&mpsc::UnboundedSender<serde_json::Value>>,
) -> crate::Result<Answered<M::Complete>> {
    let raw = client
        .send_raw::<M>(params, state, M::target(params), notifications)
        .await?;
    let result = match super::wire::decode::<M>(client, &raw) {
        Err(Error::Protocol(crate::ProtocolError::UnknownResultType(t)))
            if t == "task" && M::MAY_BECOME_TASK =>
        {
            let created = super::tasks::created_task(&raw)?
                .ok_or(Error::Protocol(crate::ProtocolError::UnknownResultType(t)))?;
            return Ok(Answered::Task(Box::new(created)));
        }
        other => other?,
    };
    Ok(match result {
        Outcome::Complete(done) => Answered::Done(done),
        Outcome::InputRequired(asked) => Answered::Asked(asked),
    })
}

/// The round after `round`, within the client's cap.
pub(crate) fn count_round(client: &Client, round: usize) -> crate::Result<usize> {
    let max_rounds = client.inner.max_rounds;
    if round >= max_rounds {
        return Err(Error::Input(crate::InputError::RoundsExceeded {
            max_rounds,
        }));
    }
    Ok(round + 1)
}

/// The keys of a round's input requests, for its span, listed only if the span is
/// recorded.
struct Keys<'a>(Option<&'a InputRequests>);

impl std::fmt::Debug for Keys<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().flat_map(|r| r.keys()))
            .finish()
    }
}
