//! The high-level server: tools, prompts and resources as async Rust functions with
//! typed arguments, `requestState` sealed by default, and resolvers.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tern::server::{Elicit, McpServer, ToolError};
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
//! let server = mcp.server()?; // a tern::server::Server, sealed with an ephemeral key
//! # let _ = server;
//! # Ok::<(), tern::Error>(())
//! ```

mod context;
mod prompt;
mod resolve;
mod resource;
mod schema;
mod tool;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::broadcast;

pub use context::{PromptContext, ResourceContext, ToolContext};
pub use prompt::{IntoPromptOutcome, PromptBuilder};
pub use resolve::{
    Elicit, ElicitUrl, ListRoots, Resolve, ResolveSet, ResolverHandler, Sample, SamplePrompt,
    UrlPrompt, form_content,
};
pub use resource::{Body, IntoReadOutcome, IntoReadResult, ResourceBuilder, TemplateBuilder};
pub use tool::{IntoCallToolResult, IntoToolOutcome, Json, NoArgs, ToolBuilder, ToolError};

use super::{RequestContext, Server};
use crate::jsonrpc::RpcError;
use crate::seal::RequestStateSecurity;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CompleteReference, CompleteRequestParams,
    CompleteResult, CompleteResultCompletion, GetPromptOutcome, GetPromptRequestParams,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, ReadResourceOutcome, ReadResourceRequestParams, Resource,
    ResourceTemplate, ServerCapabilities, ServerCapabilitiesPrompts, ServerCapabilitiesResources,
    ServerCapabilitiesTools, SubscriptionsListenRequestParams, SubscriptionsListenResult, Tool,
    method,
};
use prompt::{PromptCall, PromptEntry};
use resolve::{Node, Resolution};
use resource::{ResourceEntry, TemplateCall, TemplateEntry};
use tool::{ToolCall, ToolEntry, ToolFn};

/// Completes an argument value: what the user typed so far -> candidates.
pub(crate) type Completer = Arc<dyn Fn(String) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

pub(crate) fn completer<F, Fut>(f: F) -> Completer
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |s| Box::pin(f(s)))
}

/// What changed, for `subscriptions/listen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListChange {
    Tools,
    Prompts,
    Resources,
}

#[derive(Default)]
struct Registry {
    tools: Vec<Arc<ToolEntry>>,
    prompts: Vec<Arc<PromptEntry>>,
    resources: Vec<Arc<ResourceEntry>>,
    templates: Vec<Arc<TemplateEntry>>,
}

struct Config {
    instructions: Option<String>,
    security: Option<RequestStateSecurity>,
    page_size: usize,
    ttl_ms: u64,
    public: bool,
}

