//! The client: typed calls, and the multi round-trip loop.
//!
//! [`Client::call_tool`], [`Client::get_prompt`] and [`Client::read_resource`] run the
//! loop for you: every `inputRequests` entry goes to the callback registered for its
//! method (the requests of one round concurrently), and the same request is sent again
//! with the answers and the `requestState` echoed, until the result is complete. For a
//! manual loop, [`Client::request`] sends one round and returns the union.
//!
//! ```
//! # async fn demo(client: tern_mcp::client::Client) -> tern_mcp::Result<()> {
//! use tern_mcp::types::v2026_07_28::{method, CallToolRequestParams, Outcome};
//!
//! // Automatic: rounds are invisible.
//! let result = client.call_tool("provision", serde_json::json!({"name": "orders"})).await?;
//!
//! // Manual: one round at a time.
//! let mut params = CallToolRequestParams::new("provision");
//! loop {
//!     match client.request::<method::CallTool>(params.clone()).await? {
//!         Outcome::Complete(done) => break,
//!         Outcome::InputRequired(asked) => {
//!             params.input_responses = Some(client.fulfil(asked.input_requests.as_ref()).await?);
//!             params.request_state = asked.request_state;
//!         }
//!     }
//! }
//! # Ok(()) }
//! ```

mod builder;
mod cache;
mod callbacks;
mod calls;
mod connection;
mod dialect;
mod discovery;
mod extension;
mod input_loop;
mod listen;
mod lists;
mod outputs;
mod pending;
mod retry;
mod round_event;
mod session;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

pub use builder::{ClientBuilder, ClientLimits, IntoClientTransport};
pub use cache::ResponseCache;
pub use callbacks::InputContext;
pub(crate) use connection::Connection;
pub use discovery::EraMode;
pub(crate) use extension::read_followed;
pub use extension::{ClientExtension, Deferred};
pub use input_loop::InputLoopMethod;
pub use listen::{Notice, Subscription};
pub use lists::ListMethod;
#[cfg(feature = "skills")]
pub(crate) use lists::sealed;
pub use pending::{PendingCall, Step};
pub use round_event::RoundEvent;

use crate::transport::{CallError, ClientTransport, EncodedRequest};
use crate::types::rpc::ClientRequestMethod;
use crate::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult, InputRequests,
    InputResponses, ReadResourceRequestParams, ReadResourceResult, ToolArguments, method,
};
use crate::{Era, Error};
use callbacks::Callbacks;

/// The default cap on input-required rounds per call.
pub(crate) const DEFAULT_MAX_ROUNDS: usize = 10;

/// An MCP client. Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Arc<dyn ClientTransport>,
    info: Value,
    capabilities: Value,
    callbacks: Callbacks,
    /// The bounds of each call's input rounds ([`ClientLimits`]).
    rounds: crate::protocol::rounds::RoundLimits,
    restart_on_rejected_state: bool,
    log_level: Option<crate::types::v2026_07_28::LoggingLevel>,
    on_log: Option<LogCallback>,
    backoff: Backoff,
    /// How it speaks to its server (the era, and what that changes on the wire).
    dialect: dialect::Dialect,
    /// The name the server gave while the client negotiated its era.
    server_name: Option<Arc<str>>,
    /// Where reusable results are kept, if anywhere.
    cache: Option<ResponseCache>,
    /// This client's place in the cache when its transport names no identity.
    own_partition: cache::Partition,
    /// The output schemas of the tools it listed.
    outputs: outputs::OutputSchemas,
    /// The extensions it speaks ([`ClientBuilder::extension`]).
    extensions: Vec<Arc<dyn ClientExtension>>,
    /// The `_meta` it last relayed for a gateway's caller ([`Client::relayed_meta`]).
    #[cfg(feature = "http-client")]
    relayed: std::sync::Mutex<Option<RelayedMeta>>,
}

