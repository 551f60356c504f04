//! Building a [`Server`]: its handlers, capabilities, caching fields and sealing.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::answer::CacheMembers;
use super::{
    CachePolicy, Call, Handler, Inner, Output, Reply, RequestContext, Route, Routes, Running,
    Server, Typed, discover_result, state,
};
use crate::jsonrpc::RpcError;
use crate::seal::RequestStateSecurity;
use crate::transport::BoxFuture;
use crate::types::rpc::{Answer, ClientRequestMethod, IntoAnswer};
use crate::types::v2026_07_28::method::ClientRequestParams;
use crate::types::v2026_07_28::{Implementation, InputRequiredResult, ServerCapabilities, method};

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    capabilities: Option<ServerCapabilities>,
    handlers: HashMap<&'static str, Route>,
    security: Option<RequestStateSecurity>,
    cache: CachePolicy,
    limits: super::ServerLimits,
    events: super::events::Events,
    lookups: super::lookups::Lookups,
    session_input: Option<super::SessionInput>,
    layers: Vec<Arc<dyn super::middleware::Middleware>>,
    /// The extensions served, as declared: identifier and settings.
    pub(super) extensions: Vec<(&'static str, Map<String, Value>)>,
}

impl ServerBuilder {
    /// A builder for a server called `name` at `version` ([`Server::builder`]).
    pub(super) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            instructions: None,
            capabilities: None,
            handlers: HashMap::new(),
            security: None,
            cache: CachePolicy {
                ttl_ms: 0,
                scope: "private",
            },
            limits: super::ServerLimits::default(),
            events: super::events::Events::default(),
            lookups: super::lookups::Lookups::default(),
            session_input: None,
            layers: Vec::new(),
            extensions: Vec::new(),
        }
    }
}

impl ServerBuilder {
    /// What the server allows its clients (default [`ServerLimits::default`](super::ServerLimits::default): suits
    /// tools with ordinary arguments).
    pub fn limits(mut self, limits: super::ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Instructions for the model, advertised by `server/discover`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The caching fields of list results, `resources/read` and `server/discover` when a
    /// handler sets none: how long a client may reuse them, and whether a shared cache
    /// may (`public`) or only this client (`private`, the default). The default TTL is 0:
    /// do not cache.
    pub fn cache(mut self, ttl_ms: u64, public: bool) -> Self {
        self.cache = CachePolicy {
            ttl_ms,
            scope: if public { "public" } else { "private" },
        };
        self
    }

    /// The capabilities to advertise, instead of those derived from the handlers.
    pub fn capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Handles method `M` with `handler`. For `tools/call`, `prompts/get` and
    /// `resources/read` the handler returns an `Outcome`, so `Ok(result.into())` works for
    /// a complete result and for an `InputRequiredResult` alike.
    ///
    /// What the server does with the result is decided here, from `M`'s entry in the
    /// method table and from the result's type: nothing reads it back out of JSON.
    ///
    /// A request's `_meta` is read into the handler's context (read it with
    /// [`RequestContext::meta`]: the version, the client's capabilities and info, the
    /// progress token, the log level). The params keep `_meta` only when it carries
    /// members of its own beyond those (a vendor's key, a trace context), and then all
    /// of it but the capabilities and info; otherwise their `_meta` is `None`.
    pub fn handle<M, F, Fut>(self, handler: F) -> Self
    where
        M: ClientRequestMethod,
        M::Params: ClientRequestParams,
        M::Result: IntoAnswer,
        <M::Result as IntoAnswer>::Complete: Serialize,
        <M::Result as IntoAnswer>::InputRequired: Into<InputRequiredResult> + Send,
        F: Fn(RequestContext, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result, RpcError>> + Send + 'static,
    {
        // The handler as it is: its result is the reply (`Reply: From<M::Result>`), so its
        // future is not wrapped in another that would keep it twice.
        self.handle_replying::<M, _, _, _>(handler)
    }

    /// [`handle`](Self::handle) for a handler that may answer with an extension's
    /// result instead of the method's (an McpServer's `tools/call`).
    pub(crate) fn handle_replying<M, F, Fut, O>(mut self, handler: F) -> Self
    where
        M: ClientRequestMethod,
        M::Params: ClientRequestParams,
        M::Result: IntoAnswer,
        <M::Result as IntoAnswer>::Complete: Serialize,
        <M::Result as IntoAnswer>::InputRequired: Into<InputRequiredResult> + Send,
        F: Fn(RequestContext, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, RpcError>> + Send + 'static,
        O: Into<Reply<M::Result>>,
    {
        let handler = Arc::new(handler);
        let call: Handler = Arc::new(move |call: Call<'_>| {
            let decoded = call.params.map_err(|e| {
                RpcError::invalid_params(format!("Invalid params for {}: {e}", M::METHOD))
            })?;
            let Ok(typed) = decoded.into_any().downcast::<Typed<M>>() else {
                tracing::error!(method = M::METHOD, "params decoded for another method");
                return Err(RpcError::internal("Internal error"));
            };
            // The params stay boxed until the handler takes them: they are large (their
            // `_meta` alone is hundreds of bytes), and each move is a copy.
            let mut typed = typed;
            let mut binding = match call.sealing {
                Some(sealing) => Some(state::open::<M>(sealing, &mut typed.0)?),
                None => None,
            };
            let handler = Arc::clone(&handler);
            let ctx = call.ctx;
            if let Some(token) = binding.as_mut().and_then(|b| b.redeemed.take()) {
                ctx.set_sealed_state(token);
            }
            let future: BoxFuture<'static, Result<Output, RpcError>> = Box::pin(async move {
                let encoded = match handler(ctx, typed.0).await?.into() {
                    Reply::Shared(shared) => return Ok(Output::Shared(shared)),
                    Reply::Instead(raw) => Ok(String::from(Box::<str>::from(raw))),
                    Reply::Now(answer) => match answer.into_answer() {
                        Answer::Complete(result) => serde_json::to_string(&result),
                        Answer::InputRequired(asked) => {
                            return Ok(Output::InputRequired(Box::new(asked.into())));
                        }
                    },
                };
                encoded.map(Output::Complete).map_err(|e| {
                    tracing::error!(method = M::METHOD, error = %e, "could not encode a result");
                    RpcError::internal("Internal error")
                })
            });
            Ok(Running { future, binding })
        });
        self.handlers.insert(M::METHOD, Route::of::<M>(call));
        self
    }

