//! The automatic input-required loop.

use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Client, RoundEvent};
use crate::Error;
use crate::types::rpc::{ClientRequestMethod, MayRequireInput};
use crate::types::v2026_07_28::{
    CallToolRequestParams, GetPromptRequestParams, InputRequests, InputRequiredResult,
    InputResponses, Outcome, ReadResourceRequestParams, method,
};

/// A method whose result may be input-required, and how a retry is written into its
/// params. Implemented for `tools/call`, `prompts/get` and `resources/read`.
pub trait InputLoopMethod: ClientRequestMethod + MayRequireInput {
    /// The result as the union.
    fn outcome(result: Self::Result) -> Outcome<Self::Complete>;
    /// Sets the answers and the echoed state for the next round.
    fn set_round(
        params: &mut Self::Params,
        responses: Option<InputResponses>,
        state: Option<String>,
    );
    /// Whether the server may answer this request with a task: only a tool call may, so
    /// for the others a task is an invalid answer.
    const MAY_BECOME_TASK: bool = false;
    /// The complete result of a task this request became (the task's `result`).
    fn task_result(result: serde_json::Value) -> crate::Result<Self::Complete> {
        let _ = result;
        Err(Error::UnknownResultType("task".into()))
    }
}

/// Where an input loop stopped: the complete result, or the task the server made of
/// the request.
pub(crate) enum Started<C> {
    Done(C),
    Task(Box<crate::types::ext_tasks::CreateTaskResult>),
}

macro_rules! input_loop_method {
    ($marker:ty, $params:ty, task) => {
        input_loop_method!(@ $marker, $params,
            const MAY_BECOME_TASK: bool = true;
            fn task_result(result: serde_json::Value) -> crate::Result<Self::Complete> {
                serde_json::from_value(result).map_err(|source| Error::Decode {
                    method: <$marker as crate::types::rpc::Request>::METHOD,
                    source,
                })
            }
        );
    };
    ($marker:ty, $params:ty) => {
        input_loop_method!(@ $marker, $params,);
    };
    (@ $marker:ty, $params:ty, $($extra:tt)*) => {
        impl InputLoopMethod for $marker {
            fn outcome(result: Self::Result) -> Outcome<Self::Complete> {
                result
            }
            fn set_round(
                params: &mut $params,
                responses: Option<InputResponses>,
                state: Option<String>,
            ) {
                params.input_responses = responses;
                params.request_state = state;
            }
            $($extra)*
        }
    };
}

input_loop_method!(method::CallTool, CallToolRequestParams, task);
input_loop_method!(method::GetPrompt, GetPromptRequestParams);
input_loop_method!(method::ReadResource, ReadResourceRequestParams);

impl Client {
    /// Runs the input-required loop for method `M` from `params` to its complete result.
    ///
    /// Each round's input requests go to the registered callbacks concurrently; the
    /// retry is the same method with the same params, a new id, the answers under the
    /// same keys and `requestState` echoed byte for byte. A round with state and no
    /// requests waits 50 ms, doubling to 250 ms, before retrying.
    ///
    /// A request the server makes a task (a tool call, for a client that declares the
    /// tasks extension) is followed to its end, and cancelled if this future is dropped
    /// first.
    pub async fn run_input_loop<M: InputLoopMethod>(
        &self,
        params: M::Params,
    ) -> crate::Result<M::Complete> {
        self.run_input_loop_with_notices::<M>(params, None).await
    }

    /// [`run_input_loop`](Self::run_input_loop), handing every notification the server
    /// sends on the streams of the call's rounds (progress, log entries) to `notices`,
    /// in order, as they arrive: one sink across all the rounds.
    pub async fn run_input_loop_with_notices<M: InputLoopMethod>(
        &self,
        params: M::Params,
        notices: Option<mpsc::UnboundedSender<super::Notice>>,
    ) -> crate::Result<M::Complete> {
        let sink = self.notice_sink(notices);
        let started = self
            .run_input_loop_until_task::<M>(params, sink.as_ref())
            .await;
        if let Some(sink) = sink {
            sink.close().await;
        }
        match started? {
            Started::Done(done) => Ok(done),
            Started::Task(created) => M::task_result(self.await_task(*created).await?),
        }
    }

