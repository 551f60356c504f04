//! The connections of one endpoint and what each is doing: waiting, sending a request's
//! head or body, or being served. The accept loop (`listen.rs`) registers each one; a
//! reaper closes those over a budget. At the connection cap, a kept-alive connection
//! idle between requests makes room for a new one at once, the longest idle first;
//! failing that, the one that has waited longest in its head, if it has waited at least
//! [`RACE`]: a connection newer than that may have its first request on its way (a
//! fresh one's may sit unread in the socket), and closing it would drop that request
//! without an answer. When no connection can go, the new one is refused (`overload.rs`).
//!
//! The hot path touches two atomics per phase change and no clock: time is a coarse
//! millisecond counter the reaper advances on each tick.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::signal::{Signal, Wait};
use crate::util::lock;

mod watched;

pub(crate) use watched::Watched;
#[cfg_attr(not(feature = "http-server-h2"), allow(unused_imports))]
pub(super) use watched::write_through;

/// What a connection is doing, in the top three bits of its state word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Between requests (keep-alive), with nothing received yet.
    Idle = 0,
    /// Receiving a request's head (a fresh connection starts here).
    Head = 1,
    /// Receiving a request's body.
    Body = 2,
    /// The request's handler is running; its response has not started.
    Serving = 3,
    /// The response is going out (a JSON body, or an SSE stream until it ends).
    Writing = 4,
}

const PHASE_SHIFT: u32 = 61;
const SINCE_MASK: u64 = (1 << PHASE_SHIFT) - 1;

impl Phase {
    fn from_bits(bits: u64) -> Self {
        match bits >> PHASE_SHIFT {
            0 => Self::Idle,
            1 => Self::Head,
            2 => Self::Body,
            3 => Self::Serving,
            _ => Self::Writing,
        }
    }
}

/// The budgets the reaper enforces, per connection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budgets {
    pub(crate) header: Duration,
    pub(crate) body: Duration,
    pub(crate) idle: Duration,
    pub(crate) request: Option<Duration>,
}

impl Budgets {
    fn allows(&self, phase: Phase, age: Duration) -> bool {
        match phase {
            Phase::Idle => age <= self.idle,
            Phase::Head => age <= self.header,
            Phase::Body => age <= self.body,
            // The request budget runs from the body's end to the response's: the phase
            // change in between restarts the clock, so Writing counts from Serving's
            // start (see Conn::writing).
            Phase::Serving | Phase::Writing => self.request.is_none_or(|limit| age <= limit),
        }
    }

    /// How often the reaper looks: an eighth of the smallest budget, within 5–250 ms.
    pub(crate) fn tick(&self) -> Duration {
        let smallest = [
            Some(self.header),
            Some(self.body),
            Some(self.idle),
            self.request,
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(Duration::from_secs(1));
        (smallest / 8).clamp(Duration::from_millis(5), Duration::from_millis(250))
    }
}

/// The coarse clock: milliseconds since the endpoint started, advanced by the reaper.
pub(crate) struct Clock {
    start: Instant,
    now_ms: AtomicU64,
}

impl Clock {
    fn new() -> Self {
        Self {
            start: Instant::now(),
            now_ms: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        self.now_ms.load(Ordering::Relaxed)
    }

    fn advance(&self) -> u64 {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(SINCE_MASK);
        self.now_ms.store(ms.min(SINCE_MASK), Ordering::Relaxed);
        ms
    }
}

/// One connection's state, shared by its task, its I/O and the reaper.
pub(crate) struct Conn {
    /// The client's address: who holds the connection when its requests carry no
    /// credential.
    pub(crate) peer: Option<std::net::IpAddr>,
    state: AtomicU64,
    /// Requests whose response has not finished (HTTP/1: at most one).
    in_flight: AtomicU32,
    /// HTTP/2: bytes arriving between requests (pings, settings) do not start a request
    /// head, so they do not end the idle budget.
    multiplexed: AtomicBool,
    /// Cuts the connection wherever it is: a request or response over its budget.
    kill: Signal,
    /// A waiting connection (idle, or in a head over its budget, or at the cap) is to
    /// close: while it waits, its socket reads its end once nothing more has arrived
    /// (`Watched`), so a request already in it is served, not reset with the
    /// connection. A request that starts first voids it.
    evicting: AtomicBool,
    /// Evicted by the cap for a newer connection (not by a budget, which closes it).
    displaced: AtomicBool,
    /// The task reading the socket, woken for an eviction.
    reader: AtomicWaker,
    registry: Arc<Registry>,
}

impl Conn {
    fn set(&self, phase: Phase) {
        let since = self.registry.clock.now();
        self.state
            .store(((phase as u64) << PHASE_SHIFT) | since, Ordering::Relaxed);
    }

