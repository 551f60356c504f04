//! A 2025-11-25 upstream's questions, asked as requests on its session, relayed as the
//! gateway's rounds: each call that may ask gets a session of its own (opened over
//! HTTP with the client's capabilities, so the upstream asks only what the client can
//! answer), run in a task the gateway holds between rounds. A question the upstream
//! asks ends the round with it (`NAME.q1`, ...); the retry's answer goes back on the
//! session and the call goes on, until it answers or asks again.
//!
//! What is held lives in this gateway instance: a retry that reaches another one is
//! told its state is no longer good (-32602), and the client starts the call over.
//! Calls held at once are bounded, and each is dropped (its session closed) when its
//! client does not come back within the upstream's deadline.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::catalog::Link;
use super::names;
use crate::client::{Client, EraMode};
use crate::jsonrpc::{RawResult, RpcError, code};
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

/// A question the upstream asked on the call's session, and where its answer goes.
type Question = (InputRequest, oneshot::Sender<InputResponse>);

/// One call running on a session of its own, between its client's rounds.
pub(super) struct Held {
    /// The questions asked and not yet answered, by the key the client sees.
    waiting: Vec<(String, InputRequest, oneshot::Sender<InputResponse>)>,
    questions: mpsc::UnboundedReceiver<Question>,
    notices: mpsc::UnboundedReceiver<Value>,
    done: oneshot::Receiver<crate::Result<RawResult>>,
    /// How many questions the call asked so far (their keys are `q1`, `q2`, ...).
    asked: usize,
    /// When it is dropped if its client has not come back.
    expires: Instant,
    task: tokio::task::JoinHandle<()>,
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
    held: Mutex<HashMap<String, Held>>,
}

impl Holds {
    /// Takes the call `id` names, if it is still held here.
    pub(super) fn take(&self, id: &str) -> Option<Held> {
        lock(&self.held).remove(id)
    }

    /// Holds `call` until its client comes back: its id. Expired calls go first; at the
    /// cap, the call is refused.
    fn hold(&self, call: Held) -> Result<String, RpcError> {
        let mut held = lock(&self.held);
        let now = Instant::now();
        held.retain(|_, c| c.expires > now);
        if held.len() >= MAX_HELD {
            return Err(RpcError::new(
                code::REQUEST_TIMEOUT,
                "The gateway holds too many calls waiting for answers; try again later",
            ));
        }
        let id = crate::util::random_id();
        held.insert(id.clone(), call);
        Ok(id)
    }
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
        expires: Instant::now() + link.deadline,
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
            // Whatever else it asked at once goes in the same round.
            tokio::time::sleep(Duration::from_millis(5)).await;
            while let Ok(question) = call.questions.try_recv() {
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

/// Ends the round with the call's waiting questions, the call held for the next.
fn ask(link: &Link, holds: &Holds, mut call: Held) -> Result<Turn, RpcError> {
    let questions = InputRequests(
        call.waiting
            .iter()
            .map(|(key, request, _)| (key.clone(), request.clone()))
            .collect(),
    );
    call.expires = Instant::now() + link.deadline;
    let id = holds.hold(call)?;
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