struct Inner {
    name: String,
    version: String,
    config: Mutex<Option<Config>>,
    registry: RwLock<Registry>,
    changes: broadcast::Sender<ListChange>,
    built: OnceLock<Server>,
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

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpServer {
    /// A server called `name` at `version`. `requestState` is sealed under a key
    /// generated for this process unless [`request_state_security`](Self::request_state_security)
    /// says otherwise.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let (changes, _) = broadcast::channel(64);
        Self {
            inner: Arc::new(Inner {
                name: name.into(),
                version: version.into(),
                config: Mutex::new(Some(Config {
                    instructions: None,
                    security: None,
                    page_size: 100,
                    ttl_ms: 0,
                    public: false,
                })),
                registry: RwLock::default(),
                changes,
                built: OnceLock::new(),
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
    pub fn request_state_security(self, security: RequestStateSecurity) -> Self {
        self.configure(|c| c.security = Some(security))
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
        }
    }

    /// Starts registering a prompt named `name`.
    pub fn prompt(&self, name: impl Into<String>) -> PromptBuilder<'_> {
        PromptBuilder {
            server: self,
            prompt: Prompt::new(name),
            completers: Vec::new(),
        }
    }

    /// Starts registering a static resource at `uri`.
    pub fn resource(&self, uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder<'_> {
        ResourceBuilder {
            server: self,
            resource: Resource::new(name, uri),
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

    /// Removes the tool `name`; subscribers are told the list changed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = {
            let mut r = write(&self.inner.registry);
            let before = r.tools.len();
            r.tools.retain(|t| t.tool.name != name);
            before != r.tools.len()
        };
        if removed {
            let _ = self.inner.changes.send(ListChange::Tools);
        }
        removed
    }

    /// Adds `entry` to the registry list `pick` selects, replacing the entry with the
    /// same `key`, and tells subscribers the list changed.
    fn upsert<E, K: PartialEq>(
        &self,
        entry: E,
        pick: fn(&mut Registry) -> &mut Vec<Arc<E>>,
        key: fn(&E) -> &K,
        change: ListChange,
    ) {
        {
            let mut registry = write(&self.inner.registry);
            let list = pick(&mut registry);
            let entry = Arc::new(entry);
            match list.iter_mut().find(|e| key(e) == key(&entry)) {
                Some(slot) => *slot = entry,
                None => list.push(entry),
            }
        }
        let _ = self.inner.changes.send(change);
    }

    pub(crate) fn add_tool(&self, entry: ToolEntry) {
        self.upsert(entry, |r| &mut r.tools, |e| &e.tool.name, ListChange::Tools);
    }

    pub(crate) fn add_prompt(&self, entry: PromptEntry) {
        self.upsert(
            entry,
            |r| &mut r.prompts,
            |e| &e.prompt.name,
            ListChange::Prompts,
        );
    }

    pub(crate) fn add_resource(&self, entry: ResourceEntry) {
        self.upsert(
            entry,
            |r| &mut r.resources,
            |e| &e.resource.uri,
            ListChange::Resources,
        );
    }

    pub(crate) fn add_template(&self, entry: TemplateEntry) {
        self.upsert(
            entry,
            |r| &mut r.templates,
            |e| &e.template.uri_template,
            ListChange::Resources,
        );
    }

    /// The low-level [`Server`] that serves this one on any transport. Built once; the
    /// configuration is fixed from then on (registrations are not).
    pub fn server(&self) -> crate::Result<Server> {
        if let Some(s) = self.inner.built.get() {
            return Ok(s.clone());
        }
        let config = crate::util::lock(&self.inner.config).take();
        let Some(config) = config else {
            return self
                .inner
                .built
                .get()
                .cloned()
                .ok_or_else(|| crate::Error::Config("McpServer::server() failed earlier".into()));
        };
        let server = self.build_server(config)?;
        Ok(self.inner.built.get_or_init(|| server).clone())
    }

    /// Serves on a message transport (in-memory, stdio) until the peer goes away.
    pub async fn serve<T: crate::transport::MessageTransport>(
        &self,
        transport: T,
    ) -> crate::Result<()> {
        self.server()?.serve(transport).await
    }

    fn build_server(&self, config: Config) -> crate::Result<Server> {
        let mut caps = ServerCapabilities::new();
        let mut tools = ServerCapabilitiesTools::new();
        tools.list_changed = Some(true);
        caps.tools = Some(tools);
        let mut prompts = ServerCapabilitiesPrompts::new();
        prompts.list_changed = Some(true);
        caps.prompts = Some(prompts);
        let mut resources = ServerCapabilitiesResources::new();
        resources.list_changed = Some(true);
        caps.resources = Some(resources);
        caps.completions = Some(Default::default());

        let paging = Paging {
            page_size: config.page_size,
        };
        let mut builder = Server::builder(self.inner.name.clone(), self.inner.version.clone())
            .capabilities(caps)
            .cache(config.ttl_ms, config.public)
            .seal(
                config
                    .security
                    .unwrap_or_else(RequestStateSecurity::ephemeral),
            );
        if let Some(i) = config.instructions {
            builder = builder.instructions(i);
        }
        let me = self.clone();
        let builder = builder
            .handle::<method::ListTools, _, _>(me.lister(
                |r| &r.tools,
                |t| t.tool.clone(),
                |items, next| {
                    let mut result = ListToolsResult::new(items);
                    result.next_cursor = next;
                    result
                },
                paging,
            ))
            .handle::<method::CallTool, _, _>({
                let me = me.clone();
                move |ctx, params: CallToolRequestParams| me.call_tool(ctx, params)
            })
            .handle::<method::ListPrompts, _, _>(me.lister(
                |r| &r.prompts,
                |p| p.prompt.clone(),
                |items, next| {
                    let mut result = ListPromptsResult::new(items);
                    result.next_cursor = next;
                    result
                },
                paging,
            ))
            .handle::<method::GetPrompt, _, _>({
                let me = me.clone();
                move |ctx, params: GetPromptRequestParams| me.get_prompt(ctx, params)
            })
            .handle::<method::ListResources, _, _>(me.lister(
                |r| &r.resources,
                |x| x.resource.clone(),
                |items, next| {
                    let mut result = ListResourcesResult::new(items);
                    result.next_cursor = next;
                    result
                },
                paging,
            ))
            .handle::<method::ListResourceTemplates, _, _>(me.lister(
                |r| &r.templates,
                |x| x.template.clone(),
                |items, next| {
                    let mut result = ListResourceTemplatesResult::new(items);
                    result.next_cursor = next;
                    result
                },
                paging,
            ))
            .handle::<method::ReadResource, _, _>({
                let me = me.clone();
                move |ctx, params: ReadResourceRequestParams| me.read_resource(ctx, params)
            })
            .handle::<method::Complete, _, _>({
                let me = me.clone();
                move |_ctx, params: CompleteRequestParams| me.complete(params)
            })
            .handle::<method::SubscriptionsListen, _, _>({
                let me = me.clone();
                move |ctx, params: SubscriptionsListenRequestParams| me.clone().listen(ctx, params)
            });
        builder.build()
    }

    /// A list handler: one page of the registry's `pick`ed entries, as `make` builds the
    /// result.
    fn lister<E, T, R>(
        &self,
        pick: fn(&Registry) -> &Vec<Arc<E>>,
        item: fn(&E) -> T,
        make: fn(Vec<T>, Option<String>) -> R,
        paging: Paging,
    ) -> impl Fn(RequestContext, PaginatedRequestParams) -> BoxFuture<'static, Result<R, RpcError>>
    + Send
    + Sync
    + 'static
    where
        E: Send + Sync + 'static,
        T: Send + 'static,
        R: serde::Serialize + DeserializeOwned + Send + 'static,
    {
        let me = self.clone();
        move |_ctx, params| {
            let page = paging.page(
                pick(&read(&me.inner.registry)),
                params.cursor.as_deref(),
                item,
            );
            Box::pin(async move {
                let (items, next) = page?;
                Ok(make(items, next))
            })
        }
    }

    fn call_tool(
        &self,
        ctx: RequestContext,
        params: CallToolRequestParams,
    ) -> BoxFuture<'static, Result<CallToolOutcome, RpcError>> {
        let entry = read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == params.name)
            .cloned();
        Box::pin(async move {
            let entry = entry.ok_or_else(|| {
                RpcError::invalid_params(format!("Unknown tool: {}", params.name))
            })?;
            let call: &ToolFn = &entry.call;
            call(ToolCall {
                ctx,
                arguments: params.arguments.unwrap_or_default(),
                input_responses: params.input_responses,
                request_state: params.request_state,
            })
            .await
        })
    }

