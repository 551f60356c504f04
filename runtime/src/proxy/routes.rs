//! The gateway's server: one route per method, each finding its upstream in the
//! catalog and relaying to it; the lists merged and paged here; the listen stream fed
//! by the upstreams' changes.

use std::sync::{Arc, OnceLock};

use serde_json::json;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::Gateway;
use super::catalog::{Catalog, Link, Merged};
use super::relay;
use crate::jsonrpc::RpcError;
use crate::seal::RequestStateSecurity;
use crate::server::events::Events;
use crate::server::{RequestContext, Server, ServerBuilder, SessionInput};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CompleteReference, CompleteRequestParams,
    PaginatedRequestParams, ServerCapabilities, method,
};

/// How many items a page of a merged list holds.
const PAGE_SIZE: usize = 100;

/// What every route shares: the upstreams, the events the listen streams hear, and the
/// watchers of the upstreams' changes (started by the first request, stopped when the
/// server is dropped).
pub(super) struct Shared {
    pub(super) catalog: Arc<Catalog>,
    /// The policies, in the order they were given.
    policies: Vec<Arc<dyn super::compose::Check>>,
    /// The calls held between rounds on sessions of their own.
    holds: super::bridge::Holds,
    pub(super) events: Events,
    started: OnceLock<DropGuard>,
}

impl Shared {
    /// Starts hearing the upstreams' changes, once (a request runs on the runtime the
    /// watchers need).
    fn start(self: &Arc<Self>) {
        self.started.get_or_init(|| {
            let stop = CancellationToken::new();
            super::watch::start(&self.catalog.links, &self.events, &stop);
            stop.drop_guard()
        });
    }
}

/// The gateway built into its server.
pub(super) fn build(gateway: Gateway) -> Result<Server, crate::ConfigError> {
    let mut catalog = Catalog {
        links: gateway
            .upstreams
            .into_iter()
            .map(|u| Arc::new(Link::new(u)))
            .collect(),
        composites: Vec::new(),
    };
    for (tool, parts) in gateway.composites {
        let parts = super::catalog::parts(&catalog, &tool.name, &parts)?;
        catalog
            .composites
            .push(super::catalog::Composite { tool, parts });
    }
    let shared = Arc::new(Shared {
        catalog: Arc::new(catalog),
        policies: gateway.policies,
        events: Events::default(),
        holds: Default::default(),
        started: OnceLock::new(),
    });
    let security = gateway
        .security
        .unwrap_or_else(RequestStateSecurity::ephemeral);
    let builder = Server::builder(gateway.name, gateway.version)
        .capabilities(capabilities())
        .events(shared.events.clone())
        .seal(security)
        .fulfil_input_on_sessions(SessionInput::default())
        .limits(gateway.limits)
        .lookups(lookups(&shared))
        .handle::<method::ListTools, _, _>(lister::<method::ListTools>(&shared))
        .handle::<method::ListPrompts, _, _>(lister::<method::ListPrompts>(&shared))
        .handle::<method::ListResources, _, _>(lister::<method::ListResources>(&shared))
        .handle::<method::ListResourceTemplates, _, _>(lister::<method::ListResourceTemplates>(
            &shared,
        ));
    let builder = call_routes(builder, &shared);
    super::tasks::routes(builder, &shared.catalog).build()
}

/// The routes of the methods relayed to one upstream (calls, prompts, reads,
/// completions), and the listen stream.
fn call_routes(builder: ServerBuilder, shared: &Arc<Shared>) -> ServerBuilder {
    let (call, get, read, complete, listen) = (
        Arc::clone(shared),
        Arc::clone(shared),
        Arc::clone(shared),
        Arc::clone(shared),
        Arc::clone(shared),
    );
    builder
        .handle_replying::<method::CallTool, _, _, _>(move |ctx, params| {
            let shared = Arc::clone(&call);
            Box::pin(async move {
                shared.start();
                call_tool(&shared, &ctx, params).await
            })
        })
        .handle_replying::<method::GetPrompt, _, _, _>(move |ctx, params| {
            let shared = Arc::clone(&get);
            Box::pin(async move {
                shared.start();
                let name = params.name.clone();
                let target = shared
                    .catalog
                    .named::<method::ListPrompts>(&name, |p| &p.name)
                    .await?;
                let (link, own) = target
                    .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {name}")))?;
                relay::round::<method::GetPrompt>(&link, &shared.holds, &ctx, params, own).await
            })
        })
        .handle_replying::<method::ReadResource, _, _, _>(move |ctx, params| {
            let shared = Arc::clone(&read);
            Box::pin(async move {
                shared.start();
                let link = shared.catalog.resource(&params.uri).await?.ok_or_else(|| {
                    RpcError::invalid_params("Resource not found")
                        .with_data(json!({ "uri": params.uri }))
                })?;
                let own = params.uri.clone();
                relay::round::<method::ReadResource>(&link, &shared.holds, &ctx, params, own).await
            })
        })
        .handle::<method::Complete, _, _>(move |ctx, params| {
            let shared = Arc::clone(&complete);
            Box::pin(async move {
                shared.start();
                self::complete(&shared, &ctx, params).await
            })
        })
        .handle::<method::SubscriptionsListen, _, _>(move |ctx, params| {
            listen.start();
            crate::mcp::listen::listen(&listen.events, Arc::from([]), ctx, params)
        })
}

