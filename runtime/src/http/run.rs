//! An admitted request run into its reply: plain JSON when the handler returns without
//! notifying, SSE from its first notification on; on a session, a stream kept for
//! `Last-Event-ID`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use tokio_util::sync::DropGuard;

use super::Shared;
use super::reply::Reply;
use super::sessions::{HttpSession, Lookup};
use super::sse::{Outcome, SseState, accepts, session_sse, sse};
use super::stream::SessionStreams;
use super::streams::Slot;
use crate::jsonrpc::RpcError;
use crate::server::middleware::Dispatched;
use crate::server::{Accepted, Admitted, Verdict, outbound};
use crate::transport::http::fields::Fields;
use crate::types::v2026_07_28::RequestId;

/// Runs the handler: JSON when it returns without notifying, SSE from its first
/// notification on (see the module docs).
pub(super) async fn run(
    shared: &Shared,
    headers: &impl Fields,
    accepted: Accepted,
    session: Option<Arc<HttpSession>>,
    slot: Option<Slot>,
) -> Reply {
    let id = accepted.id().clone();
    let on_session = session.is_some();
    // Refusals are known before the handler runs: they are always plain JSON.
    let mut admitted = match accepted.admit() {
        Ok(admitted) => admitted,
        Err(refused) => return Reply::answer(id, refused, on_session),
    };
    let (json_ok, sse_ok) = accepts(headers);
    let cancel = cancellation(shared, &mut admitted);
    let (tx, mut rx) = outbound::stream();
    // A client that takes no stream gets no notifications, and a 2025-11-25 handler that
    // would ask it something fails at once instead of waiting for an answer that cannot
    // come.
    admitted.set_outbound(sse_ok.then_some(tx));
    // A session's stream is kept for `Last-Event-ID` and outlives its connection.
    let streams = session.as_ref().map(|s| Arc::clone(&s.streams));
    let mut outcome = served(admitted, &id, session, slot, &cancel);
    // Dropping the guard (the client went away and its connection's task dropped us) cancels the token.
    let guard = cancel.drop_guard();
    let state = if !json_ok && sse_ok {
        SseState::new(id, outcome, rx, guard)
    } else {
        tokio::select! {
            biased;
            // A handler or layer that panics: 500, -32603 to the request's id.
            dispatched = AssertUnwindSafe(&mut outcome).catch_unwind() => {
                let dispatched = match dispatched {
                    Ok(dispatched) => dispatched,
                    Err(panic) => return Reply::panicked(Some(&id), &*panic),
                };
                let mut state = SseState::new(id, outcome, rx, guard);
                state.finished = Some(dispatched.into_verdict().into_result());
                // Notifications sent just before returning still make it a stream.
                state.drain();
                if state.pending.is_empty() || !sse_ok {
                    let _ = state.guard.take().map(DropGuard::disarm);
                    let result = state.finished.take().unwrap_or_else(|| Err(RpcError::internal("Internal error")));
                    return Reply::answer(state.id, Verdict::Answered(result), on_session);
                }
                state
            }
            Some(first) = rx.recv(), if sse_ok => {
                let mut state = SseState::new(id, outcome, rx, guard);
                state.pending.push_back(first);
                state
            }
        }
    };
    match &streams {
        None => sse(state).into(),
        Some(streams) => session_stream(state, streams).await,
    }
}

/// The token that ends the request. A stream that never ends on its own is ended by a
/// draining endpoint, as it ends the sessions' GET streams (`Shared::closing`); any
/// other request is let finish, on the token it was made with (nothing else holds it
/// yet).
fn cancellation(shared: &Shared, admitted: &mut Admitted) -> tokio_util::sync::CancellationToken {
    if admitted.never_ends() {
        let closing = shared.closing.child_token();
        admitted.set_cancel(closing.clone());
        closing
    } else {
        admitted.cancellation().clone()
    }
}

/// A session's SSE answer, its events kept for `Last-Event-ID`.
async fn session_stream(state: SseState, streams: &Arc<SessionStreams>) -> Reply {
    let id = state.id.clone();
    match session_sse(state, streams).await {
        Ok(response) => response.into(),
        Err(e) => {
            tracing::warn!(error = %e, "could not open a session's stream: the event store failed");
            Lookup::Unavailable.refusal(Some(&id)).into()
        }
    }
}

/// The handler's run as the reply waits on it: holding the caller's stream place, if
/// it took one; on a session, ended early when the client withdraws the request
/// (`notifications/cancelled`) while keeping the stream open.
fn served(
    admitted: Admitted,
    id: &RequestId,
    session: Option<Arc<HttpSession>>,
    slot: Option<Slot>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Outcome {
    match (session, slot) {
        (None, None) => admitted.serve(),
        // The stream's place is held as long as its handler runs.
        (None, Some(slot)) => Box::pin(async move {
            let _slot = slot;
            admitted.serve().await
        }),
        (Some(session), _) => {
            // Only a session's request can be withdrawn while its stream stays open.
            let withdrawn = cancel.clone();
            let tracked = session.in_flight.track(id, withdrawn.clone());
            Box::pin(async move {
                let _tracked = tracked;
                tokio::select! {
                    verdict = admitted.serve() => verdict,
                    () = withdrawn.cancelled() => Dispatched::error(RpcError::internal("Request cancelled by the client")),
                }
            })
        }
    }
}
