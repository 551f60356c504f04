//! The low-level server: one async handler per method, generic over the generated
//! method types.
//!
//! `tools/call`, `prompts/get` and `resources/read` handlers return
//! [`Outcome`](crate::types::v2026_07_28::Outcome): the complete result, or an
//! [`InputRequiredResult`](crate::types::v2026_07_28::InputRequiredResult) asking the
//! client for input and a retry. Every other method's handler returns its plain result,
//! so answering input-required there does not compile.
//!
//! ```
//! use tern::server::Server;
//! use tern::types::v2026_07_28::{method, CallToolResult, ContentBlock, InputRequiredResult, TextContent};
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

mod context;
mod mcp;
mod serve;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use context::RequestContext;
pub use mcp::*;

use crate::auth::AuthInfo;
use crate::jsonrpc::RpcError;
use crate::protocol::{self, RequestMeta};
use crate::seal::{Principal, RequestBinding, RequestStateSecurity, Sealer};
use crate::transport::BoxFuture;
use crate::types::rpc::{ClientRequestMethod, Request};
use crate::types::v2026_07_28::{
    DiscoverResult, Implementation, InputRequests, RequestId, ServerCapabilities,
};

type Handler =
    Arc<dyn Fn(RequestContext, Value) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// The methods whose results may be `InputRequiredResult`.
const INPUT_REQUIRED_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// Results that must carry `ttlMs` and `cacheScope`.
const CACHEABLE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// One request as a transport hands it to the server.
#[derive(Debug)]
pub struct IncomingRequest {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params, as sent.
    pub params: Option<Value>,
    /// The identity of a validated access token, if the transport authenticated one.
    pub auth: Option<AuthInfo>,
    /// Cancelled when the client cancels or goes away.
    pub cancel: CancellationToken,
    /// Where the request's notifications (progress, logs) go, as JSON-RPC messages.
    pub outbound: Option<mpsc::UnboundedSender<String>>,
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
    handlers: HashMap<&'static str, Handler>,
    sealer: Option<Sealer>,
    cache: CachePolicy,
}

/// The `ttlMs` and `cacheScope` a cacheable result gets when its handler set none.
#[derive(Debug, Clone, Copy)]
struct CachePolicy {
    ttl_ms: u64,
    scope: &'static str,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut methods: Vec<_> = self.inner.handlers.keys().collect();
        methods.sort();
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("methods", &methods)
            .field("sealed", &self.inner.sealer.is_some())
            .finish()
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    capabilities: Option<ServerCapabilities>,
    handlers: HashMap<&'static str, Handler>,
    security: Option<RequestStateSecurity>,
    cache: CachePolicy,
}

