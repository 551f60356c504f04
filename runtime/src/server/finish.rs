//! The stages of an admitted request after its context: the route started (its
//! `requestState` opened and verified), the handler run, and its answer finished: a
//! complete result written with the members the protocol adds, an
//! `InputRequiredResult` gated on the client's capabilities and sealed. A request that
//! came on a channel (a session's) has the channel finish both its way.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::Either;

use super::context::{Channel, Retry};
use super::middleware::{Dispatched, Ending};
use super::pipeline::{Refusal, Routed, Verdict};
use super::state::{self, Binding};
use super::{
    Call, Output, RequestContext, ResultText, Route, Running, Server, SharedResult, answer,
};
use crate::jsonrpc::{RawParams, RpcError, code};
use crate::seal::{Principal, Sealer};
use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::{InputRequiredResult, method};

/// What the method table says of the request's method, as the finish needs it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Facts {
    pub(super) may_require_input: bool,
    cacheable: bool,
    writes_result_type: bool,
}

impl Facts {
    /// The routed method's facts; the built-in `server/discover`'s from its marker.
    pub(super) fn of(routed: Option<&Routed>) -> Self {
        match routed {
            Some(Routed { route, .. }) => Self {
                may_require_input: route.may_require_input,
                cacheable: route.cacheable,
                writes_result_type: route.writes_result_type,
            },
            None => Self {
                may_require_input: method::Discover::MAY_REQUIRE_INPUT,
                cacheable: method::Discover::CACHEABLE,
                writes_result_type: method::Discover::WRITES_RESULT_TYPE,
            },
        }
    }
}

/// The route started: its handler's future and binding, or why it could not start
/// (`None` for `server/discover`); and what another round takes, when kept.
pub(super) struct Opened {
    started: Result<Option<Running>, RpcError>,
    again: Option<(Route, RawParams, RequestContext)>,
}

impl Opened {
    /// The round the request's `requestState` names, when it named one.
    pub(super) fn round(&self) -> Option<u32> {
        match &self.started {
            Ok(Some(Running { binding, .. })) => binding.as_ref().map(|b| b.round),
            _ => None,
        }
    }
}

/// What finishing a request's answer takes, owned: the future that finishes it holds
/// it once.
pub(super) struct Finish {
    pub(super) server: Server,
    pub(super) method: Cow<'static, str>,
    pub(super) facts: Facts,
    pub(super) principal: Option<Principal>,
    /// The request's context, for a method that may ask for input: the client's
    /// capabilities the gate checks.
    pub(super) asker: Option<RequestContext>,
    pub(super) channel: Option<Arc<dyn Channel>>,
}

impl Finish {
    /// The sealer, for a method that may ask for input.
    fn sealer(&self) -> Option<&Sealer> {
        let sealer = self.server.inner.sealer.as_ref();
        sealer.filter(|_| self.facts.may_require_input)
    }

    /// Starts the route with `ctx`: its `requestState` is opened and verified here.
    /// With `keep`, the params and the context stay for another round.
    pub(super) fn open(
        &self,
        routed: Option<Routed>,
        ctx: RequestContext,
        params: Option<RawParams>,
        keep: bool,
    ) -> Opened {
        let Some(Routed {
            route,
            params: typed,
        }) = routed
        else {
            return Opened {
                started: Ok(None),
                again: None,
            };
        };
        let again = keep.then(|| ctx.clone());
        let call = Call {
            ctx,
            params: typed,
            sealing: self.sealer().map(|sealer| state::Sealing {
                sealer,
                principal: self.principal.as_ref(),
            }),
        };
        let started = (route.call)(call);
        // Unless kept, the params were read into the handler's type: their text goes.
        let again = match (&started, again, params) {
            (Ok(_), Some(ctx), Some(params)) => Some((route, params, ctx)),
            _ => None,
        };
        Opened {
            started: started.map(Some),
            again,
        }
    }

