//! The low-level server: one async handler per method, generic over the generated
//! method types.
//!
//! `tools/call`, `prompts/get` and `resources/read` handlers return
//! [`Outcome`](crate::types::v2026_07_28::Outcome): the complete result, or an
//! [`InputRequiredResult`] asking the
//! client for input and a retry. Every other method's handler returns its plain result,
//! so answering input-required there does not compile.
//!
//! ```
//! use tern_mcp::server::Server;
//! use tern_mcp::types::v2026_07_28::{method, CallToolResult, ContentBlock, InputRequiredResult, TextContent};
//!
//! let server = Server::builder("Provisioner", "1.0.0")
//!     .handle::<method::CallTool, _, _>(|_ctx, params| async move {
//!         match params.request_state.as_deref() {
//!             None => Ok(InputRequiredResult { request_state: Some("step-1".into()), ..InputRequiredResult::new() }.into()),
//!             Some(_) => Ok(CallToolResult::new(vec![ContentBlock::Text(TextContent::new("done"))]).into()),
//!         }
//!     })
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

mod answer;
pub(crate) mod builder;
mod context;
mod dispatch;
pub(crate) mod events;
pub(crate) mod extension;
mod finish;
mod limits;
pub(crate) mod lookups;

mod known_meta;
pub mod middleware;
pub(crate) mod outbound;
mod pipeline;
mod rendered;
pub mod replay;
mod serve;
mod session;
mod state;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

pub(crate) use answer::{ResultText, SharedResult};
pub use builder::ServerBuilder;
pub use limits::ServerLimits;

pub use crate::protocol::meta::RequestMeta;
pub use context::RequestContext;
pub use events::ServerEvent;
pub(crate) use events::Stamped;
pub use extension::ProtocolExtension;
pub(crate) use outbound::Outbound;
pub(crate) use pipeline::Accepted;
#[cfg(feature = "http-server")]
pub(crate) use pipeline::Admitted;
#[cfg(any(test, feature = "http-server"))]
pub(crate) use pipeline::Verdict;
#[cfg_attr(not(feature = "http-server"), allow(unused_imports))]
pub(crate) use pipeline::caught_panic;
pub use pipeline::{IncomingRequest, Refusal};
#[cfg(feature = "http-server")]
pub use serve::shutdown_signal;
pub use session::SessionInput;
pub(crate) use session::{OnSession, Session, ask_all};

use crate::jsonrpc::{JsonLimits, RpcError};
use crate::protocol;
use crate::seal::Sealer;
use crate::transport::BoxFuture;
use crate::types::rpc::Request;
use crate::types::v2026_07_28::method::ClientRequestParams;
use crate::types::v2026_07_28::{
    DiscoverResult, Implementation, InputRequiredResult, RequestMetaObject, ServerCapabilities,
};

/// What a handler answered, told apart by its result's type when it was registered.
pub(crate) enum Output {
    /// A complete result, written as JSON text from its typed value.
    Complete(String),
    /// A complete result written once and shared by every request that reads it.
    Shared(Arc<SharedResult>),
    /// An input-required result, still typed: the server checks and seals it (boxed:
    /// it is several times the size of a complete one).
    InputRequired(Box<InputRequiredResult>),
}

/// What a handler registered with [`ServerBuilder::handle_replying`] answers: the
/// method's result, or an extension's result in its place (written as is: the tasks
/// extension's task, whose `resultType` is `task`).
pub(crate) enum Reply<R> {
    /// The result, now.
    Now(R),
    /// An extension's own result instead.
    Instead(Box<serde_json::value::RawValue>),
    /// The result, written before and shared (a static resource's fixed contents).
    Shared(Arc<SharedResult>),
}

impl<R> From<R> for Reply<R> {
    fn from(result: R) -> Self {
        Self::Now(result)
    }
}

/// What the server hands a route: the handler's context, the params as text, and the
/// sealer with the caller when the route's `requestState` is sealed.
pub(crate) struct Call<'a> {
    ctx: RequestContext,
    params: Result<Box<dyn Decoded>, serde_json::Error>,
    sealing: Option<state::Sealing<'a>>,
}

/// A request's params read into its method's type (once, at `accept`): what the server
/// reads from them before the handler runs, then the value the handler gets.
pub(crate) trait Decoded: std::any::Any + Send + std::fmt::Debug {
    /// Where the request's `_meta` is kept: what the handler's context keeps is moved
    /// out of it, and a `_meta` read before is put back into it. `None` when the params
    /// themselves are absent.
    fn meta_slot(&mut self) -> Option<&mut Option<Box<RequestMetaObject>>>;
    /// The request's target (a tool or prompt name, a resource URI).
    fn target(&self) -> Option<&str>;
    /// The value, for the route to take back as its method's type.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send>;
}