    /// Seals every outgoing `requestState` and verifies every incoming one under
    /// `security` (see [`crate::seal`]). Without this line, state crosses the wire
    /// exactly as the handler wrote it.
    pub fn seal(mut self, security: RequestStateSecurity) -> Self {
        self.security = Some(security);
        self
    }

    /// Serves the direct form on 2025-11-25 sessions too: an `InputRequiredResult` a
    /// handler returns on a session is fulfilled over the session (each input request
    /// sent to the client as its own request) and the handler called again with the
    /// answers and the (sealed, then verified) state, as a 2026-07-28 retry would call
    /// it; rounds and time are bounded by `policy`. Off by default: on a session, an
    /// `InputRequiredResult` is then -32603, and handlers ask with
    /// [`RequestContext::request_input`].
    pub fn fulfil_input_on_sessions(mut self, policy: super::SessionInput) -> Self {
        self.session_input = Some(policy);
        self
    }

    /// Adds a layer around dispatch (see [`middleware`](super::middleware)). Layers run
    /// in the order they are added: the first sees each request first and its answer
    /// last.
    pub fn layer(mut self, layer: impl super::middleware::Middleware) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Adds layers already shared (an `McpServer`'s), after those added so far.
    pub(crate) fn layers(mut self, layers: Vec<Arc<dyn super::middleware::Middleware>>) -> Self {
        self.layers.extend(layers);
        self
    }

    /// Shares `events` with the server built (an `McpServer`'s, so its list changes reach
    /// the sessions of the server it builds).
    pub(crate) fn events(mut self, events: super::events::Events) -> Self {
        self.events = events;
        self
    }

    /// What the server tells its transports about a request before serving it (an
    /// `McpServer`'s registry).
    pub(crate) fn lookups(mut self, lookups: super::lookups::Lookups) -> Self {
        self.lookups = lookups;
        self
    }

    /// Builds the server. Fails when the sealing policy is invalid for this server.
    pub fn build(self) -> Result<Server, crate::ConfigError> {
        let sealer = match self.security {
            Some(s) => Some(
                s.build(
                    Some(&self.info.name)
                        .filter(|n| !n.is_empty())
                        .map(String::as_str),
                )?,
            ),
            None => None,
        };
        let mut capabilities = self
            .capabilities
            .unwrap_or_else(|| derive_capabilities(self.handlers.keys().copied()));
        declare(self.extensions, &mut capabilities);
        let discover = discover_result(&self.info, self.instructions.as_deref(), &capabilities)?;
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                capabilities,
                handlers: Routes::new(self.handlers),
                sealer,
                cache: CacheMembers::new(self.cache.ttl_ms, self.cache.scope),
                discover,
                limits: self.limits.json(),
                session_state_limit: self.limits.max_session_state_bytes,
                events: self.events,
                lookups: self.lookups,
                session_input: self.session_input,
                layers: self.layers.into(),
                metas: Default::default(),
                rendered: Default::default(),
            }),
        })
    }
}

/// The capabilities a server with handlers for `methods` has: for each method, the
/// `ServerCapabilities` member the method table names (an empty object).
fn derive_capabilities<'a>(methods: impl Iterator<Item = &'a str>) -> ServerCapabilities {
    let mut caps = serde_json::Map::new();
    for capability in methods.filter_map(|m| method::info(m)?.capability) {
        caps.entry(capability)
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    }
    serde_json::from_value(serde_json::Value::Object(caps)).unwrap_or_else(|e| {
        tracing::error!(error = %e, "the method table names a capability ServerCapabilities lacks");
        ServerCapabilities::new()
    })
}

/// Declares each extension's identifier and settings under `capabilities.extensions`,
/// keeping any declared there already.
pub(crate) fn declare(
    extensions: impl IntoIterator<Item = (&'static str, Map<String, Value>)>,
    capabilities: &mut ServerCapabilities,
) {
    let mut extensions = extensions.into_iter().peekable();
    if extensions.peek().is_none() {
        return;
    }
    let declared = capabilities.extensions.get_or_insert_with(Default::default);
    for (id, settings) in extensions {
        declared.entry(id.to_owned()).or_insert(settings);
    }
}