impl Server {
    /// A builder for a server called `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            capabilities: None,
            handlers: HashMap::new(),
            security: None,
            cache: CachePolicy {
                ttl_ms: 0,
                scope: "private",
            },
        }
    }

    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities `server/discover` advertises.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }

    /// Whether `method` has a handler (or is built in).
    pub fn handles(&self, method: &str) -> bool {
        method == "server/discover" || self.inner.handlers.contains_key(method)
    }

    /// Serves one request: validates `_meta`, verifies an incoming `requestState`, runs
    /// the handler, and checks, gates and seals an `InputRequiredResult`.
    pub async fn handle(&self, request: IncomingRequest) -> Result<Value, RpcError> {
        self.handle_in(request, None).await
    }

    /// Serves one request, on a 2025-11-25 `session` when there is one: then the
    /// handler sees the session's capabilities instead of `_meta`, and an
    /// `InputRequiredResult` (which that era lacks) becomes -32603.
    pub(crate) async fn handle_in(
        &self,
        request: IncomingRequest,
        session: Option<Arc<crate::legacy::LegacySession>>,
    ) -> Result<Value, RpcError> {
        let IncomingRequest {
            id,
            method,
            params,
            auth,
            cancel,
            outbound,
        } = request;
        let handler = self.inner.handlers.get(method.as_str()).cloned();
        if handler.is_none() && (method != "server/discover" || session.is_some()) {
            return Err(RpcError::method_not_found(&method));
        }
        let meta = match &session {
            Some(s) => s.request_meta(params.as_ref()),
            None => RequestMeta::from_params(params.as_ref(), protocol::SUPPORTED_VERSIONS)?,
        };
        let mut params = params.unwrap_or_else(|| Value::Object(Map::new()));
        let may_require_input = INPUT_REQUIRED_METHODS.contains(&method.as_str());
        let principal = auth.as_ref().map(Principal::from_auth);

        if may_require_input {
            if let Some(sealer) = &self.inner.sealer {
                unseal_incoming(sealer, &method, &mut params, principal.as_ref())?;
            }
        }
        // Input requests are checked against the capabilities after the handler has the
        // context: keep a copy only for the methods that can answer input-required.
        let capabilities = may_require_input.then(|| meta.client_capabilities.clone());
        let legacy = session.is_some();
        let ctx =
            RequestContext::on_session(id, method.clone(), meta, auth, cancel, outbound, session);
        // Only a sealing server needs the request again after the handler: to bind the
        // state it seals to the request's target and arguments. Everything else moves.
        let binding = (may_require_input && self.inner.sealer.is_some()).then(|| {
            let (target, arguments) = binding_parts(&method, &params);
            (target.to_owned(), arguments.cloned())
        });
        let mut result = match handler {
            Some(h) => h(ctx, params).await?,
            None => self.discover_value()?,
        };

        let input_required =
            result.get("resultType").and_then(Value::as_str) == Some("input_required");
        if legacy {
            if input_required {
                tracing::error!(method = %method, "a handler answered input_required to a 2025-11-25 session, which cannot receive it; ask with RequestContext::request_client there");
                return Err(RpcError::internal("Internal error"));
            }
            return Ok(crate::legacy::to_legacy_result(result));
        }
        if input_required {
            let Some(capabilities) = &capabilities else {
                tracing::error!(method = %method, "a handler answered input_required on a method that cannot");
                return Err(RpcError::internal("Internal error"));
            };
            self.finish_input_required(
                &method,
                binding.as_ref().map(|(t, a)| (t.as_str(), a.as_ref())),
                principal.as_ref(),
                capabilities,
                &mut result,
            )?;
        } else if let Value::Object(obj) = &mut result {
            obj.entry("resultType").or_insert_with(|| "complete".into());
            if CACHEABLE_METHODS.contains(&method.as_str()) {
                let cache = self.inner.cache;
                obj.entry("ttlMs").or_insert_with(|| cache.ttl_ms.into());
                obj.entry("cacheScope")
                    .or_insert_with(|| cache.scope.into());
            }
        }
        Ok(result)
    }

    /// Answers a 2025-11-25 `initialize`: the new session, and the result to send.
    pub(crate) fn legacy_initialize(
        &self,
        params: Option<&Value>,
    ) -> Result<(Arc<crate::legacy::LegacySession>, Value), RpcError> {
        let session = crate::legacy::LegacySession::open(params)?;
        let result = crate::legacy::session_result(
            &self.inner.info,
            &self.inner.capabilities,
            self.inner.instructions.as_deref(),
        )?;
        Ok((Arc::new(session), result))
    }

    fn discover_value(&self) -> Result<Value, RpcError> {
        let mut result = DiscoverResult::new(
            self.inner.capabilities.clone(),
            protocol::SUPPORTED_VERSIONS
                .iter()
                .map(|v| (*v).to_owned())
                .collect(),
        );
        result.instructions = self.inner.instructions.clone();
        let mut value = serde_json::to_value(result)
            .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
        value["_meta"] = json!({ protocol::META_SERVER_INFO: self.inner.info });
        Ok(value)
    }

    /// Every `InputRequiredResult` has requests or state, asks only for what the client
    /// declared, and carries sealed state when sealing is on.
    fn finish_input_required(
        &self,
        method: &str,
        binding: Option<(&str, Option<&Map<String, Value>>)>,
        principal: Option<&Principal>,
        capabilities: &crate::types::v2026_07_28::ClientCapabilities,
        result: &mut Value,
    ) -> Result<(), RpcError> {
        let requests = result.get("inputRequests").filter(|r| !r.is_null());
        let has_requests = requests
            .and_then(Value::as_object)
            .is_some_and(|r| !r.is_empty());
        let has_state = result.get("requestState").is_some_and(Value::is_string);
        if !has_requests && !has_state {
            tracing::error!(
                method,
                "a handler returned an InputRequiredResult with neither inputRequests nor requestState"
            );
            return Err(RpcError::internal("Internal error"));
        }
        if let Some(requests) = requests {
            let typed = InputRequests::deserialize(requests).map_err(|e| {
                tracing::error!(method, error = %e, "a handler returned malformed inputRequests");
                RpcError::internal("Internal error")
            })?;
            if let Some(missing) = protocol::missing_capabilities(&typed, capabilities) {
                return Err(RpcError::missing_capability(&missing));
            }
        }
        if let (Some(sealer), Some((target, arguments))) = (&self.inner.sealer, binding) {
            if let Some(Value::String(state)) = result.get("requestState") {
                let binding = RequestBinding::new(method, target)
                    .with_arguments(arguments)
                    .with_principal(principal);
                let token = sealer
                    .seal(&binding, state.as_bytes())
                    .map_err(|_| RpcError::internal("Internal error"))?;
                result["requestState"] = Value::String(token);
            }
        }
        Ok(())
    }
}

