//! A 2025-11-25 upstream's questions, asked as requests on its session, relayed as the
//! gateway's rounds: each call that may ask gets a session of its own (opened over
//! HTTP with the client's capabilities, so the upstream asks only what the client can
//! answer), run in a task the gateway holds between rounds. A question the upstream
//! asks ends the round with it (`NAME.q1`, ...); the retry's answer goes back on the
//! session and the call goes on, until it answers or asks again.
//!
//! What is held lives in this gateway instance: a retry that reaches another one is
//! told its state is no longer good (-32602), and the client starts the call over.
//! Calls held at once are bounded in all ([`MAX_HELD`]) and per caller ([`PER_CALLER`]:
//! a principal, else an address, else every unknown client together), and each is
//! dropped (its session closed) by a timer when its client does not come back within
//! the upstream's deadline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use super::catalog::Link;
use super::names;
use crate::client::{Client, EraMode};
use crate::jsonrpc::{RawResult, RpcError};
use crate::protocol::rounds::RoundLimits;
use crate::server::RequestContext;
use crate::transport::http::client::HttpClientBuilder;
use crate::types::rpc::ClientRequestMethod;
use crate::types::v2026_07_28::method::ClientRequestParams;
use crate::types::v2026_07_28::{
    CreateMessageRequest, ElicitRequest, InputRequest, InputRequests, InputResponse,
    InputResponses, ListRootsRequest,
};
use crate::util::lock;

/// How many calls the gateway holds at once, waiting for their clients' answers.
const MAX_HELD: usize = 1_024;

/// How many of them one caller may hold, so that no one caller takes every place.
const PER_CALLER: usize = 64;

/// How many rounds of questions one bridged call may ask: an upstream that keeps
/// asking is stopped there, its session closed.
const MAX_ROUNDS: usize = 100;

/// A question the upstream asked on the call's session, and where its answer goes.
type Question = (InputRequest, oneshot::Sender<InputResponse>);

/// Who a held call is held for, as the HTTP endpoint tells the holders of its streams
/// apart: its client's principal, else its address, else everyone unknown together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Caller {
    Principal(String),
    Peer(std::net::IpAddr),
    Anonymous,
}

impl Caller {
    fn of(ctx: &RequestContext) -> Self {
        match (ctx.auth(), ctx.peer()) {
            (Some(auth), _) => Self::Principal(crate::seal::Principal::from_auth(auth).owner_key()),
            (None, Some(peer)) => Self::Peer(peer),
            (None, None) => Self::Anonymous,
        }
    }
}

/// One call running on a session of its own, between its client's rounds.
pub(super) struct Held {
    /// The questions asked and not yet answered, by the key the client sees.
    waiting: Vec<(String, InputRequest, oneshot::Sender<InputResponse>)>,
    questions: mpsc::UnboundedReceiver<Question>,
    notices: mpsc::UnboundedReceiver<Value>,
    done: oneshot::Receiver<crate::Result<RawResult>>,
    /// How many questions the call asked so far (their keys are `q1`, `q2`, ...).
    asked: usize,
    /// How many rounds of questions it asked so far.
    rounds: usize,
    /// The method relayed, for the errors that name it.
    method: &'static str,
    /// Its place among the held calls, in its caller's share: taken before the call
    /// reached the upstream, given back when the call ends.
    _place: Place,
    task: tokio::task::JoinHandle<()>,
}

/// A caller's place among the calls the gateway may hold, taken before a call that may
/// ask reaches its upstream (so a call refused for the cap never ran there), given back
/// when dropped.
pub(super) struct Place {
    kept: Weak<Mutex<Kept>>,
    caller: Caller,
}

impl Drop for Place {
    fn drop(&mut self) {
        // Never dropped under the lock: a held call is dropped outside it.
        if let Some(kept) = self.kept.upgrade() {
            let mut kept = lock(&kept);
            kept.places = kept.places.saturating_sub(1);
            if let Some(count) = kept.by_caller.get_mut(&self.caller) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    kept.by_caller.remove(&self.caller);
                }
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // The session goes with its client, closed (DELETE) when dropped.
        self.task.abort();
    }
}

/// The calls held between rounds, by the id their gateway state names.
#[derive(Default)]
pub(super) struct Holds {
    kept: Arc<Mutex<Kept>>,
}

/// The held calls, each with the timer that drops it at its deadline, and the places
/// taken (held calls, and calls on their way to their first turn): in all and by caller.
#[derive(Default)]
struct Kept {
    calls: HashMap<String, (Held, AbortHandle)>,
    places: usize,
    by_caller: HashMap<Caller, usize>,
}

impl Kept {
    /// Takes the call `id` names out (its place stays with it).
    fn remove(&mut self, id: &str) -> Option<(Held, AbortHandle)> {
        self.calls.remove(id)
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        for (_, timer) in self.calls.values() {
            timer.abort();
        }
    }
}

