//! The low-level server an [`McpServer`] builds: its capabilities, sealing and caching,
//! and one route per method into the registry.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::extension::ToolReply;
use super::handoff::ToolHandoff;
use super::paging::{Paging, lister};
use super::prompt::PromptCall;
use super::registry::read;
use super::resource::{self, ResourceEntry, StaticRead, TemplateCall, TemplateEntry};
use super::setting::Gate;
use super::single_use::SingleUse;
use super::{Config, Extensions, McpServer};
use crate::jsonrpc::RpcError;
use crate::seal::RequestStateSecurity;
use crate::server::replay::MemoryReplayStore;
use crate::server::{Reply, RequestContext, Server, ServerBuilder};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CompleteReference, CompleteRequestParams,
    CompleteResult, CompleteResultCompletion, GetPromptOutcome, GetPromptRequestParams,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    ReadResourceOutcome, ReadResourceRequestParams, ServerCapabilities, ServerCapabilitiesPrompts,
    ServerCapabilitiesResources, ServerCapabilitiesTools, SubscriptionsListenRequestParams, method,
};

/// The low-level server `me` builds with `config`: its capabilities, sealing and
/// caching, and its routes.
pub(super) fn build_server(me: &McpServer, config: Config) -> Result<Server, crate::ConfigError> {
    let extensions: Extensions = config.extensions.into();
    let paging = Paging {
        page_size: config.page_size,
    };
    let security = config
        .security
        .unwrap_or_else(RequestStateSecurity::ephemeral);
    let _ = me.inner.single_use.set(SingleUse {
        store: config
            .replay
            .unwrap_or_else(|| Arc::new(MemoryReplayStore::default())),
        ttl: security.state_ttl(),
    });
    let mut builder = Server::builder(me.inner.name.clone(), me.inner.version.clone())
        .capabilities(capabilities(&extensions))
        .events(me.inner.events.clone())
        .cache(config.ttl_ms, config.public)
        .seal(security);
    if let Some(i) = config.instructions {
        builder = builder.instructions(i);
    }
    if let Some(policy) = config.session_input {
        builder = builder.fulfil_input_on_sessions(policy);
    }
    let builder = builder
        .layers(config.layers)
        .limits(config.limits)
        .lookups(lookups(me));
    let builder = list_routes(me, builder, paging);
    let builder = call_routes(me, builder, &extensions);
    extensions
        .iter()
        .fold(builder, |builder, x| x.routes(builder))
        .build()
}

/// The registry's answers for the transports: each lookup holds the `McpServer` weakly
/// (the server it builds is kept inside it).
fn lookups(me: &McpServer) -> crate::server::lookups::Lookups {
    let scopes = Arc::downgrade(&me.inner);
    #[cfg(feature = "http-server")]
    let headers = scopes.clone();
    crate::server::lookups::Lookups {
        required_scopes: Some(Arc::new(move |method, target| {
            let inner = scopes.upgrade()?;
            McpServer { inner }.required_scopes(method, target)
        })),
        #[cfg(feature = "http-server")]
        tool_headers: Some(Arc::new(move |tool| {
            let inner = headers.upgrade()?;
            McpServer { inner }.param_headers(tool)
        })),
    }
}

/// What an `McpServer` offers: its lists and their changes, resource subscriptions,
/// completions, logging, and its extensions.
fn capabilities(extensions: &Extensions) -> ServerCapabilities {
    let mut caps = offered();
    crate::server::builder::declare(extensions.iter().map(|x| (x.id(), x.settings())), &mut caps);
    caps
}

/// What a server of tools, prompts and resources offers (an `McpServer`, a gateway):
/// its lists and their changes, resource subscriptions, completions and logging.
pub(crate) fn offered() -> ServerCapabilities {
    let mut caps = ServerCapabilities::new();
    let mut tools = ServerCapabilitiesTools::new();
    tools.list_changed = Some(true);
    caps.tools = Some(tools);
    let mut prompts = ServerCapabilitiesPrompts::new();
    prompts.list_changed = Some(true);
    caps.prompts = Some(prompts);
    let mut resources = ServerCapabilitiesResources::new();
    resources.list_changed = Some(true);
    // Sessions subscribe with `resources/subscribe`; `ServerEvent::ResourceUpdated` reaches them.
    resources.subscribe = Some(true);
    caps.resources = Some(resources);
    caps.completions = Some(Default::default());
    // Tools log through their context; sessions choose a level with `logging/setLevel`.
    caps.logging = Some(Default::default());
    caps
}

/// The four lists, each a page of the registry.
fn list_routes(me: &McpServer, builder: ServerBuilder, paging: Paging) -> ServerBuilder {
    builder
        .handle::<method::ListTools, _, _>(lister(
            me,
            |r| &r.tools,
            |t| &t.scopes,
            |t, caps| {
                let mut tool = t.tool.clone();
                Gate::apply(&t.gates, caps, &mut tool.meta).then_some(tool)
            },
            |items, next| {
                let mut result = ListToolsResult::new(items);
                result.next_cursor = next;
                result
            },
            paging,
        ))
        .handle::<method::ListPrompts, _, _>(lister(
            me,
            |r| &r.prompts,
            |p| &p.scopes,
            |p, _| Some(p.prompt.clone()),
            |items, next| {
                let mut result = ListPromptsResult::new(items);
                result.next_cursor = next;
                result
            },
            paging,
        ))
        .handle::<method::ListResources, _, _>(lister(
            me,
            |r| &r.resources,
            |x| &x.scopes,
            |x, caps| {
                let mut resource = x.resource.clone();
                Gate::apply(&x.gates, caps, &mut resource.meta).then_some(resource)
            },
            |items, next| {
                let mut result = ListResourcesResult::new(items);
                result.next_cursor = next;
                result
            },
            paging,
        ))
        .handle::<method::ListResourceTemplates, _, _>(lister(
            me,
            |r| &r.templates,
            |_| &[],
            |x, _| Some(x.template.clone()),
            |items, next| {
                let mut result = ListResourceTemplatesResult::new(items);
                result.next_cursor = next;
                result
            },
            paging,
        ))
}

