//! Where a request's messages to its client go while it runs: progress and log
//! notifications, and on a 2025-11-25 session the server's own requests.
//!
//! A transport that has one stream per connection hands every request a clone of its
//! channel's sender ([`Outbound::from`]). The HTTP endpoint has a stream per request,
//! which most requests never use; for it [`stream`] makes a queue that costs one small
//! allocation, where a `tokio` channel (an aligned, cache-padded block and a block of
//! slots) cost more than the rest of a short request's bookkeeping.

// Only the HTTP endpoint makes per-request streams; without it they go unused.
#![cfg_attr(not(feature = "http-server"), allow(dead_code))]

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};

use tokio::sync::mpsc;

/// Where a request's messages to its client go: each one a JSON-RPC message, as text.
pub(crate) struct Outbound(Sink);

enum Sink {
    Channel(mpsc::UnboundedSender<String>),
    Stream(Arc<Shared>),
}

impl Outbound {
    /// Sends `message`; gives it back when nobody reads this request's messages any more
    /// (its stream is gone).
    pub(crate) fn send(&self, message: String) -> Result<(), String> {
        match &self.0 {
            Sink::Channel(sender) => sender.send(message).map_err(|e| e.0),
            Sink::Stream(shared) => {
                let waker = {
                    let mut state = shared.lock();
                    if state.closed {
                        return Err(message);
                    }
                    state.queue.push_back(message);
                    state.waker.take()
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
                Ok(())
            }
        }
    }
}

impl From<mpsc::UnboundedSender<String>> for Outbound {
    fn from(sender: mpsc::UnboundedSender<String>) -> Self {
        Self(Sink::Channel(sender))
    }
}

impl Clone for Outbound {
    fn clone(&self) -> Self {
        match &self.0 {
            Sink::Channel(sender) => Self(Sink::Channel(sender.clone())),
            Sink::Stream(shared) => {
                shared.lock().senders += 1;
                Self(Sink::Stream(Arc::clone(shared)))
            }
        }
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        if let Sink::Stream(shared) = &self.0 {
            let waker = {
                let mut state = shared.lock();
                state.senders -= 1;
                // The last sender gone: a reader waiting for more learns there is none.
                (state.senders == 0).then(|| state.waker.take()).flatten()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl fmt::Debug for Outbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Sink::Channel(_) => "Outbound(channel)",
            Sink::Stream(_) => "Outbound(stream)",
        })
    }
}

/// The reading end of a request's own stream of messages.
pub(crate) struct Messages(Arc<Shared>);

/// A stream for one request: the sender its handler gets, and the end that reads it.
pub(crate) fn stream() -> (Outbound, Messages) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            senders: 1,
            closed: false,
            waker: None,
        }),
    });
    (
        Outbound(Sink::Stream(Arc::clone(&shared))),
        Messages(shared),
    )
}

impl Messages {
    /// A message already sent, if there is one.
    pub(crate) fn try_recv(&mut self) -> Option<String> {
        self.0.lock().queue.pop_front()
    }

    /// The next message; `None` once every sender is gone and every message read.
    pub(crate) async fn recv(&mut self) -> Option<String> {
        std::future::poll_fn(|cx| {
            let mut state = self.0.lock();
            if let Some(message) = state.queue.pop_front() {
                return Poll::Ready(Some(message));
            }
            if state.senders == 0 {
                return Poll::Ready(None);
            }
            match &mut state.waker {
                Some(waker) if waker.will_wake(cx.waker()) => {}
                slot => *slot = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
        .await
    }
}

impl Drop for Messages {
    fn drop(&mut self) {
        // Nobody reads any more: later sends fail, and what was queued is freed now.
        let mut state = self.0.lock();
        state.closed = true;
        state.queue.clear();
    }
}

struct Shared {
    state: Mutex<State>,
}

struct State {
    queue: VecDeque<String>,
    /// The [`Outbound`]s alive.
    senders: usize,
    /// Whether the reading end is gone.
    closed: bool,
    /// The reader waiting for a message.
    waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing is left half-done under the lock: a panic elsewhere cannot poison it
        // into a wrong state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_arrive_in_order_and_end_with_the_last_sender() {
        let (out, mut messages) = stream();
        let copy = out.clone();
        out.send("a".into()).expect("open");
        copy.send("b".into()).expect("open");
        assert_eq!(messages.try_recv().as_deref(), Some("a"));
        drop(out);
        let waiting = tokio::spawn(async move {
            let first = messages.recv().await;
            let end = messages.recv().await;
            (first, end)
        });
        tokio::task::yield_now().await;
        drop(copy);
        let (first, end) = waiting.await.expect("joined");
        assert_eq!(first.as_deref(), Some("b"));
        assert_eq!(end, None);
    }

    #[tokio::test]
    async fn a_waiting_reader_is_woken_by_a_send() {
        let (out, mut messages) = stream();
        let waiting = tokio::spawn(async move { messages.recv().await });
        tokio::task::yield_now().await;
        out.send("late".into()).expect("open");
        assert_eq!(waiting.await.expect("joined").as_deref(), Some("late"));
    }

    #[test]
    fn a_send_after_the_reader_left_is_given_back() {
        let (out, messages) = stream();
        drop(messages);
        assert_eq!(out.send("x".into()), Err("x".to_owned()));
        let (tx, rx) = mpsc::unbounded_channel();
        let out = Outbound::from(tx);
        drop(rx);
        assert_eq!(out.send("y".into()), Err("y".to_owned()));
    }
}