    fn phase(&self) -> (Phase, u64) {
        let bits = self.state.load(Ordering::Relaxed);
        (Phase::from_bits(bits), bits & SINCE_MASK)
    }

    /// A request's head arrived: its body comes next.
    pub(crate) fn request_started(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.set(Phase::Body);
        if self.evicting.load(Ordering::Relaxed) && self.evicting.swap(false, Ordering::Relaxed) {
            self.displaced.store(false, Ordering::Relaxed);
            // Chosen while it waited, it has a request now: it stays, and the cap looks
            // again for a connection to close.
            self.registry.left.notify_waiters();
        }
        RequestGuard(Arc::clone(self))
    }

    /// The body is in: from here the whole-request budget counts.
    pub(crate) fn serving(&self) {
        self.set(Phase::Serving);
    }

    /// The handler answered: its response starts going out. The request budget keeps
    /// counting from when the handler started.
    pub(crate) fn writing(&self) {
        let bits = self.state.load(Ordering::Relaxed);
        if Phase::from_bits(bits) == Phase::Serving {
            let since = bits & SINCE_MASK;
            self.state.store(
                ((Phase::Writing as u64) << PHASE_SHIFT) | since,
                Ordering::Relaxed,
            );
        }
    }

    /// The connection carries HTTP/2 from here on: see `multiplexed`.
    #[cfg(feature = "http-server-h2")]
    pub(crate) fn multiplex(&self) {
        self.multiplexed.store(true, Ordering::Relaxed);
    }

    /// Resolves when the reaper cuts this connection, busy over a budget.
    pub(super) fn killed(&self) -> Wait<'_> {
        self.kill.wait()
    }

    /// Closes the connection while it waits, for a newer one: see `evicting`, and
    /// `give_up_place`.
    fn close_for_newer(&self) {
        self.displaced.store(true, Ordering::Release);
        self.close_waiting();
    }

    /// Closes the connection while it waits: see `evicting`.
    fn close_waiting(&self) {
        self.evicting.store(true, Ordering::Release);
        self.reader.wake();
    }

    /// Gives up the place of a new connection the cap evicted for a newer one before its
    /// first byte, so that it may stay to refuse a request already on its way
    /// (`Endpoint::refuse_late`): the permit of that refusal, or `None` (it closes as
    /// before) when it was not so evicted, or as many refusals as their bound are under
    /// way. A connection over a budget closes as before, and so does one kept alive
    /// evicted between requests: its client knows to send again on a connection of its
    /// own.
    pub(crate) fn give_up_place(&self, id: u64) -> Option<OwnedSemaphorePermit> {
        // In its head with nothing read (the caller looks): a connection that has not
        // sent a byte yet. One kept alive waits Idle, and a byte makes the head start.
        let displaced = self.displaced.load(Ordering::Acquire);
        if !(displaced && self.evicted() && self.phase().0 == Phase::Head) {
            return None;
        }
        let permit = Arc::clone(&self.registry.refusing)
            .try_acquire_owned()
            .ok()?;
        self.registry.leave(id);
        // Its reads go through again: what comes now is refused, not served.
        self.evicting.store(false, Ordering::Release);
        Some(permit)
    }

    /// Whether the connection is to read its end: evicted, and still waiting.
    fn evicted(&self) -> bool {
        self.evicting.load(Ordering::Acquire) && matches!(self.phase().0, Phase::Idle | Phase::Head)
    }
}

/// Held by a response until its last byte is written (or it is dropped): then the
/// connection is idle again.
pub(crate) struct RequestGuard(Arc<Conn>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0.set(Phase::Idle);
        }
    }
}

/// How long a connection must have waited in its head before the cap may close it for a
/// newer one: longer than a client takes to send a request it has started. (One kept
/// alive and idle between requests may go at once.)
pub(crate) const RACE: Duration = Duration::from_secs(1);

/// How many connections over the cap may be answered 503 at once, at most; past these,
/// new connections wait in the listener's queue.
const MAX_REFUSING: usize = 256;

/// What the accept loop does with its next connection.
pub(crate) enum Fit {
    /// Serve it: it is under the cap.
    Serve,
    /// Answer its request 503: every slot is busy. The permit bounds the refusals under
    /// way.
    Refuse(OwnedSemaphorePermit),
}

/// Every live connection of one endpoint.
pub(crate) struct Registry {
    clock: Clock,
    live: Mutex<Live>,
    /// Signalled when a connection leaves (room under the cap; the drain's end).
    left: Notify,
    budgets: Budgets,
    max: usize,
    /// The refusals of connections over the cap under way.
    refusing: Arc<Semaphore>,
}

#[derive(Default)]
struct Live {
    next: u64,
    conns: HashMap<u64, Arc<Conn>>,
}