    /// Runs the handler and finishes its answer. The future returned keeps `self` and
    /// the handler's run once each, as they came (an `async fn` would keep its
    /// arguments and what it took out of them side by side).
    pub(super) fn run(self, opened: Opened) -> impl Future<Output = Dispatched> + Send + 'static {
        let Opened { started, again } = opened;
        let mut running = match started {
            Err(e) => return Either::Left(std::future::ready(not_started(e))),
            Ok(running) => running,
        };
        Either::Right(async move {
            let output = match &mut running {
                Some(Running { future, .. }) => future.await,
                None => Ok(Output::Complete(self.server.discover())),
            };
            match output {
                Err(e) => answered_error(e),
                Ok(Output::Complete(result)) => self.complete(result),
                Ok(Output::Shared(shared)) => self.complete_shared(shared),
                Ok(Output::InputRequired(asked)) => {
                    let binding = running.and_then(|running| running.binding);
                    self.input_required(asked, binding, again).await
                }
            }
        })
    }

    /// A complete result, with `resultType` and (for a cacheable method) the caching
    /// members it lacks; in the channel's form on a channel.
    fn complete(&self, result: String) -> Dispatched {
        let answer = match &self.channel {
            Some(channel) => channel.complete(&result),
            // A result whose type writes `resultType` lacks nothing but, when it is
            // cacheable, its caching members: its text is searched only then.
            None if self.facts.writes_result_type && !self.facts.cacheable => Ok(result),
            None => Ok(answer::complete(result, self.cache())),
        };
        Dispatched::new(
            Verdict::Answered(answer.map(ResultText::from)),
            Ending::Complete,
        )
    }

    /// [`complete`](Self::complete) for a result shared by its readers: only this
    /// answer's opening is written (a channel takes a copy of its own).
    fn complete_shared(&self, shared: Arc<SharedResult>) -> Dispatched {
        let answer = match &self.channel {
            Some(channel) => channel.complete(shared.text()).map(ResultText::from),
            None => Ok(answer::complete_shared(shared, self.cache())),
        };
        Dispatched::new(Verdict::Answered(answer), Ending::Complete)
    }

    /// The caching members a result of this method gets, when it is cacheable.
    fn cache(&self) -> Option<&answer::CacheMembers> {
        self.facts.cacheable.then_some(&self.server.inner.cache)
    }

    /// An `InputRequiredResult`: checked against the client's capabilities and sealed;
    /// handed to the channel on one.
    async fn input_required(
        &self,
        asked: Box<InputRequiredResult>,
        binding: Option<Binding>,
        again: Option<(Route, RawParams, RequestContext)>,
    ) -> Dispatched {
        let Some(capabilities) = self.asker.as_ref().map(RequestContext::client_capabilities)
        else {
            tracing::error!(method = %self.method, "a handler answered input_required on a method that cannot");
            return answered_error(RpcError::internal("Internal error"));
        };
        if let Some(channel) = self.channel.as_deref() {
            let retry = again.as_ref().map(|(route, params, ctx)| Retry {
                route: route.clone(),
                params,
                ctx: ctx.clone(),
                sealer: self.sealer(),
                principal: self.principal.as_ref(),
                capabilities,
                binding,
            });
            // Boxed by the channel: the rounds' future is large, and every request's
            // future would carry its room inline otherwise.
            return match channel.input_required(&self.method, asked, retry).await {
                Ok(result) => {
                    Dispatched::new(Verdict::Answered(Ok(result.into())), Ending::Complete)
                }
                Err(e) => answered_error(e),
            };
        }
        let sealing = self.sealer().zip(binding.as_ref());
        match state::finish_input_required(
            &self.method,
            sealing,
            self.principal.as_ref(),
            capabilities,
            &self.server.inner.rendered,
            *asked,
        ) {
            Ok(result) => {
                Dispatched::new(Verdict::Answered(Ok(result.into())), Ending::InputRequired)
            }
            Err(e) if e.code == code::MISSING_REQUIRED_CLIENT_CAPABILITY => Dispatched::new(
                Verdict::refused(Refusal::MissingCapability, e),
                Ending::Refused(Refusal::MissingCapability),
            ),
            Err(e) => answered_error(e),
        }
    }
}

/// The method's name as the context keeps it: the route's, or the request's own.
pub(super) fn method_name(routed: Option<&Routed>, method: &str) -> Cow<'static, str> {
    routed.map_or_else(
        || Cow::Owned(method.to_owned()),
        |r| Cow::Borrowed(r.route.method),
    )
}

/// The answer of a route that could not start: a rejected `requestState` ends as such.
fn not_started(error: RpcError) -> Dispatched {
    if error.is_invalid_request_state() {
        return Dispatched::new(Verdict::Answered(Err(error)), Ending::RejectedState);
    }
    answered_error(error)
}

/// A request's error as its answer.
fn answered_error(error: RpcError) -> Dispatched {
    let code = error.code;
    Dispatched::new(Verdict::Answered(Err(error)), Ending::Error(code))
}
