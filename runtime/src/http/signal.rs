//! A signal said once and waited on between a connection's requests: the endpoint's
//! drain, and the reaper's cut of a connection over its budget.
//!
//! A `CancellationToken` or a bare `Notify` would do, but each question to them takes a
//! mutex (a token's whether it was cancelled; each poll of either's wait, which registers
//! again), and a connection asks three or four times a request. Here the question is an
//! atomic load, and a wait registers once for its life: polled again by the same task,
//! it only loads.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// A signal, said at most once.
#[derive(Debug, Default)]
pub(super) struct Signal {
    said: AtomicBool,
    notify: Notify,
}

impl Signal {
    /// Says the signal: every wait ends, and [`said`](Self::said) says so from now on.
    pub(super) fn say(&self) {
        // Said before the waiters are woken: a wait woken, or polled after, sees it.
        self.said.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Whether the signal was said.
    pub(super) fn said(&self) -> bool {
        self.said.load(Ordering::Acquire)
    }

    /// A wait for the signal, meant to be kept (pinned) and polled again and again.
    pub(super) fn wait(&self) -> Wait<'_> {
        Wait {
            signal: self,
            waker: None,
            notified: self.notify.notified(),
        }
    }
}

pin_project_lite::pin_project! {
    /// Ends when the signal is said ([`Signal::wait`]).
    pub(super) struct Wait<'a> {
        signal: &'a Signal,
        // The waker `notified` was last polled with: while the task polling is the same,
        // it stays registered and is not polled again.
        waker: Option<Waker>,
        #[pin]
        notified: Notified<'a>,
    }
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if this.signal.said() {
            return Poll::Ready(());
        }
        if this.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            return Poll::Pending;
        }
        if this.notified.poll(cx).is_ready() {
            return Poll::Ready(());
        }
        *this.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_wait_polled_many_times_ends_when_the_signal_is_said() {
        let drain = Arc::new(Signal::default());
        let mut wait = pin!(drain.wait());
        for _ in 0..3 {
            let polled = tokio::time::timeout(Duration::from_millis(5), wait.as_mut()).await;
            assert!(polled.is_err(), "the signal was not said");
        }
        assert!(!drain.said());
        let saying = Arc::clone(&drain);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            saying.say();
        });
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("the wait ends");
        assert!(drain.said());
    }

    #[tokio::test]
    async fn a_wait_made_after_the_signal_ends_at_once() {
        let drain = Signal::default();
        drain.say();
        tokio::time::timeout(Duration::from_secs(5), drain.wait())
            .await
            .expect("the wait ends");
    }

    /// A waker that records whether it was woken.
    struct Flag(AtomicBool);

    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_wait_polled_by_another_task_wakes_that_task() {
        let signal = Signal::default();
        let mut wait = Box::pin(signal.wait());
        let (first, second) = (
            Arc::new(Flag(AtomicBool::new(false))),
            Arc::new(Flag(AtomicBool::new(false))),
        );
        for flag in [&first, &second] {
            let waker = Waker::from(Arc::clone(flag));
            let polled = wait.as_mut().poll(&mut Context::from_waker(&waker));
            assert!(polled.is_pending());
        }
        signal.say();
        assert!(
            second.0.load(Ordering::SeqCst),
            "the task that polled last is woken"
        );
        let waker = Waker::from(second);
        assert!(
            wait.as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready()
        );
    }
}
