//! An admitted request served: its span, its route started (`requestState` opened),
//! the layers around it, and its answer checked, gated and sealed into a [`Verdict`].

use std::borrow::Cow;

use tracing::Instrument as _;
use tracing::field::Empty;

use super::middleware::{self, Dispatch, Dispatched, Outcome};
use super::pipeline::{Admitted, Refusal, Routed, Verdict};
use super::{Call, IncomingRequest, Output, Running, answer, state};
use crate::jsonrpc::{RpcError, code};
use crate::seal::Principal;
use crate::transport::BoxFuture;
use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::method;

impl Admitted {
    /// Runs the handler: verifies an incoming `requestState` first, then checks, gates
    /// and seals an `InputRequiredResult`; the server's layers
    /// ([`middleware`](super::middleware)) around it. All of it in the request's span,
    /// `mcp.request`, whose parent is the `traceparent` the request's `_meta` carried
    /// (with the `otel` feature).
    pub async fn serve(self) -> Verdict {
        let span = tracing::info_span!(
            "mcp.request",
            rpc.method = %self.request.method,
            mcp.target = Empty,
            mcp.era = %self.era(),
            mcp.round = Empty,
            mcp.outcome = Empty,
            mcp.state_rejected = Empty,
            trace_parent = Empty,
        );
        if span.is_disabled() {
            // Nobody records it: no wrapper to move the request's future into.
            return self.dispatch(None).await.into_verdict();
        }
        let target = self.routed.as_ref().and_then(|r| r.params.as_ref().ok());
        if let Some(target) = target.and_then(|typed| typed.target()) {
            span.record("mcp.target", target);
        }
        if let Some(trace) = &self.meta.trace {
            span.record("trace_parent", trace.traceparent());
            #[cfg(feature = "otel")]
            trace.set_parent_of(&span);
        }
        let dispatched = self.dispatch(Some(&span)).instrument(span.clone()).await;
        span.record("mcp.outcome", tracing::field::debug(dispatched.outcome()));
        dispatched.into_verdict()
    }

