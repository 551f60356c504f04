//! One request through the server, the same for every transport: accepted (its
//! `_meta` read once), then served to a [`Verdict`] the transport maps onto its wire.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::context::Channel;
use super::{Decoded, Outbound, ResultText, Route, Server, Session};
use crate::Era;
use crate::auth::AuthInfo;
use crate::jsonrpc::{Incoming, RawParams, Rejected, RpcError, code};
use crate::protocol::{self, META, MetaRead};
use crate::types::rpc::Request as _;
use crate::types::rpc::members;
use crate::types::v2026_07_28::{RequestId, method};

/// One request as a transport hands it to the server.
#[derive(Debug)]
#[non_exhaustive]
pub struct IncomingRequest {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The method: the protocol's own name, borrowed, when it is one.
    pub method: Cow<'static, str>,
    /// The params, as sent (JSON text: the handler reads them into its method's type).
    pub params: Option<RawParams>,
    /// The identity of a validated access token, if the transport authenticated one.
    pub auth: Option<AuthInfo>,
    /// Cancelled when the client cancels or goes away.
    pub cancel: CancellationToken,
    /// Where the request's notifications (progress, logs) go, as JSON-RPC messages.
    pub(crate) outbound: Option<Outbound>,
    /// The client's address, when the transport knows it: who asked, when no credential
    /// says.
    pub(crate) peer: Option<std::net::IpAddr>,
}

impl IncomingRequest {
    /// A request with no authenticated caller, a cancellation token of its own and
    /// nowhere to send notifications; the `with_*` methods add those.
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Self::from_raw(id, method.into(), params.as_ref().map(RawParams::from))
    }

    /// A request whose params are still JSON text, as a transport read them.
    pub(crate) fn from_raw(
        id: RequestId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawParams>,
    ) -> Self {
        Self {
            id,
            method: method.into(),
            params,
            auth: None,
            cancel: CancellationToken::new(),
            outbound: None,
            peer: None,
        }
    }

    /// The identity of the access token the transport validated.
    pub fn with_auth(mut self, auth: Option<AuthInfo>) -> Self {
        self.auth = auth;
        self
    }
}

/// Why the server refused a request before (or instead of) its handler's answer: the
/// protocol-level failures a transport may report differently from a handler's error
/// (over HTTP: 400 or 404 rather than 200).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `params._meta` is missing or malformed (-32602).
    InvalidMeta,
    /// The request's protocol version is not one the server speaks (-32022).
    UnsupportedVersion,
    /// No handler serves the method (-32601).
    UnknownMethod,
    /// The answer would ask the client for something it did not declare (-32021).
    MissingCapability,
}

/// How the server answered one request.
#[derive(Debug)]
#[must_use]
pub(crate) enum Verdict {
    /// The request was served: the result, written as JSON text (from the handler's
    /// typed result, with the members the protocol adds), or the error its handler (or
    /// the sealing layer) decided.
    Answered(Result<ResultText, RpcError>),
    /// The request was refused for a protocol reason.
    Refused {
        /// Which rule the request broke.
        #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
        reason: Refusal,
        /// The JSON-RPC error to send.
        error: RpcError,
    },
}

impl Verdict {
    pub(super) fn refused(reason: Refusal, error: RpcError) -> Self {
        Self::Refused { reason, error }
    }

    /// The JSON-RPC outcome, the result as JSON text, for transports that draw no
    /// distinction.
    pub(crate) fn into_result(self) -> Result<ResultText, RpcError> {
        match self {
            Self::Answered(result) => result,
            Self::Refused { error, .. } => Err(error),
        }
    }
}

/// A request the server has read and is ready to serve: what a transport may still
/// check before serving it (the HTTP headers against the body) is readable here.
///
/// Boxed, and the box kept when it is admitted: what a request carries through its
/// stages is some 560 bytes, and each stage it moved on to copied them all.
#[derive(Debug)]
pub(crate) struct Accepted(Box<Checked>);

