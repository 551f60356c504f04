//! The clocks of one exchange. The idle timeout: the server must send something (the
//! response head, body bytes, an SSE event) at least every `idle`. And, for a request,
//! its deadline: the response must come within `timeout`, which only a progress
//! notification pushes back (never past the hard maximum), so that a stream that keeps
//! sending other notifications, or drips a byte a second, is given up on. While the
//! server waits for the user (it sent the client a request of its own), only the hard
//! maximum counts.
//!
//! One timer serves the whole exchange: progress only notes the time, and the timer is
//! re-armed only when it fires early, so a fast exchange registers one timer, not one
//! per wait.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::transport::{CallError, TransportError};

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
}

impl Quiet {
    /// The idle timeout alone: for a stream with no response to wait for.
    pub(super) fn new(idle: Duration) -> Self {
        let now = Instant::now();
        Self {
            idle,
            last: now,
            deadline: None,
            sleep: Box::pin(tokio::time::sleep_until(now + idle)),
        }
    }

    /// The idle timeout and a request's deadline: `timeout`, pushed back by progress up
    /// to `max` from now.
    pub(super) fn request(idle: Duration, timeout: Duration, max: Duration) -> Self {
        let mut quiet = Self::new(idle);
        let hard = quiet.last + max;
        let due = (quiet.last + timeout).min(hard);
        quiet.deadline = Some(Deadline { timeout, due, hard });
        let first = quiet.next_due();
        quiet.sleep.as_mut().reset(first);
        quiet
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

    fn next_due(&self) -> Instant {
        let idle = self.last + self.idle;
        self.deadline.as_ref().map_or(idle, |d| idle.min(d.due))
    }

    /// Waits for `work`, failing when the server has been silent for the idle timeout
    /// or the request's deadline passes.
    pub(super) async fn within<T>(
        &mut self,
        work: impl Future<Output = T>,
    ) -> Result<T, CallError> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                out = &mut work => {
                    self.last = Instant::now();
                    return Ok(out);
                }
                () = self.sleep.as_mut() => {
                    let now = Instant::now();
                    if let Some(d) = self.deadline.as_ref().filter(|d| now >= d.due) {
                        let why = if d.due == d.hard {
                            "the longest a request may take".to_owned()
                        } else {
                            format!("{:?} without the response or progress", d.timeout)
                        };
                        return Err(CallError::Transport(TransportError::new(format!(
                            "gave up waiting for the response: {why} (the request timeout)"
                        ))));
                    }
                    if now >= self.last + self.idle {
                        return Err(CallError::Transport(TransportError::new(format!(
                            "the server sent nothing for {:?} (the idle timeout)",
                            self.idle
                        ))));
                    }
                    let due = self.next_due();
                    self.sleep.as_mut().reset(due);
                }
            }
        }
    }
}