/// The `_meta` a client relayed last, kept while the next relay's capabilities and log
/// level are the same: a gateway's caller sends the same ones on every request, and
/// rendering them costs the relay a tree of them and its text.
#[cfg(feature = "http-client")]
struct RelayedMeta {
    capabilities: crate::types::v2026_07_28::ClientCapabilities,
    log_level: Option<crate::types::v2026_07_28::LoggingLevel>,
    text: Arc<str>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("info", &self.inner.info)
            .field("capabilities", &self.inner.capabilities)
            .field("era", &self.inner.dialect.era())
            .finish_non_exhaustive()
    }
}

/// Where log entries go (see [`ClientBuilder::on_log`]).
pub(crate) type LogCallback =
    Arc<dyn Fn(crate::types::v2026_07_28::LoggingMessageNotificationParams) + Send + Sync>;

/// How long to wait before retrying a round that carried state and no requests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    pub(crate) first: Duration,
    pub(crate) max: Duration,
}

impl Client {
    /// A builder for a client called `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    /// The protocol version in use: `"2026-07-28"`, or `"2025-11-25"` on a session
    /// with a server of that era.
    pub fn protocol_version(&self) -> &str {
        self.inner.dialect.era().protocol_version()
    }

    /// The server's name, as it gave it while the client negotiated the era (the
    /// `serverInfo` of `server/discover` or `initialize`); `None` when the client did
    /// not ask ([`EraMode::Stateless`]).
    pub fn server_name(&self) -> Option<&str> {
        self.inner.server_name.as_deref()
    }

    /// The protocol era in use.
    pub fn era(&self) -> Era {
        self.inner.dialect.era()
    }

    /// The cap on input-required rounds per call.
    pub(crate) fn input_required_max_rounds(&self) -> usize {
        self.inner.rounds.max_rounds
    }

    /// Sends one request of method `M` and returns its result as the server sent it.
    ///
    /// For `tools/call`, `prompts/get` and `resources/read` this is the manual form: the
    /// result is an [`Outcome`](crate::types::v2026_07_28::Outcome), and the caller answers
    /// `InputRequiredResult`s itself (put the answers in `input_responses` and echo
    /// `request_state`).
    pub async fn request<M: ClientRequestMethod>(
        &self,
        params: M::Params,
    ) -> crate::Result<M::Result> {
        self.request_with::<M>(params, None).await
    }

    async fn request_with<M: ClientRequestMethod>(
        &self,
        params: M::Params,
        notifications: Option<mpsc::UnboundedSender<Value>>,
    ) -> crate::Result<M::Result> {
        self.send::<M>(&params, None, notifications.as_ref()).await
    }

    /// Sends one request of method `M`: `params` written straight from the typed value
    /// (`_meta` added), the result read straight into its type. `target` is what the
    /// params name ([`Request::TARGET`](crate::types::rpc::Request::TARGET)), when the
    /// caller has it at hand; else it is read from the written params.
    pub(crate) async fn send<M: ClientRequestMethod>(
        &self,
        params: &M::Params,
        target: Option<&str>,
        notifications: Option<&mpsc::UnboundedSender<Value>>,
    ) -> crate::Result<M::Result> {
        let result = self
            .send_raw::<M>(params, None, target, notifications)
            .await?;
        wire::decode::<M>(self, &result)
    }

    /// [`send`](Self::send), the result left as the server wrote it; `state`, when
    /// given, is the `requestState` a retry echoes, for params that carry none.
    pub(crate) async fn send_raw<M: ClientRequestMethod>(
        &self,
        params: &M::Params,
        state: Option<&str>,
        target: Option<&str>,
        notifications: Option<&mpsc::UnboundedSender<Value>>,
    ) -> crate::Result<crate::jsonrpc::RawResult> {
        let stateless = state.is_none() && M::request_state(params).is_none();
        let cached = match &self.inner.cache {
            Some(cache) if M::CACHEABLE && stateless => {
                let key = serde_json::to_string(params).map_err(Error::Encode)?;
                let partition = self.cache_partition();
                if let Some(hit) = cache.get(&partition, M::METHOD, &key) {
                    tracing::debug!(method = M::METHOD, "served from the response cache");
                    return Ok(hit);
                }
                Some((cache, partition, key))
            }
            _ => None,
        };
        let added = wire::Added {
            state,
            ..wire::Added::default()
        };
        let result = self
            .send_uncached::<M>(params, target, notifications, added)
            .await?;
        if let Some((cache, partition, key)) = cached {
            // What the request names (a resource's URI): its updates drop the entry.
            cache.put(&partition, M::METHOD, &key, M::target(params), &result);
        }
        Ok(result)
    }