/// What an accepted or admitted request carries.
#[derive(Debug)]
pub(super) struct Checked {
    pub(super) server: Server,
    pub(super) request: IncomingRequest,
    pub(super) meta: MetaRead,
    /// The route serving the method, found once, with the params read into its type.
    pub(super) routed: Option<Routed>,
    /// The value of the method's target member (a tool or prompt name, a resource URI),
    /// when it is a string and the params could not be read into their type.
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    pub(super) target: Option<String>,
    /// The channel the request arrived on, if not its own (a session's).
    pub(super) channel: Option<Arc<dyn Channel>>,
    /// The params, found on the wire by their extent, turned out not to be JSON.
    pub(super) malformed: bool,
}

/// A request's route and its params as the route read them.
pub(super) struct Routed {
    pub(super) route: Route,
    pub(super) params: Result<Box<dyn Decoded>, serde_json::Error>,
}

impl std::fmt::Debug for Routed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routed")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// Reads `request` as a stateless request ([`Server::accept`]).
pub(super) fn accept(server: &Server, request: IncomingRequest) -> Accepted {
    let text = request.params.as_ref().map_or("{}", RawParams::get);
    let (mut routed, known) = match server.inner.handlers.get(&request.method) {
        None => (None, None),
        Some(route) => {
            let (params, known) = match read_split(server, route, text, request.auth.as_ref()) {
                Some((params, meta)) => (Ok(params), Some(meta)),
                None => ((route.decode)(text), None),
            };
            let route = route.clone();
            (Some(Routed { route, params }), known)
        }
    };
    let (meta, target) = match (known, routed.as_mut().map(|r| &mut r.params)) {
        (Some(meta), _) => (meta, None),
        (None, Some(Ok(typed))) => (
            MetaRead::take(typed.meta_slot(), protocol::SUPPORTED_VERSIONS),
            None,
        ),
        // Unrouted, or params that are not their type: `_meta` and the target are
        // read on their own, so the refusal names exactly what is wrong.
        _ => read_apart(&request),
    };
    // Params a transport did not check are JSON if they were read into their type;
    // otherwise (no route, or not their type) they are checked now.
    let read = matches!(&routed, Some(Routed { params: Ok(_), .. }));
    let malformed = !read
        && request
            .params
            .as_ref()
            .is_some_and(|p| !p.is_checked() && !crate::jsonrpc::is_json(p.get()));
    Accepted(Box::new(Checked {
        server: server.clone(),
        request,
        meta,
        routed,
        target,
        channel: None,
        malformed,
    }))
}

/// [`accept`] for `request`, read from the message `bytes` by
/// [`Incoming::read_within`]: params it took as closing the message that are not JSON
/// send the message back to the reader that finds where they end. `Err`: the refusal of
/// a message that is not JSON.
pub(super) fn accept_read(
    server: &Server,
    request: IncomingRequest,
    bytes: &[u8],
) -> Result<Accepted, Box<Rejected>> {
    let accepted = accept(server, request);
    if !accepted.0.malformed {
        return Ok(accepted);
    }
    if accepted.params().is_some_and(RawParams::is_guessed) {
        if let Ok(Incoming::Request { params, .. }) = Incoming::read(bytes) {
            let mut request = accepted.0.request;
            request.params = params;
            let again = accept(server, request);
            if !again.0.malformed {
                return Ok(again);
            }
        }
    }
    Err(Incoming::rejection(bytes))
}

/// The usual request's params read apart: the `_meta` found among those the server
/// knows (or read on its own), the rest into the route's type. `None` when in any
/// doubt, and the params are read whole.
fn read_split(
    server: &Server,
    route: &Route,
    text: &str,
    auth: Option<&AuthInfo>,
) -> Option<(Box<dyn Decoded>, MetaRead)> {
    let split = server
        .inner
        .metas
        .split(text, auth, protocol::SUPPORTED_VERSIONS)?;
    let mut params = (route.decode)(&split.rest).ok()?;
    let slot = params.meta_slot()?;
    // A second `_meta` member: the general read says which one counts.
    if slot.is_some() {
        return None;
    }
    *slot = split.meta.left();
    Some((params, split.meta.read()))
}