    fn get_prompt(
        &self,
        ctx: RequestContext,
        params: GetPromptRequestParams,
    ) -> BoxFuture<'static, Result<GetPromptOutcome, RpcError>> {
        let entry = read(&self.inner.registry)
            .prompts
            .iter()
            .find(|p| p.prompt.name == params.name)
            .cloned();
        Box::pin(async move {
            let entry = entry.ok_or_else(|| {
                RpcError::invalid_params(format!("Unknown prompt: {}", params.name))
            })?;
            let arguments = params
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            (entry.get)(PromptCall {
                ctx,
                arguments,
                input_responses: params.input_responses,
                request_state: params.request_state,
            })
            .await
        })
    }

    fn read_resource(
        &self,
        ctx: RequestContext,
        params: ReadResourceRequestParams,
    ) -> BoxFuture<'static, Result<ReadResourceOutcome, RpcError>> {
        enum Target {
            Static(Arc<ResourceEntry>),
            Template(Arc<TemplateEntry>, BTreeMap<String, String>),
            Missing,
        }
        let target = {
            let r = read(&self.inner.registry);
            if let Some(e) = r.resources.iter().find(|x| x.resource.uri == params.uri) {
                Target::Static(Arc::clone(e))
            } else if let Some((e, vars)) = r.templates.iter().find_map(|t| {
                resource::match_template(&t.template.uri_template, &params.uri)
                    .map(|v| (Arc::clone(t), v))
            }) {
                Target::Template(e, vars)
            } else {
                Target::Missing
            }
        };
        Box::pin(async move {
            let outcome = match target {
                Target::Static(e) => ReadResourceOutcome::Complete((e.read)().await?),
                Target::Template(e, variables) => {
                    (e.read)(TemplateCall {
                        ctx,
                        uri: params.uri.clone(),
                        variables,
                        input_responses: params.input_responses,
                        request_state: params.request_state,
                    })
                    .await?
                }
                Target::Missing => {
                    return Err(RpcError::invalid_params("Resource not found")
                        .with_data(json!({ "uri": params.uri })));
                }
            };
            Ok(outcome)
        })
    }

    fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> BoxFuture<'static, Result<CompleteResult, RpcError>> {
        let completer = {
            let r = read(&self.inner.registry);
            let completers = match &params.ref_ {
                CompleteReference::Prompt(p) => r
                    .prompts
                    .iter()
                    .find(|x| x.prompt.name == p.name)
                    .map(|x| x.completers.clone()),
                CompleteReference::ResourceTemplate(t) => r
                    .templates
                    .iter()
                    .find(|x| x.template.uri_template == t.uri)
                    .map(|x| x.completers.clone()),
            };
            completers.and_then(|cs| {
                cs.into_iter()
                    .find(|(name, _)| *name == params.argument.name)
                    .map(|(_, c)| c)
            })
        };
        let value = params.argument.value.clone();
        Box::pin(async move {
            let values = match completer {
                Some(c) => c(value).await,
                None => Vec::new(),
            };
            const MAX: usize = 100;
            let total = values.len();
            let mut completion =
                CompleteResultCompletion::new(values.into_iter().take(MAX).collect());
            completion.total = i64::try_from(total).ok();
            completion.has_more = Some(total > MAX);
            Ok(CompleteResult::new(completion))
        })
    }

    fn listen(
        self,
        ctx: RequestContext,
        params: SubscriptionsListenRequestParams,
    ) -> BoxFuture<'static, Result<SubscriptionsListenResult, RpcError>> {
        let mut rx = self.inner.changes.subscribe();
        Box::pin(async move {
            let id = match ctx.id() {
                crate::types::v2026_07_28::RequestId::String(s) => s.clone(),
                crate::types::v2026_07_28::RequestId::Integer(i) => i.to_string(),
            };
            let meta = json!({ "io.modelcontextprotocol/subscriptionId": id });
            let filter = params.notifications;
            let wants = |change: ListChange| match change {
                ListChange::Tools => filter.tools_list_changed == Some(true),
                ListChange::Prompts => filter.prompts_list_changed == Some(true),
                ListChange::Resources => filter.resources_list_changed == Some(true),
            };
            let accepted = json!({
                "toolsListChanged": filter.tools_list_changed == Some(true),
                "promptsListChanged": filter.prompts_list_changed == Some(true),
                "resourcesListChanged": filter.resources_list_changed == Some(true),
            });
            ctx.notify(
                "notifications/subscriptions/acknowledged",
                json!({ "_meta": meta, "notifications": accepted }),
            );
            loop {
                tokio::select! {
                    () = ctx.cancellation().cancelled() => break,
                    change = rx.recv() => match change {
                        Ok(c) if wants(c) => {
                            let method = match c {
                                ListChange::Tools => "notifications/tools/list_changed",
                                ListChange::Prompts => "notifications/prompts/list_changed",
                                ListChange::Resources => "notifications/resources/list_changed",
                            };
                            ctx.notify(method, json!({ "_meta": meta }));
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => break,
                    },
                }
            }
            serde_json::from_value(json!({ "resultType": "complete", "_meta": meta }))
                .map_err(|e| RpcError::internal(format!("Internal error: {e}")))
        })
    }
}