impl Holds {
    /// Takes the call `id` names, if it is still held here.
    pub(super) fn take(&self, id: &str) -> Option<Held> {
        let (call, timer) = lock(&self.kept).remove(id)?;
        timer.abort();
        Some(call)
    }

    /// A place for a call of `ctx`'s caller, before the call goes to its upstream:
    /// refused over the caller's share, or the cap on all.
    fn place(&self, ctx: &RequestContext) -> Result<Place, RpcError> {
        let caller = Caller::of(ctx);
        let mut kept = lock(&self.kept);
        let mine = kept.by_caller.get(&caller).copied().unwrap_or(0);
        let refused = if mine >= PER_CALLER {
            format!(
                "The gateway holds {PER_CALLER} of your calls waiting for answers, the most \
                 one caller may; answer or abandon one first"
            )
        } else if kept.places >= MAX_HELD {
            format!(
                "The gateway holds {MAX_HELD} calls waiting for answers, the most it may; \
                 try again later"
            )
        } else {
            kept.places += 1;
            *kept.by_caller.entry(caller.clone()).or_default() += 1;
            return Ok(Place {
                kept: Arc::downgrade(&self.kept),
                caller,
            });
        };
        tracing::debug!(?caller, "refused to hold a call: {refused}");
        // -32000, as the HTTP endpoint refuses a stream over its caller's share.
        Err(RpcError::new(-32000, refused))
    }

    /// Holds `call` (in the place it took) until its client comes back, at most
    /// `deadline`: its id. Past its deadline a timer drops it (its session closed).
    fn hold(&self, call: Held, deadline: Duration) -> String {
        let id = crate::util::random_id();
        let timer = tokio::spawn(expire(Arc::downgrade(&self.kept), id.clone(), deadline));
        lock(&self.kept)
            .calls
            .insert(id.clone(), (call, timer.abort_handle()));
        id
    }
}

/// Drops the call `id` when `after` has passed, if its client has not taken it back.
async fn expire(kept: Weak<Mutex<Kept>>, id: String, after: Duration) {
    tokio::time::sleep(after).await;
    let Some(kept) = kept.upgrade() else {
        return;
    };
    let expired = lock(&kept).remove(&id);
    if expired.is_some() {
        tracing::debug!("a held call's client did not come back in time: its session is closed");
    }
    // Dropped here, outside the lock: the call's task ends and its session closes.
    drop(expired);
}

/// What a round of a held call came to: the upstream's result, or questions for the
/// client (the id the gateway's state names, and the questions keyed as it sees them).
pub(super) enum Turn {
    Answered(RawResult),
    Asks(String, InputRequests),
}

/// Starts `params` on a session of its own with the upstream at `http`, for the client
/// `ctx` serves, and runs it to its first turn.
pub(super) async fn start<M: ClientRequestMethod>(
    link: &Link,
    http: &HttpClientBuilder,
    holds: &Holds,
    ctx: &RequestContext,
    mut params: M::Params,
) -> Result<Turn, RpcError>
where
    M::Params: ClientRequestParams,
{
    super::forward::unmeta(&mut params);
    // The place first: a call refused for the cap never reaches the upstream.
    let place = holds.place(ctx)?;
    let (ask, questions) = mpsc::unbounded_channel::<Question>();
    let client = session(link, http, ctx, ask).await?;
    let (notify, notices) = mpsc::unbounded_channel();
    let (finish, done) = oneshot::channel();
    let meta = client.relayed_meta(&ctx.meta().client_capabilities, ctx.log_floor());
    let task = tokio::spawn(async move {
        let result = client.relay::<M>(&params, &meta, Some(&notify)).await;
        let _ = finish.send(result);
    });
    let call = Held {
        waiting: Vec::new(),
        questions,
        notices,
        done,
        asked: 0,
        rounds: 0,
        method: M::METHOD,
        _place: place,
        task,
    };
    next(link, holds, ctx, call).await
}

/// Gives a held call the answers in `responses` to the questions it waits on, and runs
/// it to its next turn; questions left unanswered are asked again.
pub(super) async fn resume(
    link: &Link,
    holds: &Holds,
    ctx: &RequestContext,
    mut call: Held,
    responses: Option<&InputResponses>,
) -> Result<Turn, RpcError> {
    let asked = InputRequests(
        call.waiting
            .iter()
            .map(|(key, request, _)| (key.clone(), request.clone()))
            .collect(),
    );
    let mut answers = match responses {
        Some(r) => r
            .decode(&asked)
            .map_err(|e| RpcError::invalid_params(format!("Invalid inputResponses: {e}")))?,
        None => Default::default(),
    };
    let mut still = Vec::new();
    for (key, request, reply) in call.waiting.drain(..) {
        match answers.remove(&key) {
            Some(answer) => {
                let _ = reply.send(answer);
            }
            None => still.push((key, request, reply)),
        }
    }
    call.waiting = still;
    next(link, holds, ctx, call).await
}