/// The params of a request for method `M`, typed.
pub(crate) struct Typed<M: Request>(M::Params);

impl<M: Request> std::fmt::Debug for Typed<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<M> Decoded for Typed<M>
where
    M: Request,
    M::Params: ClientRequestParams,
{
    fn meta_slot(&mut self) -> Option<&mut Option<Box<RequestMetaObject>>> {
        self.0.request_meta_slot()
    }

    fn target(&self) -> Option<&str> {
        M::target(&self.0)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}

/// Reads a request's params text into `M`'s params type.
fn decode<M>(text: &str) -> Result<Box<dyn Decoded>, serde_json::Error>
where
    M: Request,
    M::Params: ClientRequestParams,
{
    let params: M::Params = serde_json::from_str(text)?;
    Ok(Box::new(Typed::<M>(params)))
}

/// A route started: the handler's future, and what sealed state it answers with is bound
/// to (when the route seals).
pub(crate) struct Running {
    future: BoxFuture<'static, Result<Output, RpcError>>,
    binding: Option<state::Binding>,
}

/// A route's entry point, generic over its method where it was registered: reads the
/// params into the method's type once, opens a sealed `requestState`, and starts the
/// handler.
type Handler = Arc<dyn Fn(Call<'_>) -> Result<Running, RpcError> + Send + Sync>;

/// A registered method: its handler, and what the method table says the server must do
/// around it, read from the method's marker at registration.
#[derive(Clone)]
pub(crate) struct Route {
    /// The method's name, for the handler's context without a copy of the request's.
    method: &'static str,
    call: Handler,
    /// Reads the params into the method's type.
    decode: fn(&str) -> Result<Box<dyn Decoded>, serde_json::Error>,
    /// The handler may answer input-required: incoming state is verified, outgoing
    /// state sealed.
    may_require_input: bool,
    /// The result carries `ttlMs` and `cacheScope`.
    cacheable: bool,
    /// The result's type always writes `resultType`: its text is not searched for one.
    writes_result_type: bool,
    /// The answer is a stream that stays open until it is ended ([`Request::NEVER_ENDS`]).
    #[cfg(feature = "http-server")]
    never_ends: bool,
    /// Its entry in the method table (none for an extension's method the table lacks,
    /// `skills/get`), found once here: what its HTTP headers repeat of its body.
    #[cfg(feature = "http-server")]
    info: Option<&'static crate::types::rpc::MethodInfo>,
}

impl Route {
    fn of<M>(call: Handler) -> Self
    where
        M: Request,
        M::Params: ClientRequestParams,
    {
        Self {
            method: M::METHOD,
            call,
            decode: decode::<M>,
            may_require_input: M::MAY_REQUIRE_INPUT,
            cacheable: M::CACHEABLE,
            writes_result_type: M::WRITES_RESULT_TYPE,
            #[cfg(feature = "http-server")]
            never_ends: M::NEVER_ENDS,
            #[cfg(feature = "http-server")]
            info: crate::protocol::method_info(M::METHOD),
        }
    }
}

/// A server's routes, sorted by method name. A request's method is found by a binary
/// search over a few short names: cheaper than hashing it (SipHash) for a map.
struct Routes(Box<[Route]>);

impl Routes {
    fn new(handlers: HashMap<&'static str, Route>) -> Self {
        let mut routes: Vec<Route> = handlers.into_values().collect();
        routes.sort_unstable_by_key(|route| route.method);
        Self(routes.into())
    }

    /// The route of `method`, when the server has one.
    fn get(&self, method: &str) -> Option<&Route> {
        let at = self
            .0
            .binary_search_by(|route| route.method.cmp(method))
            .ok()?;
        self.0.get(at)
    }

    /// The methods routed, in order.
    fn methods(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|route| route.method)
    }
}

/// A low-level MCP server. Cheap to clone; serve it on as many transports as you like.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    capabilities: ServerCapabilities,
    handlers: Routes,
    sealer: Option<Sealer>,
    /// The `ttlMs` and `cacheScope` a cacheable result gets when its handler set none.
    cache: answer::CacheMembers,
    /// The `server/discover` result, written once: nothing in it changes after `build`.
    discover: String,
    /// How complex an incoming message may be.
    limits: JsonLimits,
    /// The bytes of capabilities and client info a 2025-11-25 session may keep.
    session_state_limit: usize,
    /// What the server tells clients outside any request.
    events: events::Events,
    /// Whether (and how) `InputRequiredResult`s on sessions are fulfilled.
    session_input: Option<SessionInput>,
    /// The layers around dispatch, outermost first.
    layers: middleware::Layers,
    /// The `_meta` texts read lately, not read again when a client repeats one.
    metas: known_meta::KnownMetas,
    /// The questions written lately, not written again when a handler repeats one.
    rendered: rendered::RenderedRequests,
    /// What its transports may ask before serving a request.
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    lookups: lookups::Lookups,
}