    /// The request served; `span`, when recorded, is told its round.
    async fn dispatch(self, span: Option<&tracing::Span>) -> Dispatched {
        let era = self.era();
        let Admitted {
            server,
            request,
            meta,
            session,
            routed,
        } = self;
        let IncomingRequest {
            id,
            method,
            params,
            auth,
            cancel,
            outbound,
        } = request;
        let inner = &server.inner;
        // The built-in `server/discover` has no route: its facts come from its marker.
        let (may_require_input, cacheable, writes_result_type) = match &routed {
            Some(Routed { route, .. }) => (
                route.may_require_input,
                route.cacheable,
                route.writes_result_type,
            ),
            None => (
                method::Discover::MAY_REQUIRE_INPUT,
                method::Discover::CACHEABLE,
                method::Discover::WRITES_RESULT_TYPE,
            ),
        };
        let principal = auth.as_ref().map(Principal::from_auth);
        let sealer = inner.sealer.as_ref().filter(|_| may_require_input);
        let state = session.as_ref().map(|s| s.state().clone());
        let on_session = state.is_some();
        let ctx = super::RequestContext::on_session(
            id,
            routed.as_ref().map_or_else(
                || Cow::Owned(method.clone()),
                |r| Cow::Borrowed(r.route.method),
            ),
            meta,
            auth,
            cancel,
            outbound,
            state,
        );
        // Input requests are checked against the capabilities after the handler has the
        // context: a handle on it (not a copy of the capabilities) for the methods that
        // can answer input-required, and for the layers.
        let layered = !inner.layers.is_empty();
        let kept = (may_require_input || layered).then(|| ctx.clone());
        // A session request whose handler may ask keeps what another round needs.
        let fulfil = inner
            .session_input
            .filter(|_| on_session && may_require_input);
        let target = layered
            .then(|| routed.as_ref().and_then(|r| r.params.as_ref().ok()))
            .flatten()
            .and_then(|typed| typed.target().map(str::to_owned));
        let mut rounds = None;
        let started = match routed {
            Some(Routed {
                route,
                params: typed,
            }) => {
                // Another round calls the handler again with the same context.
                let again = fulfil.map(|_| ctx.clone());
                let call = Call {
                    ctx,
                    params: typed,
                    sealing: sealer.map(|sealer| state::Sealing {
                        sealer,
                        principal: principal.as_ref(),
                    }),
                };
                let started = (route.call)(call);
                if started.is_ok() {
                    match fulfil.zip(again) {
                        Some((policy, ctx)) => rounds = Some((policy, route, params, ctx)),
                        // The params were read into the handler's type: free the text.
                        None => drop(params),
                    }
                }
                started.map(Some)
            }
            None => Ok(None),
        };
        let round = match &started {
            Ok(Some(Running { binding, .. })) => binding.as_ref().map(|b| b.round),
            _ => None,
        };
        if let (Some(span), Some(round)) = (span, round) {
            span.record("mcp.round", round);
        }
        let capabilities = kept
            .as_ref()
            .filter(|_| may_require_input)
            .map(|c| c.client_capabilities());
        let core = async {
            let (output, binding) = match started {
                Err(e) if e.is_invalid_request_state() => {
                    return Dispatched::new(Verdict::Answered(Err(e)), Outcome::RejectedState);
                }
                Err(e) => return answered_error(e),
                Ok(Some(Running { future, binding })) => (future.await, binding),
                Ok(None) => (Ok(Output::Complete(server.discover())), None),
            };
            let result = match output {
                Err(e) => return answered_error(e),
                Ok(Output::Complete(result)) => result,
                Ok(Output::InputRequired(asked)) if on_session => {
                    let (Some((policy, route, Some(params), ctx)), Some(capabilities)) =
                        (rounds, capabilities)
                    else {
                        tracing::error!(method = %method, "a handler answered input_required to a 2025-11-25 session, which cannot receive it; ask with RequestContext::request_client there, or turn on ServerBuilder::fulfil_input_on_sessions");
                        return answered_error(RpcError::internal("Internal error"));
                    };
                    let rounds = super::session::Rounds {
                        policy,
                        route,
                        method: &method,
                        params: &params,
                        ctx,
                        sealer,
                        principal: principal.as_ref(),
                        capabilities,
                    };
                    // Boxed: the rounds' future is large, and every request's future
                    // would carry its room inline, sessions or not.
                    return match Box::pin(rounds.run(asked, binding)).await {
                        Ok(result) => {
                            Dispatched::new(Verdict::Answered(Ok(result)), Outcome::Complete)
                        }
                        Err(e) => answered_error(e),
                    };
                }
                Ok(Output::InputRequired(asked)) => {
                    let Some(capabilities) = capabilities else {
                        tracing::error!(method = %method, "a handler answered input_required on a method that cannot");
                        return answered_error(RpcError::internal("Internal error"));
                    };
                    let sealing = sealer.zip(binding.as_ref());
                    return match state::finish_input_required(
                        &method,
                        sealing,
                        principal.as_ref(),
                        capabilities,
                        *asked,
                    ) {
                        Ok(result) => {
                            Dispatched::new(Verdict::Answered(Ok(result)), Outcome::InputRequired)
                        }
                        Err(e) if e.code == code::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                            Dispatched::new(
                                Verdict::refused(Refusal::MissingCapability, e),
                                Outcome::Refused(Refusal::MissingCapability),
                            )
                        }
                        Err(e) => answered_error(e),
                    };
                }
            };
            let verdict = if on_session {
                Verdict::Answered(answer::on_session(&result))
            } else {
                let cache = cacheable.then_some(&inner.cache);
                // A result whose type writes `resultType` lacks nothing but, when it is
                // cacheable, its caching members: its text is searched only then.
                let result = match cache {
                    None if writes_result_type => result,
                    cache => answer::complete(result, cache),
                };
                Verdict::Answered(Ok(result))
            };
            Dispatched::new(verdict, Outcome::Complete)
        };
        let Some(ctx) = kept.as_ref().filter(|_| layered) else {
            return core.await;
        };
        let request = Dispatch {
            id: ctx.id(),
            method: ctx.method(),
            target: target.as_deref(),
            era,
            round,
            auth: ctx.auth(),
        };
        let core: BoxFuture<'_, Dispatched> = Box::pin(core);
        middleware::run(&inner.layers, &request, core).await
    }
}

fn answered_error(error: RpcError) -> Dispatched {
    let code = error.code;
    Dispatched::new(Verdict::Answered(Err(error)), Outcome::Error(code))
}