/// The tool or prompt name (or resource URI) and the arguments a token is bound to.
fn binding_parts<'a>(method: &str, params: &'a Value) -> (&'a str, Option<&'a Map<String, Value>>) {
    let target_key = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    let target = params
        .get(target_key)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arguments = params.get("arguments").and_then(Value::as_object);
    (target, arguments)
}

/// Replaces an incoming sealed `requestState` with the plaintext the handler wrote, or
/// rejects the request with the fixed error.
fn unseal_incoming(
    sealer: &Sealer,
    method: &str,
    params: &mut Value,
    principal: Option<&Principal>,
) -> Result<(), RpcError> {
    let Some(token) = params.get("requestState") else {
        return Ok(());
    };
    let Some(token) = token.as_str() else {
        return Err(RpcError::invalid_request_state());
    };
    let (target, arguments) = binding_parts(method, params);
    let binding = RequestBinding::new(method, target)
        .with_arguments(arguments)
        .with_principal(principal);
    let plain = sealer
        .verify(token, &binding)
        .map_err(|_| RpcError::invalid_request_state())?;
    let plain = String::from_utf8(plain).map_err(|_| RpcError::invalid_request_state())?;
    params["requestState"] = Value::String(plain);
    Ok(())
}

impl ServerBuilder {
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
    pub fn handle<M, F, Fut>(mut self, handler: F) -> Self
    where
        M: ClientRequestMethod,
        F: Fn(RequestContext, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result, RpcError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let erased: Handler = Arc::new(move |ctx, params| {
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                let params: M::Params = serde_json::from_value(params).map_err(|e| {
                    RpcError::invalid_params(format!("Invalid params for {}: {e}", M::METHOD))
                })?;
                let result = handler(ctx, params).await?;
                serde_json::to_value(&result).map_err(|e| {
                    tracing::error!(method = M::METHOD, error = %e, "could not encode a result");
                    RpcError::internal("Internal error")
                })
            })
        });
        self.handlers.insert(<M as Request>::METHOD, erased);
        self
    }

    /// Seals every outgoing `requestState` and verifies every incoming one under
    /// `security` (see [`crate::seal`]). Without this line, state crosses the wire
    /// exactly as the handler wrote it.
    pub fn seal(mut self, security: RequestStateSecurity) -> Self {
        self.security = Some(security);
        self
    }

    /// Builds the server. Fails when the sealing policy is invalid for this server.
    pub fn build(self) -> crate::Result<Server> {
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
        let capabilities = self
            .capabilities
            .unwrap_or_else(|| derive_capabilities(self.handlers.keys().copied()));
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                capabilities,
                handlers: self.handlers,
                sealer,
                cache: self.cache,
            }),
        })
    }
}

fn derive_capabilities<'a>(methods: impl Iterator<Item = &'a str>) -> ServerCapabilities {
    let mut caps = ServerCapabilities::new();
    for m in methods {
        match m {
            "tools/list" | "tools/call" => {
                caps.tools.get_or_insert_with(Default::default);
            }
            "prompts/list" | "prompts/get" => {
                caps.prompts.get_or_insert_with(Default::default);
            }
            "resources/list" | "resources/read" | "resources/templates/list" => {
                caps.resources.get_or_insert_with(Default::default);
            }
            "completion/complete" => {
                caps.completions.get_or_insert_with(Default::default);
            }
            _ => {}
        }
    }
    caps
}