/// The `ttlMs` and `cacheScope` a cacheable result gets when its handler set none.
#[derive(Debug, Clone, Copy)]
struct CachePolicy {
    ttl_ms: u64,
    scope: &'static str,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let methods: Vec<_> = self.inner.handlers.methods().collect();
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("methods", &methods)
            .field("sealed", &self.inner.sealer.is_some())
            .finish()
    }
}

impl Server {
    /// A builder for a server called `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    /// Reads `request` as a stateless request: its params into their method's type, once,
    /// and from them its `_meta` and its target.
    pub(crate) fn accept(&self, request: IncomingRequest) -> Accepted {
        pipeline::accept(self, request)
    }

    /// [`accept`](Self::accept) for a request a transport read from the message `bytes`
    /// ([`Incoming::read_within`](crate::jsonrpc::Incoming::read_within)); `Err` is the
    /// refusal of a message that is not JSON, which nothing else may act on.
    pub(crate) fn accept_read(
        &self,
        request: IncomingRequest,
        bytes: &[u8],
    ) -> Result<Accepted, Box<crate::jsonrpc::Rejected>> {
        pipeline::accept_read(self, request, bytes)
    }

    /// Serves one request and returns its JSON-RPC outcome: for a transport of its own
    /// that answers each request with one response (notifications the handler sends
    /// have nowhere to go; [`serve`](Self::serve) a message transport to carry them).
    pub async fn handle(&self, request: IncomingRequest) -> Result<Value, RpcError> {
        let result = self.accept(request).serve().await.into_result()?;
        serde_json::from_str(&result.into_string()).map_err(|e| {
            tracing::error!(error = %e, "a result was not JSON");
            RpcError::internal("Internal error")
        })
    }

    /// Serves requests arriving on `transport` until the peer goes away. In-flight
    /// handlers are cancelled when it does.
    pub async fn serve<T: crate::transport::MessageTransport>(
        &self,
        transport: T,
    ) -> crate::Result<()> {
        serve::messages::serve(self, transport).await
    }

    /// Answers a 2025-11-25 `initialize`: the new session, and the result to send.
    pub(crate) fn open_session(
        &self,
        params: Option<&Value>,
    ) -> Result<(Session, Value), RpcError> {
        session::open(self, params)
    }

    /// Tells every client listening (a `subscriptions/listen` stream, a 2025-11-25
    /// session's stream) about `event`; each hears it only if it asked for it.
    pub fn publish(&self, event: ServerEvent) {
        self.inner.events.publish(event);
    }

    /// What the server tells its transports about a request before serving it.
    #[cfg(feature = "http-server")]
    pub(crate) fn lookups(&self) -> &lookups::Lookups {
        &self.inner.lookups
    }

    /// The server's events from now on, for a transport that carries them to clients.
    pub(crate) fn events(&self) -> tokio::sync::broadcast::Receiver<events::Stamped> {
        self.inner.events.subscribe()
    }

    /// The events that begin on this instance (for a fleet's bus).
    #[cfg(feature = "http-server")]
    pub(crate) fn local_events(&self) -> tokio::sync::broadcast::Receiver<events::Stamped> {
        self.inner.events.subscribe_local()
    }

    /// Tells the listeners here about `event`, which began on another instance.
    #[cfg(feature = "http-server")]
    pub(crate) fn deliver(&self, event: events::Stamped) {
        self.inner.events.deliver(event);
    }

    /// This instance's name in the stamps of the events begun here.
    #[cfg(feature = "http-server")]
    pub(crate) fn event_origin(&self) -> &Arc<str> {
        self.inner.events.origin()
    }

    /// How complex an incoming message may be: transports check it before parsing.
    pub(crate) fn json_limits(&self) -> &JsonLimits {
        &self.inner.limits
    }

    /// The `server/discover` result this server answers, as JSON text.
    fn discover(&self) -> String {
        self.inner.discover.clone()
    }
}

/// Writes the `server/discover` result of a server with these parts.
fn discover_result(
    info: &Implementation,
    instructions: Option<&str>,
    capabilities: &ServerCapabilities,
) -> Result<String, crate::ConfigError> {
    let mut result = DiscoverResult::new(
        capabilities.clone(),
        protocol::SUPPORTED_VERSIONS
            .iter()
            .map(|v| (*v).to_owned())
            .collect(),
    );
    result.instructions = instructions.map(str::to_owned);
    let mut value = serde_json::to_value(result).map_err(|e| {
        crate::ConfigError::Invalid(format!("the server's info does not serialize: {e}"))
    })?;
    value[protocol::META] = json!({ protocol::META_SERVER_INFO: info });
    Ok(value.to_string())
}
