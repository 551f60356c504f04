//! One engine for input rounds: a call that answers input-required is attempted again
//! with the answers and the state of the round before, until it completes, within one
//! set of bounds ([`RoundLimits`]): how many rounds, how many questions a round may ask,
//! how long the whole exchange may take. Each driver says only what a round is to it
//! ([`Rounds`]): how the call is attempted and how a round's questions are answered.

use std::future::Future;
use std::time::Duration;

use crate::types::v2026_07_28::InputRequiredResult;

/// The bounds of one call's input rounds, wherever they are driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoundLimits {
    /// The most rounds that may ask for input; one more asking ends the call.
    pub(crate) max_rounds: usize,
    /// The most questions (input requests) one round may ask.
    pub(crate) max_questions: usize,
    /// How long the whole exchange may take, from the engine's start.
    pub(crate) deadline: Option<Duration>,
    /// How many of a round's questions are asked at once.
    pub(crate) concurrency: usize,
}

impl RoundLimits {
    /// Whether round `round` (from 1) asking `questions` questions keeps to these
    /// bounds: what [`drive`] asks of every round, and what a driver whose rounds are
    /// driven from elsewhere (the gateway's bridge, held between its client's retries)
    /// asks of each of its own.
    pub(crate) fn admit(&self, round: usize, questions: usize) -> Result<(), Over> {
        if round > self.max_rounds {
            return Err(Over::Rounds(self.max_rounds));
        }
        if questions > self.max_questions {
            let max = self.max_questions;
            return Err(Over::Questions {
                asked: questions,
                max,
            });
        }
        Ok(())
    }
}

/// Where an attempt left the call.
#[allow(clippy::large_enum_variant)] // taken apart as soon as it is returned
pub(crate) enum Step<D> {
    /// Complete.
    Done(D),
    /// Asking for input.
    Asked(InputRequiredResult),
}

/// The bound a call went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Over {
    /// It asked for input in more rounds than [`RoundLimits::max_rounds`].
    Rounds(usize),
    /// A round asked more questions than [`RoundLimits::max_questions`].
    Questions {
        /// How many it asked.
        asked: usize,
        /// The bound.
        max: usize,
    },
    /// The exchange took longer than [`RoundLimits::deadline`].
    Deadline(Duration),
}

/// What a round is to one driver.
pub(crate) trait Rounds: Send {
    /// What the call completes with.
    type Done: Send;
    /// What ends it otherwise.
    type Error: Send;

    /// Round `round` (from 1): the questions of `asked` answered (at most
    /// `limits.concurrency` asked at once; none, when it asked none and its state alone
    /// goes back), then the call attempted again with the answers and `asked`'s state.
    /// One future a round: the answering and the attempt share its room.
    fn next(
        &mut self,
        round: usize,
        asked: InputRequiredResult,
        limits: &RoundLimits,
    ) -> impl Future<Output = Result<Step<Self::Done>, Self::Error>> + Send;

    /// The error `over` ends the call with.
    fn over(&self, over: Over) -> Self::Error;
}

/// Drives `rounds` from `first`, the call's first answer, to its end within `limits`.
pub(crate) async fn drive<R: Rounds>(
    rounds: &mut R,
    limits: &RoundLimits,
    first: Step<R::Done>,
) -> Result<R::Done, R::Error> {
    let deadline = limits
        .deadline
        .map(|d| (tokio::time::Instant::now() + d, d));
    let mut step = first;
    let mut round = 0;
    loop {
        let asked = match step {
            Step::Done(done) => return Ok(done),
            Step::Asked(asked) => asked,
        };
        round += 1;
        let questions = asked.input_requests.as_ref().map_or(0, |r| r.len());
        limits
            .admit(round, questions)
            .map_err(|over| rounds.over(over))?;
        // One future for the round, with or without a deadline: a branch for each
        // would hold it twice.
        step = match Within::new(rounds.next(round, asked, limits), deadline).await {
            Ok(next) => next?,
            Err(over) => return Err(rounds.over(over)),
        };
    }
}

pin_project_lite::pin_project! {
    /// `work`, unless the deadline passes first (then `Over::Deadline`).
    struct Within<F> {
        #[pin]
        work: F,
        #[pin]
        timer: Option<tokio::time::Sleep>,
        whole: Duration,
    }
}

