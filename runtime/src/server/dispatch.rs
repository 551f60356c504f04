//! An admitted request served: its span, its route started (`requestState` opened),
//! the layers around it, and its answer checked, gated and sealed into a [`Verdict`].

use futures_util::FutureExt as _;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::finish::{Facts, Finish, method_name};
use super::middleware::{self, Dispatch, Dispatched};
use super::pipeline::{Admitted, Checked};
use super::{IncomingRequest, RequestContext, Server};
use crate::Era;
use crate::seal::Principal;
use crate::transport::BoxFuture;

impl Admitted {
    /// Runs the handler: verifies an incoming `requestState` first, then checks, gates
    /// and seals an `InputRequiredResult`; the server's layers
    /// ([`middleware`](super::middleware)) around it. All of it in the request's span,
    /// `mcp.request`, whose parent is the `traceparent` the request's `_meta` carried
    /// (with the `otel` feature).
    ///
    /// The route is started (its state opened) here, in the span; the future returned
    /// holds what the answer's finish takes, each part once (an `async fn` would keep
    /// its argument and the parts taken from it side by side).
    pub(crate) fn serve(self) -> BoxFuture<'static, Dispatched> {
        let span = tracing::info_span!(
            "mcp.request",
            rpc.method = %self.0.request.method,
            mcp.target = Empty,
            mcp.era = %self.era(),
            mcp.round = Empty,
            mcp.outcome = Empty,
            mcp.state_rejected = Empty,
            trace_parent = Empty,
        );
        if span.is_disabled() {
            // Nobody records it: no wrapper to move the request's future into.
            return self.dispatch(None);
        }
        let target = self.0.routed.as_ref().and_then(|r| r.params.as_ref().ok());
        if let Some(target) = target.and_then(|typed| typed.target()) {
            span.record("mcp.target", target);
        }
        if let Some(trace) = self
            .0
            .meta
            .meta
            .as_ref()
            .ok()
            .and_then(|m| m.trace.as_ref())
        {
            span.record("trace_parent", trace.traceparent());
            #[cfg(feature = "otel")]
            trace.set_parent_of(&span);
        }
        let core = span.in_scope(|| self.dispatch(Some(&span)));
        // Combinators, not an async block: a block would keep `core` twice, as it
        // came and as it is awaited.
        let instrumented = core.instrument(span.clone());
        Box::pin(instrumented.map(move |dispatched| {
            span.record("mcp.outcome", tracing::field::debug(dispatched.ending()));
            dispatched
        }))
    }

    /// The request served, in stages: the handler's context and the route started (its
    /// `requestState` opened) now; the handler run and its answer finished in the
    /// future returned, inside the server's layers. `span`, when recorded, is told the
    /// round.
    fn dispatch(self, span: Option<&tracing::Span>) -> BoxFuture<'static, Dispatched> {
        let era = self.era();
        let Checked {
            server,
            request,
            meta,
            channel,
            routed,
            ..
        } = *self.0;
        // Admitted only with its `_meta` read: the error is never here.
        let meta = match meta.meta {
            Ok(meta) => meta,
            Err(error) => return Box::pin(std::future::ready(Dispatched::error(error))),
        };
        let IncomingRequest {
            id,
            method,
            params,
            auth,
            cancel,
            outbound,
            peer,
        } = request;
        let facts = Facts::of(routed.as_ref());
        let principal = auth.as_ref().map(Principal::from_auth);
        let name = method_name(routed.as_ref(), &method);
        let ctx = RequestContext::new(id, name, meta, auth, cancel, outbound, channel.clone())
            .with_peer(peer);
        // The layers see the request through its context and its target.
        let layered = (!server.inner.layers.is_empty()).then(|| {
            let target = routed.as_ref().and_then(|r| r.params.as_ref().ok());
            let target = target.and_then(|typed| typed.target().map(str::to_owned));
            (server.clone(), ctx.clone(), target)
        });
        // A channel that answers input itself calls the handler again: it keeps the
        // params and the context for those rounds.
        let keep = facts.may_require_input && channel.as_ref().is_some_and(|c| c.fulfils_input());
        let finish = Finish {
            server,
            method,
            facts,
            principal,
            // The context stays at hand for the capability gate.
            asker: facts.may_require_input.then(|| ctx.clone()),
            channel,
        };
        let opened = finish.open(routed, ctx, params, keep);
        let round = opened.round();
        if let (Some(span), Some(round)) = (span, round) {
            span.record("mcp.round", round);
        }
        // Boxed where it is made, and moved on as a box: each stage that wrapped it
        // moved the whole future.
        let core: BoxFuture<'static, Dispatched> = Box::pin(finish.run(opened));
        match layered {
            None => core,
            Some((server, ctx, target)) => through_layers(core, server, ctx, target, era, round),
        }
    }
}

/// `core` run inside the server's layers, which see the request through its context,
/// its target, its era and its round.
fn through_layers(
    core: BoxFuture<'static, Dispatched>,
    server: Server,
    ctx: RequestContext,
    target: Option<String>,
    era: Era,
    round: Option<u32>,
) -> BoxFuture<'static, Dispatched> {
    Box::pin(async move {
        let request = Dispatch {
            id: ctx.id(),
            method: ctx.method(),
            target: target.as_deref(),
            era,
            round,
            auth: ctx.auth(),
        };
        middleware::run(&server.inner.layers, &request, core).await
    })
}