    /// The input loop up to the complete result or a task.
    pub(crate) async fn run_input_loop_until_task<M: InputLoopMethod>(
        &self,
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
            let mut delay = self.inner.backoff.first;
            let mut round = 0usize;
            // A refused state starts the call over once, from its first round: the
            // params without answers or state are the first round's.
            let mut may_restart = self.inner.restart_on_rejected_state;
            loop {
                let asked = match self.one_round::<M>(&params, notifications).await {
                    Err(Error::StateRejected(_)) if round > 0 && may_restart => {
                        tracing::info!(method = M::METHOD, round, "the server refused the state: starting the call over");
                        event(&|| RoundEvent::Rejected { round });
                        may_restart = false;
                        M::set_round(&mut params, None, None);
                        round = 0;
                        delay = self.inner.backoff.first;
                        continue;
                    }
                    Err(e) => return Err(e),
                    Ok(Answered::Task(created)) => return Ok(Started::Task(created)),
                    Ok(Answered::Done(done)) => {
                        event(&|| RoundEvent::Done { rounds: round });
                        return Ok(Started::Done(done));
                    }
                    Ok(Answered::Asked(asked)) => asked,
                };
                round = self.count_round(round)?;
                let requests = asked.input_requests.filter(|r| !r.is_empty());
                let round_span = tracing::debug_span!("mcp.round", round, keys = ?Keys(requests.as_ref()));
                let responses = match requests {
                    Some(r) => {
                        delay = self.inner.backoff.first;
                        event(&|| RoundEvent::NeedsInput { round, keys: r.keys().cloned().collect() });
                        let asking = super::InputContext {
                            key: None,
                            method: Some(M::METHOD),
                            target: M::target(&params).map(str::to_owned),
                            arguments: M::arguments(&params)
                                .and_then(|a| serde_json::from_str(a.get()).ok())
                                .map(std::sync::Arc::new),
                            round,
                            task: None,
                            server: self.inner.server_name.clone(),
                        };
                        Some(self.inner.callbacks.answer_all(r, &asking).instrument(round_span).await?)
                    }
                    None if asked.request_state.is_some() => {
                        tracing::debug!(parent: &round_span, delay_ms = delay.as_millis() as u64, "state only: backing off");
                        event(&|| RoundEvent::BackingOff { round, delay });
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(self.inner.backoff.max);
                        None
                    }
                    None => return Err(Error::EmptyInputRequired),
                };
                M::set_round(&mut params, responses, asked.request_state);
            }
        }
        .instrument(span)
        .await
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

impl Client {
    /// Sends one round of `M` and reads its answer: as the method's result first, a
    /// task being the rare answer, told by the union's refusal of its `resultType`.
    pub(crate) async fn one_round<M: InputLoopMethod>(
        &self,
        params: &M::Params,
        notifications: Option<&mpsc::UnboundedSender<serde_json::Value>>,
    ) -> crate::Result<Answered<M::Complete>> {
        let raw = self
            .send_raw::<M>(params, M::target(params), notifications)
            .await?;
        let result = match self.decode::<M>(&raw) {
            Err(Error::UnknownResultType(t)) if t == "task" && M::MAY_BECOME_TASK => {
                let created =
                    super::tasks::created_task(&raw)?.ok_or(Error::UnknownResultType(t))?;
                return Ok(Answered::Task(Box::new(created)));
            }
            other => other?,
        };
        Ok(match M::outcome(result) {
            Outcome::Complete(done) => Answered::Done(done),
            Outcome::InputRequired(asked) => Answered::Asked(asked),
        })
    }

    /// The round after `round`, within the client's cap.
    pub(crate) fn count_round(&self, round: usize) -> crate::Result<usize> {
        let max_rounds = self.inner.max_rounds;
        if round >= max_rounds {
            return Err(Error::InputRequiredRoundsExceeded { max_rounds });
        }
        Ok(round + 1)
    }
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
