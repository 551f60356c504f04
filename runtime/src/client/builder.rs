//! Building a client: its name, the callbacks that answer input requests (and so the
//! capabilities it declares), the cap on rounds, and how the protocol era is settled.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::callbacks::{self, Callbacks};
use super::dialect::Dialect;
use super::discovery::{self, DEFAULT_DISCOVERY_TIMEOUT, EraMode};
use super::{
    Backoff, Client, ClientExtension, Connection, DEFAULT_MAX_ROUNDS, Inner, InputContext,
};
use crate::protocol::rounds::RoundLimits;
use crate::transport::{ClientTransport, MessageTransport};
use crate::types::v2026_07_28::{
    ClientCapabilities, ClientCapabilitiesElicitation, ClientCapabilitiesSampling,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsRequestParams, ListRootsResult,
};

/// What a client allows the servers it calls: plain data, given to
/// [`ClientBuilder::limits`]. Start from [`Default`] and change what you need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientLimits {
    /// Input-required rounds per call (default 10): a server that keeps answering
    /// input-required beyond it makes the call fail with
    /// [`InputError::RoundsExceeded`](crate::InputError::RoundsExceeded).
    pub max_rounds: usize,
    /// Input requests one round may ask (default 64): more fail the call with
    /// [`InputError::TooManyRequests`](crate::InputError::TooManyRequests) before any
    /// callback runs.
    pub max_input_requests: usize,
    /// A round's callbacks run at most this many at once (default 8; at least 1).
    pub input_concurrency: usize,
    /// How long [`EraMode::Auto`] waits for the probe's answer before taking the server
    /// for a 2025-11-25 one (default 10 s).
    pub discovery_timeout: Duration,
}

impl ClientLimits {
    /// The bounds of a call's input rounds: no deadline (each request has its own).
    pub(crate) fn rounds(&self) -> RoundLimits {
        RoundLimits {
            max_rounds: self.max_rounds,
            max_questions: self.max_input_requests,
            deadline: None,
            concurrency: self.input_concurrency.max(1),
        }
    }
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_input_requests: 64,
            input_concurrency: 8,
            discovery_timeout: DEFAULT_DISCOVERY_TIMEOUT,
        }
    }
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    info: Implementation,
    callbacks: Callbacks,
    limits: ClientLimits,
    restart_on_rejected_state: bool,
    elicitation_url: bool,
    sampling_tools: bool,
    extensions: Vec<Arc<dyn ClientExtension>>,
    log_level: Option<crate::types::v2026_07_28::LoggingLevel>,
    on_log: Option<super::LogCallback>,
    declared: Option<ClientCapabilities>,
    era_mode: EraMode,
    cache: Option<super::ResponseCache>,
}

impl ClientBuilder {
    /// A builder for a client called `name` at `version` ([`Client::builder`]).
    pub(super) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            callbacks: Callbacks::default(),
            limits: ClientLimits::default(),
            restart_on_rejected_state: true,
            elicitation_url: false,
            sampling_tools: false,
            extensions: Vec::new(),
            log_level: None,
            on_log: None,
            declared: None,
            era_mode: EraMode::Auto,
            cache: Some(super::ResponseCache::default()),
        }
    }
}

impl ClientBuilder {
    /// Answers elicitation requests (`elicitation/create`), in input requests and, on a
    /// 2025-11-25 session, as server-to-client requests. Declares the `elicitation`
    /// capability (form mode; see [`elicitation_url`](Self::elicitation_url)).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(InputContext, ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ElicitResult, crate::jsonrpc::RpcError>>
            + Send
            + 'static,
    {
        self.callbacks.elicitation = Some(callbacks::erase(f));
        self
    }

    /// Declares support for URL-mode elicitation too.
    pub fn elicitation_url(mut self, yes: bool) -> Self {
        self.elicitation_url = yes;
        self
    }

