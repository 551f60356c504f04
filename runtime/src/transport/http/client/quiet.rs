//! The clocks of one exchange. The idle timeout: the server must send something (the
//! response head, body bytes, an SSE event) at least every `idle`. And, for a request,
//! its deadline: the response must come within `timeout`, which only a progress
//! notification pushes back (never past the hard maximum), so that a stream that keeps
//! sending other notifications, or drips a byte a second, is given up on. While the
//! server waits for the user (it sent the client a request of its own), only the hard
//! maximum counts.
//!
//! And a minimum rate: a message under way (a JSON body, an SSE event begun) must keep
//! arriving at [`MIN_BYTES_PER_SEC`] on average once it has taken [`RATE_GRACE`], so a
//! message dripped a byte at a time is given up on long before the deadline, even one
//! that progress keeps pushing back.
//!
//! One timer serves the whole exchange: progress only notes the time, and the timer is
//! re-armed only when it fires early, so a fast exchange registers one timer, not one
//! per wait.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::transport::{CallError, TransportError};

/// The slowest a message under way may arrive, on average from its first byte.
pub(crate) const MIN_BYTES_PER_SEC: u64 = 1024;

/// How long a message under way may take before its rate is judged.
pub(crate) const RATE_GRACE: Duration = Duration::from_secs(10);

/// A request's deadline: `timeout` from the start or the last progress, at most `hard`.
struct Deadline {
    timeout: Duration,
    due: Instant,
    hard: Instant,
}

pub(super) struct Quiet {
    idle: Duration,
    last: Instant,
    deadline: Option<Deadline>,
    sleep: Pin<Box<Sleep>>,
    /// The message under way: when its first byte came, and how many bytes since.
    under_way: Option<(Instant, u64)>,
}

impl Quiet {
    /// The idle timeout alone: for a stream with no response to wait for.
    pub(super) fn new(idle: Duration) -> Self {
        Self::armed(idle, Instant::now(), None)
    }

    /// The idle timeout and a request's deadline: `timeout`, pushed back by progress up
    /// to `max` from now.
    pub(super) fn request(idle: Duration, timeout: Duration, max: Duration) -> Self {
        let now = Instant::now();
        let hard = now + max;
        let due = (now + timeout).min(hard);
        Self::armed(idle, now, Some(Deadline { timeout, due, hard }))
    }

    /// The clocks from `now`, the timer set once for the first of them to come due.
    fn armed(idle: Duration, now: Instant, deadline: Option<Deadline>) -> Self {
        let first = first_due(now, idle, deadline.as_ref());
        Self {
            idle,
            last: now,
            deadline,
            sleep: Box::pin(tokio::time::sleep_until(first)),
            under_way: None,
        }
    }

    /// The server reported progress: the deadline is `timeout` from now (within the
    /// hard maximum).
    pub(super) fn progressed(&mut self) {
        if let Some(d) = &mut self.deadline {
            d.due = (Instant::now() + d.timeout).min(d.hard);
        }
    }

    /// The server asked the client something: the user may take a while, so only the
    /// hard maximum counts from here.
    pub(super) fn asked(&mut self) {
        if let Some(d) = &mut self.deadline {
            d.due = d.hard;
        }
    }

    /// `n` bytes of a message came; `pending` of them (and before them) are of a message
    /// not yet whole. Fails when that message is arriving under the minimum rate.
    pub(super) fn arrived(&mut self, n: usize, pending: usize) -> Result<(), CallError> {
        if pending == 0 {
            self.under_way = None;
            return Ok(());
        }
        let now = Instant::now();
        let (since, bytes) = self.under_way.get_or_insert((now, 0));
        *bytes += n.min(pending) as u64;
        let took = now.duration_since(*since);
        if took < RATE_GRACE || *bytes >= MIN_BYTES_PER_SEC * took.as_secs() {
            return Ok(());
        }
        let rate = *bytes / took.as_secs().max(1);
        Err(CallError::Transport(TransportError::new(format!(
            "gave up on a message arriving at {rate} bytes/s, under the minimum of \
             {MIN_BYTES_PER_SEC} bytes/s ({} bytes in {took:.0?})",
            *bytes
        ))))
    }

    fn next_due(&self) -> Instant {
        first_due(self.last, self.idle, self.deadline.as_ref())
    }

    /// Waits for `work`, failing when the server has been silent for the idle timeout
    /// or the request's deadline passes.
    // A future written out, not an `async fn`: one of those keeps `work` twice (as its
    // argument and as the local it is pinned in), and every exchange carries this one.
    pub(super) fn within<F: Future>(&mut self, work: F) -> Within<'_, F> {
        Within { quiet: self, work }
    }

    /// Why the clock that fired ends the wait, if it does; else it is set again.
    fn fired(&mut self) -> Option<CallError> {
        let now = Instant::now();
        if let Some(d) = self.deadline.as_ref().filter(|d| now >= d.due) {
            let why = if d.due == d.hard {
                "the longest a request may take".to_owned()
            } else {
                format!("{:?} without the response or progress", d.timeout)
            };
            return Some(CallError::Transport(TransportError::new(format!(
                "gave up waiting for the response: {why} (the request timeout)"
            ))));
        }
        if now >= self.last + self.idle {
            return Some(CallError::Transport(TransportError::new(format!(
                "the server sent nothing for {:?} (the idle timeout)",
                self.idle
            ))));
        }
        let due = self.next_due();
        self.sleep.as_mut().reset(due);
        None
    }
}

/// When the first of the clocks comes due: the idle timeout from `last`, or the
/// request's deadline if that is sooner.
fn first_due(last: Instant, idle: Duration, deadline: Option<&Deadline>) -> Instant {
    let idle = last + idle;
    deadline.map_or(idle, |d| idle.min(d.due))
}

pin_project_lite::pin_project! {
    /// [`Quiet::within`]'s wait: `work`, unless a clock fires first.
    pub(super) struct Within<'a, F> {
        quiet: &'a mut Quiet,
        #[pin]
        work: F,
    }
}

impl<F: Future> Future for Within<'_, F> {
    type Output = Result<F::Output, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        // The work first: an answer that came with the clock's firing still counts.
        if let Poll::Ready(out) = this.work.poll(cx) {
            this.quiet.last = Instant::now();
            return Poll::Ready(Ok(out));
        }
        while this.quiet.sleep.as_mut().poll(cx).is_ready() {
            if let Some(error) = this.quiet.fired() {
                return Poll::Ready(Err(error));
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[tokio::test(start_paused = true)]
    async fn a_message_dripped_under_the_minimum_rate_is_given_up_on_after_the_grace() {
        let mut quiet = Quiet::new(Duration::from_secs(120));
        let mut pending = 0;
        let failed = loop {
            pending += 1;
            if let Err(e) = quiet.arrived(1, pending) {
                break e;
            }
            tokio::time::advance(SECOND).await;
        };
        assert_eq!(pending, 11, "judged once the grace had passed");
        assert!(failed.to_string().contains("under the minimum"), "{failed}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_message_over_the_minimum_rate_and_whole_messages_pass() {
        let mut quiet = Quiet::new(Duration::from_secs(120));
        for second in 1..=60 {
            quiet.arrived(2048, second * 2048).unwrap();
            tokio::time::advance(SECOND).await;
        }
        // A whole message each second, however small: nothing is under way between them.
        for _ in 0..60 {
            quiet.arrived(1, 0).unwrap();
            tokio::time::advance(SECOND).await;
        }
    }
}