/// The calls into the registry's entries, and the listen stream.
fn call_routes(me: &McpServer, builder: ServerBuilder, extensions: &Extensions) -> ServerBuilder {
    let (call, get, read, complete, listen) =
        (me.clone(), me.clone(), me.clone(), me.clone(), me.clone());
    let (call_extensions, listen_extensions) = (Arc::clone(extensions), Arc::clone(extensions));
    builder
        .handle_replying::<method::CallTool, _, _, _>(move |ctx, params: CallToolRequestParams| {
            call_tool(&call, &call_extensions, ctx, params)
        })
        .handle::<method::GetPrompt, _, _>(move |ctx, params: GetPromptRequestParams| {
            get_prompt(&get, ctx, params)
        })
        .handle_replying::<method::ReadResource, _, _, _>(
            move |ctx, params: ReadResourceRequestParams| read_resource(&read, ctx, params),
        )
        .handle::<method::Complete, _, _>(move |_ctx, params: CompleteRequestParams| {
            self::complete(&complete, params)
        })
        .handle::<method::SubscriptionsListen, _, _>(
            move |ctx, params: SubscriptionsListenRequestParams| {
                super::listen::listen(
                    &listen.inner.events,
                    Arc::clone(&listen_extensions),
                    ctx,
                    params,
                )
            },
        )
}

fn call_tool(
    me: &McpServer,
    extensions: &Extensions,
    ctx: RequestContext,
    mut params: CallToolRequestParams,
) -> BoxFuture<'static, Result<Reply<CallToolOutcome>, RpcError>> {
    let entry = read(&me.inner.registry)
        .tools
        .iter()
        .find(|t| t.tool.name == params.name)
        .cloned();
    let guard = me.inner.single_use.get().cloned();
    // The first extension the tool has a setting for takes the call.
    let taker = entry.as_ref().and_then(|entry| {
        extensions
            .iter()
            .find(|x| entry.settings.iter().any(|(id, _)| *id == x.id()))
            .cloned()
    });
    // What needs no waiting is done before the future is built: the future then holds
    // the handoff alone, not the params beside it, and stays small enough to box cheaply.
    let Some(entry) = entry else {
        let unknown = RpcError::invalid_params(format!("Unknown tool: {}", params.name));
        return Box::pin(std::future::ready(Err(unknown)));
    };
    // Kept as text: the tool decodes it from there, and a schema that refuses more
    // than that decoding is checked first, on a tree.
    let arguments = params.arguments.take().unwrap_or_default();
    if let Err(refused) = entry.check_arguments(&arguments) {
        return Box::pin(std::future::ready(Err(refused)));
    }
    let round = (params.input_responses, params.request_state);
    let handoff = ToolHandoff::new(entry, ctx, arguments, round, guard);
    Box::pin(async move {
        match taker {
            Some(extension) => match extension.call_tool(handoff).await? {
                ToolReply::Result(outcome) => Ok(Reply::Now(outcome)),
                ToolReply::Instead(raw) => Ok(Reply::Instead(raw)),
            },
            None => handoff.inline().await.map(Reply::Now),
        }
    })
}

fn get_prompt(
    me: &McpServer,
    ctx: RequestContext,
    params: GetPromptRequestParams,
) -> BoxFuture<'static, Result<GetPromptOutcome, RpcError>> {
    let entry = read(&me.inner.registry)
        .prompts
        .iter()
        .find(|p| p.prompt.name == params.name)
        .cloned();
    Box::pin(async move {
        let entry = entry
            .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {}", params.name)))?;
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
    me: &McpServer,
    ctx: RequestContext,
    params: ReadResourceRequestParams,
) -> BoxFuture<'static, Result<Reply<ReadResourceOutcome>, RpcError>> {
    enum Target {
        Static(Arc<ResourceEntry>),
        Template(Arc<TemplateEntry>, BTreeMap<String, String>),
        Missing,
    }
    let target = {
        let r = read(&me.inner.registry);
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
            Target::Static(e) => match &e.read {
                StaticRead::Each(read) => ReadResourceOutcome::Complete(read().await?),
                StaticRead::Fixed(shared) => return Ok(Reply::Shared(Arc::clone(shared))),
            },
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
        Ok(Reply::Now(outcome))
    })
}

fn complete(
    me: &McpServer,
    params: CompleteRequestParams,
) -> BoxFuture<'static, Result<CompleteResult, RpcError>> {
    let completer = {
        let r = read(&me.inner.registry);
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
        let mut completion = CompleteResultCompletion::new(values.into_iter().take(MAX).collect());
        completion.total = i64::try_from(total).ok();
        completion.has_more = Some(total > MAX);
        Ok(CompleteResult::new(completion))
    })
}