    /// Answers sampling requests (`sampling/createMessage`). Declares `sampling`.
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(InputContext, CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CreateMessageResult, crate::jsonrpc::RpcError>>
            + Send
            + 'static,
    {
        self.callbacks.sampling = Some(callbacks::erase(f));
        self
    }

    /// Declares that the sampling callback handles requests that offer tools.
    pub fn sampling_tools(mut self, yes: bool) -> Self {
        self.sampling_tools = yes;
        self
    }

    /// Answers roots requests (`roots/list`). Declares `roots`.
    pub fn on_list_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(InputContext, Option<ListRootsRequestParams>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ListRootsResult, crate::jsonrpc::RpcError>>
            + Send
            + 'static,
    {
        self.callbacks.roots = Some(callbacks::erase(f));
        self
    }

    /// What the client allows a server (default [`ClientLimits::default`]).
    pub fn limits(mut self, limits: ClientLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether the automatic loop starts a call over, once, when a retry's
    /// `requestState` is refused (-32602 "Invalid or expired requestState": most often a
    /// server restarted between rounds, or another instance with a key of its own): a
    /// fresh first round, the answers discarded, the callbacks asked again. Default yes.
    /// Without it, or the second time, the call fails with [`Error::StateRejected`](crate::Error::StateRejected).
    pub fn restart_on_rejected_state(mut self, yes: bool) -> Self {
        self.restart_on_rejected_state = yes;
        self
    }

    /// The least severe log entries the client wants from servers: sent as every
    /// 2026-07-28 request's `io.modelcontextprotocol/logLevel`, or as `logging/setLevel`
    /// once a 2025-11-25 session is open. Entries reach [`on_log`](Self::on_log).
    pub fn log_level(mut self, level: crate::types::v2026_07_28::LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Hands every log entry (`notifications/message`) a server sends on the streams of
    /// the automatic loop's calls ([`Client::call_tool`], `get_prompt`,
    /// `read_resource`) to `f`, as it arrives.
    pub fn on_log<F>(mut self, f: F) -> Self
    where
        F: Fn(crate::types::v2026_07_28::LoggingMessageNotificationParams) + Send + Sync + 'static,
    {
        self.on_log = Some(Arc::new(f));
        self
    }

    /// Speaks `extension`: it is declared under `capabilities.extensions` of every
    /// request (unless [`capabilities`](Self::capabilities) declares exactly what to),
    /// and a result of its type is handed to it. Its methods are called with
    /// [`Client::request`]. Declaring an extension twice keeps the last.
    pub fn extension(mut self, extension: impl ClientExtension) -> Self {
        let extension: Arc<dyn ClientExtension> = Arc::new(extension);
        self.extensions.retain(|e| e.id() != extension.id());
        self.extensions.push(extension);
        self
    }

    /// Where the client keeps the results servers say may be reused (`ttlMs`,
    /// `cacheScope`; see [`ResponseCache`](super::ResponseCache)): on by default, a
    /// cache of its own; give several clients one cache to share its `public` entries;
    /// `None` turns caching off.
    pub fn response_cache(mut self, cache: Option<super::ResponseCache>) -> Self {
        self.cache = cache;
        self
    }

    /// Declares exactly these capabilities on every request, instead of deriving them
    /// from the registered callbacks. A client that drives the loop itself (see
    /// [`Client::request`]) declares what it will answer this way.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.declared = Some(capabilities);
        self
    }

    fn capabilities_value(&self) -> Value {
        if let Some(declared) = &self.declared {
            return serde_json::to_value(declared).unwrap_or_else(|_| Value::Object(Map::new()));
        }
        let mut caps = ClientCapabilities::new();
        if self.callbacks.elicitation.is_some() {
            let mut e = ClientCapabilitiesElicitation::new();
            e.form = Some(Map::new());
            if self.elicitation_url {
                e.url = Some(Map::new());
            }
            caps.elicitation = Some(e);
        }
        if self.callbacks.sampling.is_some() {
            let mut s = ClientCapabilitiesSampling::new();
            if self.sampling_tools {
                s.tools = Some(Map::new());
            }
            caps.sampling = Some(s);
        }
        if self.callbacks.roots.is_some() {
            caps.roots = Some(Map::new());
        }
        if !self.extensions.is_empty() {
            let declared = self.extensions.iter();
            caps.extensions = Some(
                declared
                    .map(|e| (e.id().to_owned(), e.settings()))
                    .collect(),
            );
        }
        serde_json::to_value(caps).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// How [`connect`](Self::connect) picks the protocol era (default [`EraMode::Auto`]: probe the server).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.era_mode = mode;
        self
    }

    /// Connects a client over `transport`: a message transport (stdio, one end of
    /// [`memory::pair`](crate::transport::memory::pair)), an
    /// [`HttpClientTransport`](crate::transport::http::client::HttpClientTransport), or
    /// any [`ClientTransport`] in an `Arc`. The era is settled first as [`era`](Self::era)
    /// says: under the default [`EraMode::Auto`] the client probes with
    /// `server/discover` and falls back to a 2025-11-25 session (`initialize`) on any
    /// answer that is not a modern one; [`EraMode::Stateless`] sends nothing before the
    /// first call. [`Client::protocol_version`] tells the outcome.
    pub async fn connect(self, transport: impl IntoClientTransport) -> crate::Result<Client> {
        let transport = transport.into_client_transport();
        let capabilities = self.capabilities_value();
        let info = self.info_value();
        let hello = discovery::Hello {
            info: &info,
            capabilities: &capabilities,
            callbacks: &self.callbacks,
            timeout: self.limits.discovery_timeout,
        };
        let settled = discovery::negotiate(transport.as_ref(), self.era_mode, &hello).await?;
        let era = settled.era;
        let dialect = move |meta| Dialect::of(era, meta);
        let client = self.build_in(transport, dialect, settled.server_name.map(Into::into));
        // A server that declared no logging has no level to set (and may not know the
        // method): its tools' log entries are not sent at all.
        if client.inner.dialect.holds_session && settled.session_logging {
            super::listen::set_session_log_level(&client).await?;
        }
        Ok(client)
    }

    fn info_value(&self) -> Value {
        serde_json::to_value(&self.info).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// A stateless client without a word to the server first (the client's unit tests).
    #[cfg(test)]
    pub(super) fn stateless(self, transport: Arc<dyn ClientTransport>) -> Client {
        self.build_in(transport, Dialect::stateless, None)
    }

    fn build_in(
        self,
        transport: Arc<dyn ClientTransport>,
        dialect: impl FnOnce(String) -> Dialect,
        server_name: Option<Arc<str>>,
    ) -> Client {
        let capabilities = self.capabilities_value();
        let info = self.info_value();
        let callbacks = self.callbacks;
        Client {
            inner: Arc::new(Inner {
                transport,
                dialect: dialect(super::wire::static_meta(
                    &capabilities,
                    &info,
                    self.log_level,
                )),
                log_level: self.log_level,
                on_log: self.on_log,
                info,
                capabilities,
                callbacks,
                rounds: self.limits.rounds(),
                restart_on_rejected_state: self.restart_on_rejected_state,
                backoff: Backoff {
                    first: Duration::from_millis(50),
                    max: Duration::from_millis(250),
                },
                server_name,
                cache: self.cache,
                own_partition: super::cache::Partition::own(),
                outputs: Default::default(),
                extensions: self.extensions,
                #[cfg(feature = "http-client")]
                relayed: std::sync::Mutex::new(None),
            }),
        }
    }
}

/// What [`ClientBuilder::connect`] takes: anything that becomes a client transport (a
/// message transport, an HTTP client transport, any [`ClientTransport`] in an `Arc`).
pub trait IntoClientTransport {
    /// The transport, shared.
    fn into_client_transport(self) -> Arc<dyn ClientTransport>;
}

impl<T: MessageTransport> IntoClientTransport for T {
    fn into_client_transport(self) -> Arc<dyn ClientTransport> {
        Arc::new(Connection::new(self))
    }
}

impl<T: ClientTransport> IntoClientTransport for Arc<T> {
    fn into_client_transport(self) -> Arc<dyn ClientTransport> {
        self
    }
}

#[cfg(feature = "http-client")]
impl IntoClientTransport for crate::transport::http::client::HttpClientTransport {
    fn into_client_transport(self) -> Arc<dyn ClientTransport> {
        Arc::new(self)
    }
}