/// `_meta` and the target found in the params text on their own, for a request whose
/// params were not read into a type.
fn read_apart(request: &IncomingRequest) -> (MetaRead, Option<String>) {
    let target_member = protocol::method_info(&request.method).and_then(|m| m.target);
    let (meta, target) = match (request.params.as_ref(), target_member) {
        (Some(params), Some(member)) => {
            let [meta, target] = members(params.get(), [META, member]);
            (meta, target)
        }
        (Some(params), None) => (members(params.get(), [META])[0], None),
        (None, _) => (None, None),
    };
    let target = target.and_then(|t| serde_json::from_str::<String>(t).ok());
    (MetaRead::of(meta, protocol::SUPPORTED_VERSIONS), target)
}

/// The params text without its `_meta` member, when it has one.
fn without_meta(params: &RawParams) -> Option<String> {
    let mut object: serde_json::Map<String, Value> = serde_json::from_str(params.get()).ok()?;
    object.remove(META)?;
    serde_json::to_string(&object).ok()
}

impl Accepted {
    /// The request's JSON-RPC id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.0.request.id
    }

    /// The token that cancels the handler (the transport's, when it sets one here).
    pub(crate) fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.0.request.cancel = cancel;
        self
    }

    /// Where the request's notifications go.
    pub(crate) fn with_outbound(mut self, outbound: Option<Outbound>) -> Self {
        self.0.request.outbound = outbound;
        self
    }

    /// The method asked for.
    pub(crate) fn method(&self) -> &str {
        &self.0.request.method
    }

    /// Whether its answer is a stream that stays open until it is ended (a routed
    /// method's [`Request::NEVER_ENDS`](crate::types::rpc::Request::NEVER_ENDS)).
    #[cfg(feature = "http-server")]
    pub(crate) fn never_ends(&self) -> bool {
        self.0.routed.as_ref().is_some_and(|r| r.route.never_ends)
    }

    /// Its method's entry in the method table: its route's, found when it was
    /// registered, else looked up by name.
    #[cfg(feature = "http-server")]
    pub(crate) fn method_info(&self) -> Option<&'static crate::types::rpc::MethodInfo> {
        match &self.0.routed {
            Some(routed) => routed.route.info,
            None => crate::protocol::method_info(self.method()),
        }
    }

    /// The params, as sent.
    pub(crate) fn params(&self) -> Option<&RawParams> {
        self.0.request.params.as_ref()
    }

    /// The request's target, when its method has one (a tool or prompt name, a resource
    /// URI) and the params name it with a string.
    #[cfg(feature = "http-server")]
    pub(crate) fn target(&self) -> Option<&str> {
        match self.0.routed.as_ref().map(|r| &r.params) {
            Some(Ok(typed)) => typed.target(),
            _ => self.0.target.as_deref(),
        }
    }

    /// The identity of the access token the transport validated, if any.
    #[cfg(feature = "http-server")]
    pub(crate) fn auth(&self) -> Option<&AuthInfo> {
        self.0.request.auth.as_ref()
    }

    /// The protocol version named by the request's `_meta`, when it names one (even if
    /// the rest of `_meta` is malformed): stateless requests carry it, a 2025-11-25
    /// session's requests do not.
    #[cfg(feature = "http-server")]
    pub(crate) fn protocol_version(&self) -> Option<&str> {
        self.0.meta.version.as_deref()
    }

    /// Whether the request carries the 2026-07-28 `_meta` protocol version key (well
    /// formed or not): such a request is stateless, whatever the connection did before.
    pub(crate) fn names_protocol_version(&self) -> bool {
        self.0.meta.stateless
    }

    /// Serves the request on `session`, a 2025-11-25 session the transport holds: the
    /// handler sees the session's capabilities instead of `_meta`, and an
    /// `InputRequiredResult` (which that era lacks) becomes -32603.
    ///
    /// A session's era belongs to the session: `_meta` only lends the progress token,
    /// and params whose `_meta` is not a 2026-07-28 one (a bare `progressToken`, as
    /// sessions send) are read again without it.
    pub(crate) fn on_session(mut self, session: &Session) -> Self {
        let channel = session.channel();
        let mut meta = channel.request_meta(self.0.meta.progress_token.take());
        meta.trace = self.0.meta.trace.take();
        self.0.meta.meta = Ok(meta);
        self.0.channel = Some(channel);
        if let Some(routed) = &mut self.0.routed {
            if routed.params.is_err() {
                if let Some(text) = self.0.request.params.as_ref().and_then(without_meta) {
                    routed.params = (routed.route.decode)(&text);
                }
            }
        }
        self
    }

    /// Runs the checks and the handler: [`admit`](Self::admit), then
    /// [`Admitted::serve`].
    pub(crate) async fn serve(self) -> Verdict {
        match self.admit() {
            Ok(admitted) => admitted.serve().await.into_verdict(),
            Err(refused) => refused,
        }
    }

    /// The checks that need no handler: a stateless request's `_meta` (its version
    /// supported), then the method. A transport that must choose its answer's form
    /// before the handler runs (HTTP: JSON or a stream) learns a refusal here.
    pub(crate) fn admit(self) -> Result<Admitted, Verdict> {
        let checked = self.0;
        if let Err(error) = checked.meta.meta {
            let reason = if error.code == code::UNSUPPORTED_PROTOCOL_VERSION {
                Refusal::UnsupportedVersion
            } else {
                Refusal::InvalidMeta
            };
            return Err(Verdict::refused(reason, error));
        }
        // `server/discover` is a stateless request's: a session knows its server. The
        // comparison is its route (the server answers it itself), not a fact to ask.
        let discover =
            checked.channel.is_none() && checked.request.method == method::Discover::METHOD; // route
        if checked.routed.is_none() && !discover {
            let error = RpcError::method_not_found(&checked.request.method);
            return Err(Verdict::refused(Refusal::UnknownMethod, error));
        }
        Ok(Admitted(checked))
    }
}

