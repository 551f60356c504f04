//! The high-level server: tools, prompts and resources as async Rust functions with
//! typed arguments, `requestState` sealed by default, and resolvers.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tern_mcp::mcp::{Elicit, McpServer, ToolError};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ProvisionArgs {
//!     /// The database name.
//!     name: String,
//! }
//!
//! /// Which region should the database live in?
//! #[derive(Clone, Deserialize, JsonSchema)]
//! struct Region {
//!     region: String,
//! }
//!
//! let mcp = McpServer::new("Provisioner", "1.0.0");
//! mcp.tool("provision")
//!     .description("Provision a database. Asks which region to put it in.")
//!     .resolve(|args: ProvisionArgs, region: Elicit<Region>| async move {
//!         match region {
//!             Elicit::Accepted(r) => Ok(format!("Provisioned '{}' in {}.", args.name, r.region)),
//!             _ => Err(ToolError::new("no region, no database")),
//!         }
//!     });
//! let server = mcp.server()?; // a tern_mcp::server::Server, sealed with an ephemeral key
//! # let _ = server;
//! # Ok::<(), tern_mcp::Error>(())
//! ```

mod arguments;
mod context;
mod describe;
mod detach;
pub(crate) mod extension;
pub(crate) mod handoff;
pub(crate) mod listen;
pub(crate) mod paging;
mod prompt;
mod registry;
mod resolve;
mod resource;
pub(crate) mod routes;
mod schema;
pub(crate) mod setting;
mod single_use;
mod tool;

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

pub use context::ToolContext;
pub use extension::{ListenFeed, McpExtension, ToolReply};
pub use handoff::ToolHandoff;
pub(crate) use handoff::{Detaching, ToolBody};
pub use prompt::{IntoPromptOutcome, PromptBuilder};
pub use resolve::{
    Elicit, ElicitUrl, ListRoots, Resolve, ResolveSet, ResolverHandler, Sample, SamplePrompt,
    UrlPrompt, form_content,
};
pub use resource::{
    IntoReadOutcome, IntoReadResult, ResourceBody, ResourceBuilder, TemplateBuilder,
};
pub use setting::ToolSetting;
pub use tool::{IntoCallToolResult, IntoToolOutcome, NoArgs, Structured, ToolBuilder, ToolError};

use crate::seal::RequestStateSecurity;
use crate::server::Server;
use crate::server::replay::ReplayStore;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{Prompt, Resource, ResourceTemplate, Tool};
use registry::{Registry, read};

/// The extensions an `McpServer` serves, shared by its routes.
pub(crate) type Extensions = Arc<[Arc<dyn McpExtension>]>;

/// Completes an argument value: what the user typed so far -> candidates.
pub(crate) type Completer = Arc<dyn Fn(String) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

pub(crate) fn completer<F, Fut>(f: F) -> Completer
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |s| Box::pin(f(s)))
}

struct Config {
    instructions: Option<String>,
    security: Option<RequestStateSecurity>,
    replay: Option<Arc<dyn ReplayStore>>,
    page_size: usize,
    ttl_ms: u64,
    public: bool,
    session_input: Option<crate::server::SessionInput>,
    extensions: Vec<Arc<dyn McpExtension>>,
    layers: Vec<Arc<dyn crate::server::middleware::Middleware>>,
    limits: crate::server::ServerLimits,
}

struct Inner {
    name: String,
    version: String,
    config: Mutex<Option<Config>>,
    registry: RwLock<Registry>,
    /// List changes and resource updates, shared with the server it builds.
    events: crate::server::events::Events,
    built: OnceLock<Server>,
    /// Where single-use tools record redemptions, and for how long: set when the
    /// server is built.
    single_use: OnceLock<single_use::SingleUse>,
}

/// An [`McpServer`] held without keeping it alive: what an extension it serves keeps
/// of it (the tasks extension, to run a restartable tool again).
#[derive(Clone, Default)]
pub(crate) struct WeakMcpServer(std::sync::Weak<Inner>);

impl WeakMcpServer {
    /// The server, while it lives.
    pub(crate) fn upgrade(&self) -> Option<McpServer> {
        self.0.upgrade().map(|inner| McpServer { inner })
    }
}

