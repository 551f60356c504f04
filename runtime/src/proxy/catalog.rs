//! The upstreams as the gateway holds them: each one's lists, fetched when first needed
//! and kept while its list changes are heard, the names they are served under, and
//! which upstream a call's target belongs to.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Upstream;
use super::names::{self, SEPARATOR};
use crate::client::{Client, ListMethod};
use crate::jsonrpc::{RpcError, code};
use crate::types::v2026_07_28::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt,
    Resource, ResourceTemplate, Tool, method,
};
use crate::util::lock;

/// One upstream as the gateway holds it.
pub(super) struct Link {
    /// The name its tools, prompts and questions are served under, if any.
    pub(super) name: Option<Arc<str>>,
    pub(super) client: Client,
    pub(super) deadline: Duration,
    /// How to open a session of a call's own, for an upstream that speaks 2025-11-25
    /// over HTTP (its questions then come as requests on that session).
    pub(super) sessions: Option<crate::transport::http::client::HttpClientBuilder>,
    lists: Mutex<Lists>,
    /// Whether its list changes are heard: only then are its lists kept.
    pub(super) heard: AtomicBool,
}

/// An upstream's lists as last fetched; `None` until fetched, or since it changed.
#[derive(Default)]
pub(super) struct Lists {
    tools: Option<Arc<Vec<Tool>>>,
    prompts: Option<Arc<Vec<Prompt>>>,
    resources: Option<Arc<Vec<Resource>>>,
    templates: Option<Arc<Vec<ResourceTemplate>>>,
}

impl Link {
    pub(super) fn new(upstream: Upstream) -> Self {
        Self {
            sessions: upstream.http.filter(|_| upstream.client.holds_session()),
            name: upstream.name,
            client: upstream.client,
            deadline: upstream.deadline,
            lists: Mutex::default(),
            heard: AtomicBool::new(false),
        }
    }

    /// What the gateway's clients are told of this upstream in an error.
    pub(super) fn label(&self) -> String {
        match (&self.name, self.client.server_name()) {
            (Some(name), _) => format!("upstream {name:?}"),
            (None, Some(server)) => format!("upstream {server:?}"),
            (None, None) => "the upstream".to_owned(),
        }
    }

    /// Forgets the list `M`, which the upstream says changed.
    pub(super) fn forget<M: Merged>(&self) {
        *M::slot(&mut lock(&self.lists)) = None;
    }

    /// Forgets every list (the upstream's changes went unheard for a while).
    pub(super) fn forget_all(&self) {
        *lock(&self.lists) = Lists::default();
    }

    /// Every item of the list `M` as the upstream lists it: kept, or fetched (within
    /// the upstream's deadline).
    pub(super) async fn list<M: Merged>(&self) -> Result<Arc<Vec<M::Item>>, RpcError> {
        if let Some(kept) = M::slot(&mut lock(&self.lists)).clone() {
            return Ok(kept);
        }
        let heard_before = self.heard.load(Ordering::Acquire);
        let items = match tokio::time::timeout(self.deadline, self.client.list_all::<M>()).await {
            Ok(Ok(items)) => Arc::new(items),
            Ok(Err(e)) => return Err(self.failed(e)),
            Err(_) => return Err(self.late()),
        };
        // Kept only if a change would have been heard since the fetch began.
        if heard_before && self.heard.load(Ordering::Acquire) {
            *M::slot(&mut lock(&self.lists)) = Some(Arc::clone(&items));
        }
        Ok(items)
    }

    /// The list `M` as kept, if it is.
    #[cfg(feature = "http-server")]
    fn kept<M: Merged>(&self) -> Option<Arc<Vec<M::Item>>> {
        M::slot(&mut lock(&self.lists)).clone()
    }

    /// The name an item of this upstream called `own` is served under.
    pub(super) fn serve_as(&self, own: &str) -> String {
        names::served(self.name.as_deref(), own)
    }

    /// What this upstream's failure becomes for the gateway's client: its JSON-RPC
    /// error as it answered it (in a result, or in the body of a 400 or 404); anything
    /// else an internal error naming the upstream.
    pub(super) fn failed(&self, error: crate::Error) -> RpcError {
        match error {
            crate::Error::Rpc(e) | crate::Error::StateRejected(e) => *e,
            crate::Error::Transport(t) if t.rpc_error().is_some() => t
                .rpc_error()
                .cloned()
                .unwrap_or_else(|| RpcError::internal("Internal error")),
            other => self.failed_with(&other.to_string()),
        }
    }