impl<F> Within<F> {
    fn new(work: F, deadline: Option<(tokio::time::Instant, Duration)>) -> Self {
        Self {
            work,
            timer: deadline.map(|(at, _)| tokio::time::sleep_until(at)),
            whole: deadline.map(|(_, whole)| whole).unwrap_or_default(),
        }
    }
}

impl<F: Future> Future for Within<F> {
    type Output = Result<F::Output, Over>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.project();
        if let std::task::Poll::Ready(out) = this.work.poll(cx) {
            return std::task::Poll::Ready(Ok(out));
        }
        match this.timer.as_pin_mut().map(|timer| timer.poll(cx)) {
            Some(std::task::Poll::Ready(())) => {
                std::task::Poll::Ready(Err(Over::Deadline(*this.whole)))
            }
            _ => std::task::Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::v2026_07_28::{InputRequest, InputRequests, InputResponses};

    /// A call that asks `questions` questions a round until round `done_after`, its
    /// answers taking `answer_for`.
    struct Asking {
        questions: usize,
        done_after: usize,
        answer_for: Duration,
        attempts: usize,
    }

    fn asked(questions: usize) -> InputRequiredResult {
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let form = crate::ask::elicit_form("Region?", schema);
        let request: InputRequest = form.unwrap_or_else(|e| panic!("{e}"));
        let mut result = InputRequiredResult::new();
        result.input_requests = Some(InputRequests(
            (0..questions)
                .map(|i| (format!("q{i}"), request.clone()))
                .collect(),
        ));
        result.request_state = Some("s".into());
        result
    }

    impl Rounds for Asking {
        type Done = usize;
        type Error = Over;

        async fn next(
            &mut self,
            round: usize,
            asked: InputRequiredResult,
            _limits: &RoundLimits,
        ) -> Result<Step<usize>, Over> {
            tokio::time::sleep(self.answer_for).await;
            let mut answers = InputResponses::new();
            for key in asked.input_requests.iter().flat_map(|r| r.keys()) {
                let accepted = crate::ask::accept([("region", "eu")]);
                answers
                    .insert(key.clone(), accepted.into())
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            assert_eq!(answers.len(), self.questions);
            assert_eq!(asked.request_state.as_deref(), Some("s"));
            self.attempts += 1;
            Ok(if round >= self.done_after {
                Step::Done(round)
            } else {
                Step::Asked(self::asked(self.questions))
            })
        }

        fn over(&self, over: Over) -> Over {
            over
        }
    }

    const LIMITS: RoundLimits = RoundLimits {
        max_rounds: 3,
        max_questions: 2,
        deadline: Some(Duration::from_secs(60)),
        concurrency: 1,
    };

    async fn run(call: &mut Asking, limits: RoundLimits) -> Result<usize, Over> {
        let first = Step::Asked(asked(call.questions));
        drive(call, &limits, first).await
    }

    fn asking(questions: usize, done_after: usize) -> Asking {
        Asking {
            questions,
            done_after,
            answer_for: Duration::ZERO,
            attempts: 0,
        }
    }

    #[tokio::test]
    async fn a_call_completes_within_its_rounds() {
        let mut call = asking(2, 3);
        assert_eq!(run(&mut call, LIMITS).await, Ok(3));
        assert_eq!(call.attempts, 3);
    }

    #[tokio::test]
    async fn a_round_past_the_cap_ends_the_call_unanswered() {
        let mut call = asking(1, 4);
        assert_eq!(run(&mut call, LIMITS).await, Err(Over::Rounds(3)));
        assert_eq!(
            call.attempts, 3,
            "the fourth round's questions were not asked"
        );
    }

    #[tokio::test]
    async fn a_round_asking_too_much_is_refused_before_anything_is_asked() {
        let mut call = asking(3, 1);
        let over = Over::Questions { asked: 3, max: 2 };
        assert_eq!(run(&mut call, LIMITS).await, Err(over));
        assert_eq!(call.attempts, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_covers_the_whole_exchange() {
        let mut call = Asking {
            answer_for: Duration::from_secs(25),
            ..asking(1, 3)
        };
        let over = Over::Deadline(Duration::from_secs(60));
        assert_eq!(run(&mut call, LIMITS).await, Err(over));
        assert_eq!(
            call.attempts, 2,
            "two rounds fit in the minute, the third did not"
        );
        let unbounded = RoundLimits {
            deadline: None,
            ..LIMITS
        };
        assert_eq!(run(&mut asking(1, 3), unbounded).await, Ok(3));
    }
}