/// A high-level MCP server. Cheap to clone; tools, prompts and resources may be added
/// while it serves (subscribers are told their list changed).
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = read(&self.inner.registry);
        f.debug_struct("McpServer")
            .field("name", &self.inner.name)
            .field(
                "tools",
                &r.tools
                    .iter()
                    .map(|t| t.tool.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "prompts",
                &r.prompts
                    .iter()
                    .map(|p| p.prompt.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server called `name` at `version`. `requestState` is sealed under a key
    /// generated for this process unless [`seal`](Self::seal)
    /// says otherwise.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                name: name.into(),
                version: version.into(),
                config: Mutex::new(Some(Config {
                    instructions: None,
                    security: None,
                    replay: None,
                    page_size: 100,
                    ttl_ms: 0,
                    public: false,
                    session_input: None,
                    extensions: Vec::new(),
                    layers: Vec::new(),
                    limits: crate::server::ServerLimits::default(),
                })),
                registry: RwLock::default(),
                events: Default::default(),
                built: OnceLock::new(),
                single_use: OnceLock::new(),
            }),
        }
    }

    fn configure(self, f: impl FnOnce(&mut Config)) -> Self {
        if let Some(config) = crate::util::lock(&self.inner.config).as_mut() {
            f(config);
        } else {
            tracing::warn!(
                "McpServer configured after server() was called: the change has no effect"
            );
        }
        self
    }

    /// Instructions for the model, advertised by `server/discover`.
    pub fn instructions(self, instructions: impl Into<String>) -> Self {
        let instructions = instructions.into();
        self.configure(|c| c.instructions = Some(instructions))
    }

    /// How `requestState` is sealed: shared `keys` for several instances or restarts, a
    /// custom codec, a TTL, an audience, a principal hook. The default is
    /// [`RequestStateSecurity::ephemeral`].
    pub fn seal(self, security: RequestStateSecurity) -> Self {
        self.configure(|c| c.security = Some(security))
    }

    /// Where [`single_use`](ToolBuilder::single_use) tools record redemptions (default:
    /// a [`MemoryReplayStore`](crate::server::replay::MemoryReplayStore) of this
    /// process). Instances that share `requestState` keys share one store, such as
    /// [`RedisReplayStore`](crate::server::replay) (feature `redis`), or a token
    /// redeemed on one could be redeemed again on another.
    pub fn replay_store(self, store: Arc<dyn ReplayStore>) -> Self {
        self.configure(|c| c.replay = Some(store))
    }

    /// Serves tools, prompts and templates that return `InputRequiredResult` (the
    /// direct form) to 2025-11-25 sessions too, fulfilling each round over the session
    /// (see [`ServerBuilder::fulfil_input_on_sessions`](crate::server::ServerBuilder::fulfil_input_on_sessions)).
    /// Off by default; resolver tools serve both eras without it.
    pub fn fulfil_input_on_sessions(self, policy: crate::server::SessionInput) -> Self {
        self.configure(|c| c.session_input = Some(policy))
    }

    /// Serves `extension` (see [`McpExtension`]): its methods are
    /// routed, it is declared under `capabilities.extensions`, and it takes the calls
    /// of tools registered with a setting of its own
    /// ([`ToolBuilder::extension`]) and its part of `subscriptions/listen` streams. For
    /// the tasks extension, a [`Tasks`](crate::tasks::Tasks).
    pub fn extension(self, extension: impl McpExtension) -> Self {
        extension.register(&self);
        let extension: Arc<dyn McpExtension> = Arc::new(extension);
        self.configure(|c| c.extensions.push(extension))
    }

    /// Adds a layer around dispatch: it sees every request (each round of a multi
    /// round-trip call with its round number) and how it ended, and may answer in the
    /// handler's place (see [`middleware`](crate::server::middleware)). Layers run in
    /// the order they are added.
    pub fn layer(self, layer: impl crate::server::middleware::Middleware) -> Self {
        let layer: Arc<dyn crate::server::middleware::Middleware> = Arc::new(layer);
        self.configure(|c| c.layers.push(layer))
    }

    /// What the server allows its clients (default
    /// [`ServerLimits::default`](crate::server::ServerLimits::default)).
    pub fn limits(self, limits: crate::server::ServerLimits) -> Self {
        self.configure(|c| c.limits = limits)
    }

    /// How many items a list result holds before it pages (default 100).
    pub fn page_size(self, page_size: usize) -> Self {
        self.configure(|c| c.page_size = page_size.max(1))
    }

    /// The caching fields of list results and `resources/read`: how long a client may
    /// reuse them, and whether a shared cache may (`public`) or only this client
    /// (`private`, the default). The default TTL is 0: do not cache.
    pub fn cache(self, ttl_ms: u64, public: bool) -> Self {
        self.configure(|c| {
            c.ttl_ms = ttl_ms;
            c.public = public;
        })
    }

    /// Starts registering a tool named `name`.
    pub fn tool(&self, name: impl Into<String>) -> ToolBuilder<'_> {
        ToolBuilder {
            server: self,
            tool: Tool::new(Default::default(), name),
            single_use: false,
            input_schema: None,
            scopes: Vec::new(),
            settings: Vec::new(),
            gates: Vec::new(),
        }
    }

    /// Starts registering a prompt named `name`.
    pub fn prompt(&self, name: impl Into<String>) -> PromptBuilder<'_> {
        PromptBuilder {
            server: self,
            prompt: Prompt::new(name),
            completers: Vec::new(),
            scopes: Vec::new(),
        }
    }

    /// Starts registering a static resource at `uri`.
    pub fn resource(&self, uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder<'_> {
        ResourceBuilder {
            server: self,
            resource: Resource::new(name, uri),
            scopes: Vec::new(),
            gates: Vec::new(),
        }
    }

    /// Starts registering a resource template such as `notes://{project}/{id}`.
    pub fn resource_template(
        &self,
        uri_template: impl Into<String>,
        name: impl Into<String>,
    ) -> TemplateBuilder<'_> {
        TemplateBuilder {
            server: self,
            template: ResourceTemplate::new(name, uri_template),
            completers: Vec::new(),
        }
    }

    /// The low-level [`Server`] that serves this one on any transport. Built once; the
    /// configuration is fixed from then on (registrations are not).
    pub fn server(&self) -> Result<Server, crate::ConfigError> {
        if let Some(s) = self.inner.built.get() {
            return Ok(s.clone());
        }
        let config = crate::util::lock(&self.inner.config).take();
        let Some(config) = config else {
            return self.inner.built.get().cloned().ok_or_else(|| {
                crate::ConfigError::Invalid("McpServer::server() failed earlier".into())
            });
        };
        let server = routes::build_server(self, config)?;
        Ok(self.inner.built.get_or_init(|| server).clone())
    }

    /// Serves on a message transport (in-memory, stdio) until the peer goes away.
    pub async fn serve<T: crate::transport::MessageTransport>(
        &self,
        transport: T,
    ) -> crate::Result<()> {
        self.server()?.serve(transport).await
    }
}