    /// Where this client's answers sit in its response cache, now (the credential in
    /// use may have changed since the last request).
    fn cache_partition(&self) -> cache::Partition {
        match self
            .inner
            .transport
            .http_hooks()
            .and_then(|http| http.cache_identity())
        {
            Some(identity) => cache::Partition::of(identity),
            None => self.inner.own_partition.clone(),
        }
    }

    /// Drops from the response cache what a notification from the server makes stale
    /// (most make nothing stale: those cost a match).
    pub(crate) fn heard(&self, notice: &Notice) {
        if let (Some(cache), Some(stale)) = (&self.inner.cache, cache::Stale::of(notice)) {
            cache.drop_stale(&self.cache_partition(), &stale);
        }
    }

    /// Drops this client's server's answers from the response cache (its listen stream
    /// dropped: changes may have gone unheard).
    pub(crate) fn forget_cached(&self) {
        if let Some(cache) = &self.inner.cache {
            cache.forget_server(&self.cache_partition());
        }
    }

    /// Sends one request of method `M` on behalf of another client (a gateway's):
    /// `meta` (from [`relayed_meta`](Self::relayed_meta)) in place of this client's own
    /// `_meta` members, never from the response cache, each notification of its
    /// stream handed to `notifications`; the result left as the server wrote it (see
    /// [`decode_relayed`](Self::decode_relayed)).
    #[cfg(feature = "http-client")]
    pub(crate) async fn relay<M: ClientRequestMethod>(
        &self,
        params: &M::Params,
        meta: &str,
        notifications: Option<&mpsc::UnboundedSender<Value>>,
    ) -> crate::Result<crate::jsonrpc::RawResult> {
        let added = wire::Added {
            meta: Some(meta),
            ..wire::Added::default()
        };
        self.send_uncached::<M>(params, None, notifications, added)
            .await
    }

    /// A relayed result of `M`, read into its type as [`request`](Self::request) reads one.
    #[cfg(feature = "http-client")]
    pub(crate) fn decode_relayed<M: ClientRequestMethod>(
        &self,
        result: &crate::jsonrpc::RawResult,
    ) -> crate::Result<M::Result> {
        wire::decode::<M>(self, result)
    }

    /// Whether it speaks to its server on a 2025-11-25 session.
    #[cfg(feature = "http-client")]
    pub(crate) fn holds_session(&self) -> bool {
        self.inner.dialect.holds_session
    }

    /// The name and version this client gave itself.
    #[cfg(feature = "http-client")]
    pub(crate) fn info(&self) -> (String, String) {
        let member = |key: &str| self.inner.info[key].as_str().unwrap_or_default().to_owned();
        (member("name"), member("version"))
    }

    /// The `_meta` members a relayed request carries: this client's info, and the
    /// capabilities and log level of the client it relays for.
    #[cfg(feature = "http-client")]
    pub(crate) fn relayed_meta(
        &self,
        capabilities: &crate::types::v2026_07_28::ClientCapabilities,
        log_level: Option<crate::types::v2026_07_28::LoggingLevel>,
    ) -> Arc<str> {
        let mut kept = crate::util::lock(&self.inner.relayed);
        if let Some(kept) = kept
            .as_ref()
            .filter(|k| k.log_level == log_level && k.capabilities == *capabilities)
        {
            return Arc::clone(&kept.text);
        }
        let value = serde_json::to_value(capabilities).unwrap_or_default();
        let text: Arc<str> = wire::static_meta(&value, &self.inner.info, log_level).into();
        *kept = Some(RelayedMeta {
            capabilities: capabilities.clone(),
            log_level,
            text: Arc::clone(&text),
        });
        text
    }