impl Registry {
    pub(crate) fn new(budgets: Budgets, max: usize) -> Arc<Self> {
        Arc::new(Self {
            clock: Clock::new(),
            live: Mutex::default(),
            left: Notify::new(),
            budgets,
            max: max.max(1),
            refusing: Arc::new(Semaphore::new(MAX_REFUSING.min(max.max(1)))),
        })
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.live).conns.len()
    }

    /// Waits until a new connection fits: under the cap, or by closing a kept-alive one
    /// idle between requests (the longest idle), else the one that has waited longest
    /// (at least [`RACE`]) in its head. When no connection can go, the new one is to be
    /// refused, if fewer than [`MAX_REFUSING`] refusals are under way; else this waits
    /// for a connection to leave or a refusal to end, and new connections wait in the
    /// listener's queue.
    pub(crate) async fn room(&self) -> Fit {
        loop {
            let left = self.left.notified();
            let mut victim_found = false;
            {
                let live = lock(&self.live);
                if live.conns.len() < self.max {
                    return Fit::Serve;
                }
                // In the endpoint's first second no connection has waited that long.
                let waited_since = self.clock.now().checked_sub(RACE.as_millis() as u64);
                // A kept-alive connection between requests goes first, at once, the
                // longest idle first (as nginx does): its client has had its answers and
                // sends again on a fresh connection. A connection in its head goes only
                // once it has waited `RACE`. The clock is coarse: of those waiting since
                // the same tick, the oldest connection goes (a connection between two
                // requests of a flow is newer than the idle ones it competes with).
                let victim = live
                    .conns
                    .iter()
                    .filter_map(|(id, c)| {
                        let (phase, since) = c.phase();
                        let rank = match phase {
                            Phase::Idle => 0,
                            Phase::Head if waited_since.is_some_and(|w| since <= w) => 1,
                            _ => return None,
                        };
                        Some(((rank, since, *id), c))
                    })
                    .min_by_key(|(age, _)| *age);
                if let Some((_, conn)) = victim {
                    tracing::debug!("at the connection cap: closing the longest-waiting one");
                    conn.close_for_newer();
                    victim_found = true;
                } else if let Ok(permit) = Arc::clone(&self.refusing).try_acquire_owned() {
                    return Fit::Refuse(permit);
                }
            }
            // The victim (or any connection) leaving makes room; without a victim, so
            // does a refusal ending.
            let refusal_ends = async {
                if victim_found {
                    std::future::pending().await
                } else {
                    Arc::clone(&self.refusing).acquire_owned().await
                }
            };
            tokio::select! {
                () = left => {}
                Ok(permit) = refusal_ends => return Fit::Refuse(permit),
            }
        }
    }

    /// Registers a fresh connection, waiting for its request head.
    pub(crate) fn join(self: &Arc<Self>, peer: Option<std::net::IpAddr>) -> (u64, Arc<Conn>) {
        let conn = Arc::new(Conn {
            peer,
            state: AtomicU64::new(0),
            in_flight: AtomicU32::new(0),
            multiplexed: AtomicBool::new(false),
            kill: Signal::default(),
            evicting: AtomicBool::new(false),
            displaced: AtomicBool::new(false),
            reader: AtomicWaker::new(),
            registry: Arc::clone(self),
        });
        conn.set(Phase::Head);
        let mut live = lock(&self.live);
        live.next += 1;
        let id = live.next;
        live.conns.insert(id, Arc::clone(&conn));
        (id, conn)
    }

    pub(crate) fn leave(&self, id: u64) {
        lock(&self.live).conns.remove(&id);
        self.left.notify_waiters();
    }

    /// Resolves when no connection is left.
    pub(crate) async fn drained(&self) {
        loop {
            let left = self.left.notified();
            if self.len() == 0 {
                return;
            }
            left.await;
        }
    }

    /// Advances the clock and closes the connections over a budget; runs until the
    /// registry is dropped by everyone else.
    pub(crate) async fn reap(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.budgets.tick());
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if Arc::strong_count(&self) == 1 {
                return;
            }
            let now = self.clock.advance();
            let live = lock(&self.live);
            for conn in live.conns.values() {
                let (phase, since) = conn.phase();
                // An HTTP/2 connection's streams are each held to their budgets by the
                // budget layer; one slow stream does not close its siblings.
                let streams = !matches!(phase, Phase::Idle | Phase::Head);
                if streams && conn.multiplexed.load(Ordering::Relaxed) {
                    continue;
                }
                let age = Duration::from_millis(now.saturating_sub(since));
                if !self.budgets.allows(phase, age) {
                    tracing::debug!(?phase, ?age, "closing a connection over its budget");
                    if streams {
                        conn.kill.say();
                    } else {
                        conn.close_waiting();
                    }
                }
            }
        }
    }
}