/// Runs a call until it answers, asks (its questions held with it for the client's
/// next round), or misses the upstream's deadline; the notifications of its stream
/// passed on to the client meanwhile.
async fn next(
    link: &Link,
    holds: &Holds,
    ctx: &RequestContext,
    mut call: Held,
) -> Result<Turn, RpcError> {
    let deadline = tokio::time::sleep(link.deadline);
    tokio::pin!(deadline);
    loop {
        if !call.waiting.is_empty() {
            // Whatever else it asked at once goes in the same round (kept up to one
            // past the budget, which then refuses the round).
            tokio::time::sleep(Duration::from_millis(5)).await;
            while call.waiting.len() <= link.budgets.questions {
                let Ok(question) = call.questions.try_recv() else {
                    break;
                };
                keep(&mut call, question);
            }
            return ask(link, holds, call);
        }
        tokio::select! {
            Some(message) = call.notices.recv() => super::forward::pass_on(ctx, message),
            Some(question) = call.questions.recv() => keep(&mut call, question),
            done = &mut call.done => {
                while let Ok(message) = call.notices.try_recv() {
                    super::forward::pass_on(ctx, message);
                }
                return match done {
                    Ok(result) => result.map(Turn::Answered).map_err(|e| link.failed(e)),
                    Err(_) => Err(link.failed_with("the session's call ended without an answer")),
                };
            }
            () = &mut deadline => return Err(link.late()),
        }
    }
}

/// A question the upstream asked, kept under its next key.
fn keep(call: &mut Held, (request, reply): Question) {
    call.asked += 1;
    call.waiting
        .push((format!("q{}", call.asked), request, reply));
}

/// Ends the round with the call's waiting questions, the call held for the next; a
/// round past the call's bounds ends it instead (its session closed).
fn ask(link: &Link, holds: &Holds, mut call: Held) -> Result<Turn, RpcError> {
    call.rounds += 1;
    let limits = RoundLimits {
        max_rounds: MAX_ROUNDS,
        max_questions: link.budgets.questions,
        // Each turn keeps to the upstream's deadline (`next`), not the whole call.
        deadline: None,
        concurrency: 1,
    };
    if let Err(over) = limits.admit(call.rounds, call.waiting.len()) {
        return Err(link.over(super::budget::rounds(over), call.method));
    }
    let questions = InputRequests(
        call.waiting
            .iter()
            .map(|(key, request, _)| (key.clone(), request.clone()))
            .collect(),
    );
    let id = holds.hold(call, link.deadline);
    Ok(Turn::Asks(
        id,
        names::questions(link.name.as_deref(), questions),
    ))
}

/// A session of the call's own with the upstream: the client's capabilities declared
/// in its `initialize`, each request the upstream asks on it sent to `ask`.
async fn session(
    link: &Link,
    http: &HttpClientBuilder,
    ctx: &RequestContext,
    ask: mpsc::UnboundedSender<Question>,
) -> Result<Client, RpcError> {
    let (name, version) = link.client.info();
    let (elicit, sample, roots) = (ask.clone(), ask.clone(), ask);
    let mut builder = Client::builder(name, version)
        .era(EraMode::Session)
        .capabilities((*ctx.meta().client_capabilities).clone())
        .on_elicitation(move |_, params| {
            let question = InputRequest::Elicit(ElicitRequest::new(params));
            answer_of(&elicit, question, |r| match r {
                InputResponse::Elicit(r) => Some(r),
                _ => None,
            })
        })
        .on_sampling(move |_, params| {
            let question = InputRequest::CreateMessage(CreateMessageRequest::new(params));
            answer_of(&sample, question, |r| match r {
                InputResponse::CreateMessage(r) => Some(r),
                _ => None,
            })
        })
        .on_list_roots(move |_, params| {
            let mut request = ListRootsRequest::new();
            request.params = params;
            answer_of(&roots, InputRequest::ListRoots(request), |r| match r {
                InputResponse::ListRoots(r) => Some(r),
                _ => None,
            })
        });
    if let Some(level) = ctx.log_floor() {
        builder = builder.log_level(level);
    }
    let transport = http
        .clone()
        .build()
        .map_err(|e| link.failed_with(&e.to_string()))?;
    match tokio::time::timeout(link.deadline, builder.connect(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(link.failed(e)),
        Err(_) => Err(link.late()),
    }
}

/// The client's answer to `question`, once it comes (its call dropped first: the
/// session's request is refused).
fn answer_of<R: Send + 'static>(
    ask: &mpsc::UnboundedSender<Question>,
    question: InputRequest,
    pick: fn(InputResponse) -> Option<R>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<R, RpcError>> + Send>> {
    let (reply, answer) = oneshot::channel();
    let sent = ask.send((question, reply));
    Box::pin(async move {
        sent.map_err(|_| RpcError::internal("The gateway's call has ended"))?;
        let answer = answer
            .await
            .map_err(|_| RpcError::internal("The gateway's client did not answer"))?;
        pick(answer).ok_or_else(|| RpcError::invalid_params("An answer of the wrong kind"))
    })
}