/// A request that passed the checks and is ready for its handler: in the box it was
/// accepted in, its `_meta` read (`meta.meta` is `Ok`) and its method routed (or the
/// built-in `server/discover`).
pub(crate) struct Admitted(pub(super) Box<Checked>);

impl std::fmt::Debug for Admitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted")
            .field("request", &self.0.request)
            .field("era", &self.era())
            .finish_non_exhaustive()
    }
}

impl Admitted {
    /// [`Accepted::never_ends`], of the request admitted.
    #[cfg(feature = "http-server")]
    pub(crate) fn never_ends(&self) -> bool {
        self.0.routed.as_ref().is_some_and(|r| r.route.never_ends)
    }

    /// The token that cancels the handler, as the request came with it.
    #[cfg(feature = "http-server")]
    pub(crate) fn cancellation(&self) -> &CancellationToken {
        &self.0.request.cancel
    }

    /// Sets the token that cancels the handler (in place: an admitted request is
    /// large to move).
    #[cfg(feature = "http-server")]
    pub(crate) fn set_cancel(&mut self, cancel: CancellationToken) {
        self.0.request.cancel = cancel;
    }

    /// Sets where the request's notifications go.
    #[cfg(feature = "http-server")]
    pub(crate) fn set_outbound(&mut self, outbound: Option<Outbound>) {
        self.0.request.outbound = outbound;
    }

    /// Whether the request is served statelessly or on a session.
    pub(crate) fn era(&self) -> Era {
        Era::on_session(self.0.channel.is_some())
    }
}

/// How many panics in a request's task (a handler, a layer, a token verifier) were
/// caught and answered -32603, in this process: what a metrics surface may read.
static CAUGHT_PANICS: AtomicU64 = AtomicU64::new(0);

/// A panic caught in a request's task: logged, counted, and turned into the error its
/// request is answered (-32603, with no detail of the panic for the client). The
/// transport that caught it serves on.
pub(crate) fn caught_panic(payload: &(dyn Any + Send)) -> RpcError {
    CAUGHT_PANICS.fetch_add(1, Ordering::Relaxed);
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)");
    tracing::error!(
        panic = message,
        "a request's task panicked: answered -32603, serving on"
    );
    RpcError::internal("Internal error")
}

/// How many panics [`caught_panic`] has counted in this process.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn caught_panics() -> u64 {
    CAUGHT_PANICS.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_is_counted_and_answered_internal_error() {
        let before = caught_panics();
        let payload = std::panic::catch_unwind(|| panic!("boom")).expect_err("it panicked");
        let error = caught_panic(&*payload);
        assert_eq!(error.code, code::INTERNAL_ERROR);
        assert!(!error.message.contains("boom"), "no detail for the client");
        assert!(caught_panics() > before);
    }
}
