//! The automatic input-required loop.

use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Client, RoundEvent};
use crate::Error;
use crate::protocol::rounds::Over;
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

/// Where an input loop stopped: the complete result, or a result of an extension's
/// type (a task the server made of the request).
pub(crate) enum Started<C> {
    Done(C),
    Deferred(super::Deferred),
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
    let started = run_input_loop_until_deferred::<M>(client, params, sink.as_ref()).await;
    if let Some(sink) = sink {
        sink.close().await;
    }
    match started? {
        Started::Done(done) => Ok(done),
        Started::Deferred(deferred) => {
            super::extension::read_followed(M::METHOD, deferred.follow().await?)
        }
    }
}

/// The input loop up to the complete result or an extension's result (a task). Written flat, not through
/// `protocol::rounds::drive`: each future nested in a call's is copied whole as it is
/// awaited, and the engine's layers cost a client flow some 3,000 instructions
/// (ARCHITECTURE.md). It keeps to the same bounds, asked of `RoundLimits::admit`.
pub(crate) async fn run_input_loop_until_deferred<M: InputLoopMethod>(
    client: &Client,
    mut params: M::Params,
    sink: Option<&super::listen::NoticeSink>,
) -> crate::Result<Started<M::Complete>> {
    let notifications = sink.map(|s| &s.raw);
    let span = tracing::info_span!(
        "mcp.call",
        method = M::METHOD,
        target = M::target(&params).unwrap_or_default()
    );
    async move {
        let mut at = Progress::new(client, sink);
        loop {
            let answered = one_round::<M>(client, &params, at.state.as_deref(), notifications).await;
            let asked = match answered {
                Err(Error::StateRejected(_)) if at.round > 0 && at.may_restart => {
                    tracing::info!(method = M::METHOD, round = at.round, "the server refused the state: starting the call over");
                    at.restart(client);
                    M::set_round(&mut params, None, None);
                    continue;
                }
                answered => match at.asked(answered?) {
                    Ok(started) => return Ok(started),
                    Err(asked) => asked,
                },
            };
            at.round += 1;
            let round = at.round;
            let questions = asked.input_requests.as_ref().map_or(0, |r| r.len());
            client.inner.rounds.admit(round, questions).map_err(over)?;
            let requests = asked.input_requests.filter(|r| !r.is_empty());
            let round_span = tracing::debug_span!("mcp.round", round, keys = ?Keys(requests.as_ref()));
            let responses = match requests {
                Some(r) => {
                    at.delay = client.inner.backoff.first;
                    at.event(&|| RoundEvent::NeedsInput { round, keys: r.keys().cloned().collect() });
                    let asking = asking::<M>(client, &params, round);
                    let limits = &client.inner.rounds;
                    Some(client.inner.callbacks.answer_all(r, asking, limits).instrument(round_span).await?)
                }
                None if asked.request_state.is_some() => {
                    tracing::debug!(parent: &round_span, delay_ms = at.delay.as_millis() as u64, "state only: backing off");
                    tokio::time::sleep(at.backing_off(client)).await;
                    None
                }
                None => return Err(Error::Protocol(crate::ProtocolError::EmptyInputRequired)),
            };
            // The state goes beside the params, not into them: written as it came.
            M::set_round(&mut params, responses, None);
            at.state = asked.request_state;
        }
    }
    .instrument(span)
    .await
}

/// Where a call driven by the client stands between its rounds.
struct Progress<'a> {
    sink: Option<&'a super::listen::NoticeSink>,
    /// The rounds answered so far.
    round: usize,
    /// How long a round that asks nothing waits before its state goes back.
    delay: std::time::Duration,
    /// The `requestState` a retry echoes (the first round's, if any, is the params' own).
    state: Option<String>,
    /// A refused state starts the call over once, from its first round.
    may_restart: bool,
}

impl<'a> Progress<'a> {
    fn new(client: &Client, sink: Option<&'a super::listen::NoticeSink>) -> Self {
        Self {
            sink,
            round: 0,
            delay: client.inner.backoff.first,
            state: None,
            may_restart: client.inner.restart_on_rejected_state,
        }
    }

    /// Tells the listener, if there is one, what `e` says (built only then: a round's
    /// keys are copied for the event).
    fn event(&self, e: &dyn Fn() -> RoundEvent) {
        if let Some(s) = self.sink {
            let _ = s.rounds.send(e());
        }
    }

    /// The call's end, told to the listener, or the questions of its next round.
    #[expect(
        clippy::result_large_err,
        reason = "taken apart at once by the loop; a box would cost every round an allocation"
    )]
    fn asked<C>(&self, answered: Answered<C>) -> Result<Started<C>, InputRequiredResult> {
        let rounds = self.round;
        match answered {
            Answered::Deferred(deferred) => {
                self.event(&|| RoundEvent::Deferred {
                    rounds,
                    extension: deferred.extension(),
                    result: deferred.result().to_owned(),
                });
                Ok(Started::Deferred(deferred))
            }
            Answered::Done(done) => {
                self.event(&|| RoundEvent::Done { rounds });
                Ok(Started::Done(done))
            }
            Answered::Asked(asked) => Err(asked),
        }
    }

    /// From the first round again, once (the params' answers are the caller's to clear).
    fn restart(&mut self, client: &Client) {
        let round = self.round;
        self.event(&|| RoundEvent::Rejected { round });
        self.may_restart = false;
        self.state = None;
        self.round = 0;
        self.delay = client.inner.backoff.first;
    }

    /// The wait before a round that asked nothing goes back, the next one doubled.
    fn backing_off(&mut self, client: &Client) -> std::time::Duration {
        let (round, delay) = (self.round, self.delay);
        self.event(&|| RoundEvent::BackingOff { round, delay });
        self.delay = (delay * 2).min(client.inner.backoff.max);
        delay
    }
}

/// The error a call past the client's bounds ends with.
fn over(over: Over) -> Error {
    match over {
        Over::Rounds(max_rounds) => Error::Input(crate::InputError::RoundsExceeded { max_rounds }),
        Over::Questions { asked, max } => {
            Error::Input(crate::InputError::TooManyRequests { asked, max })
        }
        // A client's rounds have no deadline of their own (each request has its own).
        Over::Deadline(took) => Error::Transport(crate::transport::TransportError::new(format!(
            "the input rounds took longer than {took:?}"
        ))),
    }
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
    /// A result of an extension's type (a task the server made of the request).
    Deferred(super::Deferred),
    /// Input required.
    Asked(InputRequiredResult),
}

/// Sends one round of `M` (`state`, when given, echoed beside params that carry
/// none) and reads its answer: as the method's result first, an extension's result (a
/// task) being the rare answer, told by the union's refusal of its `resultType`.
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
        // A type the method's union does not know: an extension's, if one the client
        // speaks gives it (only to a method the marker says may be answered so).
        Err(Error::Protocol(crate::ProtocolError::UnknownResultType(t))) if M::MAY_BECOME_TASK => {
            return match super::Deferred::of(client, M::METHOD, &t, raw) {
                Some(deferred) => Ok(Answered::Deferred(deferred)),
                None => Err(Error::Protocol(crate::ProtocolError::UnknownResultType(t))),
            };
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
    client.inner.rounds.admit(round + 1, 0).map_err(over)?;
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