    /// An internal error naming this upstream and what went wrong.
    pub(super) fn failed_with(&self, what: &str) -> RpcError {
        tracing::warn!(upstream = %self.label(), error = what, "an upstream request failed");
        RpcError::new(
            code::INTERNAL_ERROR,
            format!("{} failed: {what}", self.label()),
        )
    }

    /// What this upstream missing its deadline becomes: -32001 naming it.
    pub(super) fn late(&self) -> RpcError {
        tracing::warn!(upstream = %self.label(), deadline = ?self.deadline, "an upstream missed its deadline");
        RpcError::new(
            code::REQUEST_TIMEOUT,
            format!(
                "{} did not answer within {:.3} s",
                self.label(),
                self.deadline.as_secs_f64()
            ),
        )
    }
}

/// A list the gateway merges from its upstreams: where a link keeps it, how a named
/// upstream's item is renamed, and the result a page of it makes.
pub(super) trait Merged: ListMethod<Item: Clone + Send + Sync + 'static> {
    /// Where a link keeps this list.
    fn slot(lists: &mut Lists) -> &mut Option<Arc<Vec<Self::Item>>>;
    /// The item's name, if the gateway serves it under its upstream's (tools and
    /// prompts; resources keep their URIs).
    fn name(item: &mut Self::Item) -> Option<&mut String>;
    /// A page of the merged list.
    fn page(items: Vec<Self::Item>, next: Option<String>) -> Self::Result;
    /// What the gateway lists of its own, after its upstreams' (its composite tools).
    fn own(catalog: &Catalog) -> Vec<Self::Item> {
        let _ = catalog;
        Vec::new()
    }
    /// The item as the gateway serves it for `link`.
    fn serve(link: &Link, item: &Self::Item) -> Self::Item {
        let mut item = item.clone();
        if let Some(name) = Self::name(&mut item) {
            *name = link.serve_as(name);
        }
        item
    }
}

macro_rules! merged {
    ($marker:ty, $item:ty, $slot:ident, $result:ty, name: $($field:ident)? $(, own: $own:expr)?) => {
        impl Merged for $marker {
            fn slot(lists: &mut Lists) -> &mut Option<Arc<Vec<$item>>> {
                &mut lists.$slot
            }
            fn name(item: &mut $item) -> Option<&mut String> {
                let _ = &item;
                merged!(@name item $($field)?)
            }
            fn page(items: Vec<$item>, next: Option<String>) -> $result {
                let mut result = <$result>::new(items);
                result.next_cursor = next;
                result
            }
            $(fn own(catalog: &Catalog) -> Vec<$item> {
                ($own)(catalog)
            })?
        }
    };
    (@name $item:ident $field:ident) => { Some(&mut $item.$field) };
    (@name $item:ident) => { None };
}
merged!(method::ListTools, Tool, tools, ListToolsResult, name: name,
    own: |c: &Catalog| c.composites.iter().map(|c| c.tool.clone()).collect());
merged!(method::ListPrompts, Prompt, prompts, ListPromptsResult, name: name);
merged!(method::ListResources, Resource, resources, ListResourcesResult, name:);
merged!(method::ListResourceTemplates, ResourceTemplate, templates, ListResourceTemplatesResult, name:);

/// The gateway's upstreams, in the order they were given, and the tools it serves
/// itself.
pub(super) struct Catalog {
    pub(super) links: Vec<Arc<Link>>,
    pub(super) composites: Vec<Composite>,
}