/// What the gateway tells its HTTP endpoint before serving a request: a tool's
/// `x-mcp-header` annotations, from its upstream's list.
fn lookups(shared: &Arc<Shared>) -> crate::server::lookups::Lookups {
    #[cfg(feature = "http-server")]
    let headers = Arc::downgrade(shared);
    #[cfg(not(feature = "http-server"))]
    let _ = shared;
    crate::server::lookups::Lookups {
        required_scopes: None,
        #[cfg(feature = "http-server")]
        tool_headers: Some(Arc::new(move |tool| {
            headers.upgrade()?.catalog.tool_headers(tool)
        })),
    }
}

/// A list route: a page of every upstream's list `M`, merged.
fn lister<M: Merged>(
    shared: &Arc<Shared>,
) -> impl Fn(RequestContext, PaginatedRequestParams) -> BoxFuture<'static, Result<M::Result, RpcError>>
+ Send
+ Sync
+ 'static
where
    M::Result: Send,
{
    let shared = Arc::clone(shared);
    move |_ctx, params| {
        let shared = Arc::clone(&shared);
        Box::pin(async move {
            shared.start();
            let links = &shared.catalog.links;
            let fetched = futures_util::future::join_all(links.iter().map(|l| l.list::<M>()));
            let all = shared.catalog.merged::<M>(answered(links, fetched.await)?);
            all.page(PAGE_SIZE, params.cursor.as_deref())
        })
    }
}

/// Which upstreams' lists a merged list is made of: each upstream that answered, in
/// order (one that does not serve the method, -32601, lists nothing; one that failed or
/// was late is left out, named in the log). Only when no upstream answered and one
/// failed is the list the first failure.
pub(super) fn answered<L: Default>(
    links: &[Arc<Link>],
    lists: Vec<Result<L, RpcError>>,
) -> Result<Vec<L>, RpcError> {
    let mut failed = None;
    let mut any = false;
    let mut kept = Vec::with_capacity(lists.len());
    for (link, list) in links.iter().zip(lists) {
        match list {
            Ok(items) => {
                any = true;
                kept.push(items);
            }
            Err(e) if e.is_method_not_found() => {
                tracing::debug!(upstream = %link.label(), "an upstream does not serve this list");
                any = true;
                kept.push(L::default());
            }
            Err(e) => {
                tracing::warn!(
                    upstream = %link.label(),
                    code = e.code,
                    error = %e.message,
                    "an upstream is left out of a merged list: it failed or was late"
                );
                failed.get_or_insert(e);
                kept.push(L::default());
            }
        }
    }
    match failed {
        Some(e) if !any => Err(e),
        _ => Ok(kept),
    }
}

/// `tools/call`: a composite tool's parts, or the upstream's tool, with a policy's
/// question when one applies.
async fn call_tool(
    shared: &Shared,
    ctx: &RequestContext,
    params: CallToolRequestParams,
) -> Result<crate::server::Reply<CallToolOutcome>, RpcError> {
    let name = params.name.clone();
    let policy = shared
        .policies
        .iter()
        .find(|p| p.applies(&name))
        .map(|p| &**p);
    let composite = shared
        .catalog
        .composites
        .iter()
        .find(|c| c.tool.name == name);
    let parts = match composite {
        Some(composite) => composite.parts.clone(),
        None => {
            let target = shared
                .catalog
                .named::<method::ListTools>(&name, |t| &t.name)
                .await?;
            let (link, own) =
                target.ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {name}")))?;
            if policy.is_none() {
                return relay::round::<method::CallTool>(&link, &shared.holds, ctx, params, own)
                    .await;
            }
            vec![(link, own)]
        }
    };
    let plan = super::compose::Plan {
        tool: &name,
        parts,
        policy,
    };
    super::compose::round(plan, ctx, params)
        .await
        .map(crate::server::Reply::Now)
}

/// `completion/complete`, relayed to the upstream of the prompt or template it
/// completes for (the prompt under its own name there).
async fn complete(
    shared: &Shared,
    ctx: &RequestContext,
    mut params: CompleteRequestParams,
) -> Result<crate::types::v2026_07_28::CompleteResult, RpcError> {
    let link = match &mut params.ref_ {
        CompleteReference::Prompt(prompt) => {
            let target = shared
                .catalog
                .named::<method::ListPrompts>(&prompt.name, |p| &p.name)
                .await?;
            let (link, own) = target.ok_or_else(|| {
                RpcError::invalid_params(format!("Unknown prompt: {}", prompt.name))
            })?;
            prompt.name = own;
            link
        }
        CompleteReference::ResourceTemplate(template) => {
            let link = shared.catalog.resource(&template.uri).await?;
            link.ok_or_else(|| {
                RpcError::invalid_params(format!("Unknown resource template: {}", template.uri))
            })?
        }
    };
    relay::send::<method::Complete>(&link, ctx, params).await
}

/// What the gateway offers: what an upstream may offer, each relayed, and the tasks
/// extension (a task is an upstream's).
fn capabilities() -> ServerCapabilities {
    let mut caps = crate::mcp::routes::offered();
    caps.extensions
        .get_or_insert_with(Default::default)
        .insert(super::tasks::EXTENSION.to_owned(), Default::default());
    caps
}
