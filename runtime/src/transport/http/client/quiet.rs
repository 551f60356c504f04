//! The idle timeout of one exchange: the server must send something (the response head,
//! body bytes, an SSE event) at least every `limit`. One timer serves the whole
//! exchange: progress only notes the time, and the timer is re-armed only when it fires
//! after progress, so a fast exchange registers one timer, not one per wait.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::transport::{CallError, TransportError};

pub(super) struct Quiet {
    limit: Duration,
    last: Instant,
    sleep: Pin<Box<Sleep>>,
}

impl Quiet {
    pub(super) fn new(limit: Duration) -> Self {
        let now = Instant::now();
        Self {
            limit,
            last: now,
            sleep: Box::pin(tokio::time::sleep_until(now + limit)),
        }
    }

    /// Waits for `work`, failing when the server has been silent for the limit.
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
                    let due = self.last + self.limit;
                    if Instant::now() >= due {
                        return Err(CallError::Transport(TransportError::new(format!(
                            "the server sent nothing for {:?} (the idle timeout)",
                            self.limit
                        ))));
                    }
                    self.sleep.as_mut().reset(due);
                }
            }
        }
    }
}