impl Catalog {
    /// The named upstream `served` (a tool's, a prompt's, a task's name as the gateway
    /// serves it) begins with, and the rest: its name there.
    pub(super) fn by_name<'a>(&self, served: &'a str) -> Option<(&Arc<Link>, &'a str)> {
        let (prefix, rest) = served.split_once(SEPARATOR)?;
        let link = self
            .links
            .iter()
            .find(|l| l.name.as_deref() == Some(prefix))?;
        Some((link, rest))
    }

    /// The first upstream without a name.
    pub(super) fn unnamed(&self) -> Option<&Arc<Link>> {
        self.links.iter().find(|l| l.name.is_none())
    }

    /// Every upstream's list `M`, merged in upstream order, as the gateway serves it.
    pub(super) async fn merged<M: Merged>(&self) -> Result<Vec<M::Item>, RpcError> {
        let lists = futures_util::future::try_join_all(self.links.iter().map(|l| l.list::<M>()));
        let lists = lists.await?;
        let mut merged: Vec<M::Item> = self
            .links
            .iter()
            .zip(&lists)
            .flat_map(|(link, items)| items.iter().map(|item| M::serve(link, item)))
            .collect();
        merged.extend(M::own(self));
        Ok(merged)
    }

    /// The upstream a tool or prompt served as `name` belongs to, and its name there:
    /// a named upstream's by the prefix; else the unnamed upstream that lists it (the
    /// only one, without asking).
    pub(super) async fn named<M: Merged>(
        &self,
        name: &str,
        own_name: fn(&M::Item) -> &str,
    ) -> Result<Option<(Arc<Link>, String)>, RpcError> {
        if let Some((link, own)) = self.by_name(name) {
            return Ok(Some((Arc::clone(link), own.to_owned())));
        }
        let mut unnamed = self.links.iter().filter(|l| l.name.is_none());
        match (unnamed.next(), unnamed.next()) {
            (None, _) => Ok(None),
            (Some(only), None) => Ok(Some((Arc::clone(only), name.to_owned()))),
            (Some(_), Some(_)) => {
                for link in self.links.iter().filter(|l| l.name.is_none()) {
                    if link.list::<M>().await?.iter().any(|i| own_name(i) == name) {
                        return Ok(Some((Arc::clone(link), name.to_owned())));
                    }
                }
                Ok(None)
            }
        }
    }

    /// The `x-mcp-header` annotations of the tool served as `name`, from its
    /// upstream's tool list as kept (a list not yet fetched annotates nothing; the
    /// upstream still checks the headers the gateway's client sends it).
    #[cfg(feature = "http-server")]
    pub(super) fn tool_headers(
        &self,
        name: &str,
    ) -> Option<Vec<crate::transport::http::ParamHeader>> {
        let (link, own) = self
            .by_name(name)
            .or_else(|| Some((self.unnamed()?, name)))?;
        let tools = link.kept::<method::ListTools>()?;
        let tool = tools.iter().find(|t| t.name == own)?;
        let schema = serde_json::Value::Object(tool.input_schema.clone());
        crate::transport::http::param_headers(&schema)
            .ok()
            .filter(|h| !h.is_empty())
    }

    /// The upstream a resource URI belongs to: the only upstream, else the one that
    /// lists it, else the one with a template it starts like (the template's text up to
    /// its first expression).
    pub(super) async fn resource(&self, uri: &str) -> Result<Option<Arc<Link>>, RpcError> {
        if let [only] = self.links.as_slice() {
            return Ok(Some(Arc::clone(only)));
        }
        for link in &self.links {
            let listed = link.list::<method::ListResources>().await?;
            if listed.iter().any(|r| r.uri == uri) {
                return Ok(Some(Arc::clone(link)));
            }
        }
        let mut best: Option<(usize, &Arc<Link>)> = None;
        for link in &self.links {
            for template in link.list::<method::ListResourceTemplates>().await?.iter() {
                let fixed = template.uri_template.split('{').next().unwrap_or_default();
                let longer = best.is_none_or(|(len, _)| fixed.len() > len);
                if !fixed.is_empty() && uri.starts_with(fixed) && longer {
                    best = Some((fixed.len(), link));
                }
            }
        }
        Ok(best.map(|(_, link)| Arc::clone(link)))
    }
}

/// A tool the gateway serves itself: each of its parts (an upstream and its tool there)
/// called with the same arguments.
pub(super) struct Composite {
    pub(super) tool: Tool,
    pub(super) parts: Vec<(Arc<Link>, String)>,
}

/// The composite tools' parts, found by the names the gateway serves them under
/// (`NAME.tool`, each of a different named upstream).
pub(super) fn parts(
    catalog: &Catalog,
    tool: &str,
    parts: &[String],
) -> Result<Vec<(Arc<Link>, String)>, crate::ConfigError> {
    let mut found: Vec<(Arc<Link>, String)> = Vec::new();
    for part in parts {
        let Some((link, own)) = catalog.by_name(part) else {
            return Err(crate::ConfigError::Invalid(format!(
                "{tool}: {part:?} is not a named upstream's tool (NAME.tool)"
            )));
        };
        if found.iter().any(|(l, _)| Arc::ptr_eq(l, link)) {
            return Err(crate::ConfigError::Invalid(format!(
                "{tool}: two parts of one upstream ({:?}); their questions would meet",
                link.name.as_deref().unwrap_or_default()
            )));
        }
        found.push((Arc::clone(link), own.to_owned()));
    }
    if found.is_empty() {
        return Err(crate::ConfigError::Invalid(format!(
            "{tool}: a composite tool needs a part"
        )));
    }
    Ok(found)
}