/// Paging of list results (the caching fields are the low-level server's job).
#[derive(Debug, Clone, Copy)]
struct Paging {
    page_size: usize,
}

impl Paging {
    /// One page of `items` from `cursor` (an offset this server issued), and the next
    /// cursor if there is more.
    fn page<E, T>(
        &self,
        items: &[Arc<E>],
        cursor: Option<&str>,
        f: impl Fn(&E) -> T,
    ) -> Result<(Vec<T>, Option<String>), RpcError> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix("o")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n <= items.len())
                .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?,
        };
        let end = (start + self.page_size).min(items.len());
        let page = items[start..end].iter().map(|e| f(e)).collect();
        let next = (end < items.len()).then(|| format!("o{end}"));
        Ok((page, next))
    }
}

impl<'a> ToolBuilder<'a> {
    /// Registers `handler` as the tool, in the resolver form: after the typed arguments,
    /// each parameter is a resolver ([`Elicit<T>`], [`Sample<P>`], [`ListRoots`], or your
    /// own [`Resolve`] type). tern asks what is missing, batching independent questions
    /// into one round, keeps the answers in the sealed state, and runs the body once,
    /// when everything is answered. The body returns a complete result: a tool that uses
    /// resolvers cannot return `InputRequiredResult` (that does not compile).
    pub fn resolve<A, P, H>(mut self, handler: H)
    where
        A: DeserializeOwned + JsonSchema + Send + Sync + 'static,
        P: ResolveSet<A>,
        H: ResolverHandler<A, P>,
    {
        self.tool.input_schema = schema::object_schema::<A>();
        let name = self.tool.name.clone();
        let mut nodes: Vec<Node<A>> = Vec::new();
        P::nodes(&mut nodes);
        let nodes = Arc::new(nodes);
        let handler = Arc::new(handler);
        let call: ToolFn = Arc::new(move |call: ToolCall| {
            let handler = Arc::clone(&handler);
            let nodes = Arc::clone(&nodes);
            let name = name.clone();
            Box::pin(async move {
                let args: A = tool::decode_args("tool", &name, call.arguments)?;
                let legacy = call.ctx.era() == crate::legacy::Era::Session;
                let mut responses = call.input_responses;
                let mut state = call.request_state;
                // On a 2025-11-25 session there is no input-required result: the same
                // questions go to the client as requests of their own, one dependency
                // level at a time, and the body runs when all are answered.
                let mut levels = 0;
                let store = loop {
                    let round =
                        resolve::resolve_round(&nodes, &args, responses.as_ref(), state.as_deref());
                    match round {
                        Ok(Resolution::Ready(store)) => break store,
                        Ok(Resolution::Ask(asked)) if !legacy => {
                            return Ok(CallToolOutcome::InputRequired(*asked));
                        }
                        Ok(Resolution::Ask(asked)) => {
                            levels += 1;
                            if levels > nodes.len() + 1 {
                                tracing::error!(tool = %name, "resolvers did not settle on a legacy session");
                                return Err(RpcError::internal("Internal error"));
                            }
                            let asked = *asked;
                            let mut answers = crate::types::v2026_07_28::InputResponses::new();
                            for (key, request) in asked.input_requests.iter().flat_map(|r| r.iter())
                            {
                                let answer = call.ctx.request_input(request).await?;
                                answers.insert(key.clone(), answer).map_err(|e| {
                                    RpcError::internal(format!("Internal error: {e}"))
                                })?;
                            }
                            responses = Some(answers);
                            state = asked.request_state;
                        }
                        Err(e) => return e.into_outcome(),
                    }
                };
                let Some(resolved) = P::fetch(&store) else {
                    tracing::error!(tool = %name, "resolved values did not assemble");
                    return Err(RpcError::internal("Internal error"));
                };
                match handler.call(args, resolved).await {
                    Ok(result) => Ok(CallToolOutcome::Complete(result)),
                    Err(e) => e.into_outcome(),
                }
            })
        });
        self.server.add_tool(ToolEntry {
            tool: self.tool,
            call,
        });
    }
}