    async fn send_uncached<M: ClientRequestMethod>(
        &self,
        params: &M::Params,
        target: Option<&str>,
        notifications: Option<&mpsc::UnboundedSender<Value>>,
        added: wire::Added<'_>,
    ) -> crate::Result<crate::jsonrpc::RawResult> {
        let transport = &self.inner.transport;
        let id = transport.next_id();
        let progress_token = notifications.map(|_| id_string(&id));
        let added = wire::Added {
            progress_token: progress_token.as_deref(),
            ..added
        };
        let params = wire::encode_params_as(self, params, added)?;
        let found;
        let target = match (target, M::TARGET) {
            (Some(t), _) => Some(t),
            (None, Some(field)) => {
                found = wire::target_in(&params.text, field);
                found.as_deref()
            }
            (None, None) => None,
        };
        let request = EncodedRequest {
            id: &id,
            method: M::METHOD,
            params: &params.text,
            target,
            protocol_version: params.protocol_version.as_deref(),
            notifications,
        };
        retry::send(
            transport.as_ref(),
            self.inner.dialect.holds_session,
            request,
        )
        .await
        .map_err(|e| {
            let rejected =
                |r: &crate::jsonrpc::RpcError| M::MAY_REQUIRE_INPUT && r.is_invalid_request_state();
            match e {
                CallError::Rpc(e) if rejected(&e) => Error::StateRejected(Box::new(e)),
                CallError::Rpc(e) => Error::Rpc(Box::new(e)),
                CallError::Transport(t) => match t.rpc_error().filter(|r| rejected(r)) {
                    Some(r) => Error::StateRejected(Box::new(r.clone())),
                    None => Error::Transport(t),
                },
            }
        })
    }

    /// Calls a tool and runs the input-required loop to its complete result. A call the
    /// server makes a task is followed to its end (polled, its input requests answered
    /// by the same callbacks) and cancelled if this future is dropped first.
    ///
    /// With the `schema-validation` feature (a default), a result that is not an error
    /// is checked against the `outputSchema` this client last listed for the tool
    /// ([`ProtocolError::InvalidStructuredContent`](crate::ProtocolError::InvalidStructuredContent)).
    pub async fn call_tool(
        &self,
        name: impl Into<String>,
        arguments: impl Serialize,
    ) -> crate::Result<CallToolResult> {
        self.call_tool_observed(tool_params(name, arguments)?, None)
            .await
    }

    /// [`call_tool`](Self::call_tool), handing the notifications of every round's stream
    /// (progress, log entries) to `notices` as they arrive, in order across the rounds.
    pub async fn call_tool_with_notices(
        &self,
        name: impl Into<String>,
        arguments: impl Serialize,
        notices: mpsc::UnboundedSender<Notice>,
    ) -> crate::Result<CallToolResult> {
        self.call_tool_observed(tool_params(name, arguments)?, Some(notices))
            .await
    }

    /// A tool call through the loop, its notices to `notices`, its result held to the
    /// tool's listed `outputSchema`.
    async fn call_tool_observed(
        &self,
        params: CallToolRequestParams,
        notices: Option<mpsc::UnboundedSender<Notice>>,
    ) -> crate::Result<CallToolResult> {
        // The name is kept only when there is a schema to hold the result to.
        let name = outputs::lists_output_schemas(self).then(|| params.name.clone());
        let result = self
            .run_input_loop_with_notices::<method::CallTool>(params, notices)
            .await?;
        if let Some(name) = name {
            outputs::check_output(self, &name, &result)?;
        }
        Ok(result)
    }

    /// Gets a prompt and runs the input-required loop to its complete result.
    pub async fn get_prompt(
        &self,
        name: impl Into<String>,
        arguments: Option<Map<String, Value>>,
    ) -> crate::Result<GetPromptResult> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments.map(|a| {
            a.into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => (k, s),
                    other => (k, other.to_string()),
                })
                .collect()
        });
        self.run_input_loop::<method::GetPrompt>(params).await
    }

    /// Reads a resource and runs the input-required loop to its complete result.
    pub async fn read_resource(&self, uri: impl Into<String>) -> crate::Result<ReadResourceResult> {
        self.run_input_loop::<method::ReadResource>(ReadResourceRequestParams::new(uri))
            .await
    }

    /// Answers every request in `requests` with the registered callbacks, concurrently;
    /// the first failure aborts the rest. For manual loops.
    pub async fn fulfil(&self, requests: Option<&InputRequests>) -> crate::Result<InputResponses> {
        match requests {
            None => Ok(InputResponses::new()),
            Some(r) => self.inner.callbacks.fulfil(r, &self.inner.rounds).await,
        }
    }

    /// Answers `requests` with the callbacks, within the client's bounds, each told
    /// `asking` (and this client's server).
    pub(crate) async fn answer(
        &self,
        requests: InputRequests,
        mut asking: InputContext,
    ) -> crate::Result<InputResponses> {
        asking.server = self.inner.server_name.clone();
        let limits = &self.inner.rounds;
        self.inner
            .callbacks
            .answer_all(requests, asking, limits)
            .await
    }
}

/// `tools/call` params for `name` with `arguments` (a JSON object, or nothing).
pub(crate) fn tool_params(
    name: impl Into<String>,
    arguments: impl Serialize,
) -> crate::Result<CallToolRequestParams> {
    let mut params = CallToolRequestParams::new(name);
    // Written once, as the text that goes on the wire: no tree in between.
    params.arguments = match ToolArguments::from_value(&arguments) {
        Ok(object) => Some(object),
        // Not an object: written again to say what it is (`null` is no arguments).
        Err(_) => match serde_json::value::to_raw_value(&arguments)
            .map_err(Error::Encode)?
            .get()
        {
            "null" => None,
            other => {
                return Err(Error::Encode(serde::ser::Error::custom(format!(
                    "tool arguments must be an object, not {other}"
                ))));
            }
        },
    };
    Ok(params)
}

fn id_string(id: &crate::types::v2026_07_28::RequestId) -> String {
    match id {
        crate::types::v2026_07_28::RequestId::Integer(i) => i.to_string(),
        crate::types::v2026_07_28::RequestId::String(s) => s.clone(),
    }
}

/// Decodes a result for `M`. A result without `resultType` comes from a server of an
/// earlier version and counts as complete; for a method that cannot answer
/// input-required, any other `resultType` is an error.
fn decode_result<M: ClientRequestMethod>(mut value: Value) -> crate::Result<M::Result> {
    check_result_type::<M>(&value)?;
    complete_when_unsaid(&mut value);
    serde_json::from_value(value).map_err(|e| decode_error::<M>(None, e))
}

/// Says `complete` in a result that says no `resultType` (a server of an earlier
/// version's, which means it so).
fn complete_when_unsaid(value: &mut Value) {
    if let Value::Object(obj) = value {
        if obj.get("resultType").and_then(Value::as_str).is_none() {
            obj.insert("resultType".into(), "complete".into());
        }
    }
}

/// Refuses a result whose `resultType` `M` cannot have: anything but `complete`, or
/// `input_required` for a method that may answer it. A result without it counts as
/// complete.
pub(crate) fn check_result_type<M: ClientRequestMethod>(value: &Value) -> crate::Result<()> {
    match value.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => Ok(()),
        Some("input_required") if M::MAY_REQUIRE_INPUT => Ok(()),
        Some(other) => Err(Error::Protocol(crate::ProtocolError::UnknownResultType(
            other.to_owned(),
        ))),
    }
}

/// The error for a result of `M` that does not decode, given the `resultType` the
/// result itself carries (read from it, not from the decoder's message): one the
/// protocol does not define is named as such.
fn decode_error<M: ClientRequestMethod>(result_type: Option<&str>, e: serde_json::Error) -> Error {
    match result_type {
        Some(other) if other != "complete" && other != "input_required" => {
            Error::Protocol(crate::ProtocolError::UnknownResultType(other.to_owned()))
        }
        _ => Error::Protocol(crate::ProtocolError::Decode {
            method: M::METHOD,
            source: e,
        }),
    }
}

/// The `resultType` a result's text carries, when it is a string.
fn result_type_in(text: &str) -> Option<String> {
    let [member] = crate::types::rpc::members(text, ["resultType"]);
    serde_json::from_str(member?).ok()
}
