//! The upstreams as the gateway holds them: each one's lists, fetched when first needed
//! and kept while its list changes are heard, the names they are served under, and
//! which upstream a call's target belongs to.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;

use super::Upstream;
use super::budget::{self, Over, UpstreamBudgets};
pub(super) use super::merge::{Kept, Merged};
use super::merge::{MergedList, Source};
use super::names::SEPARATOR;
use crate::client::Client;
use crate::jsonrpc::{RawResult, RpcError, code};
use crate::types::v2026_07_28::{PaginatedRequestParams, Tool, method};
use crate::util::lock;

/// One upstream as the gateway holds it.
pub(super) struct Link {
    /// The name its tools, prompts and questions are served under, if any.
    pub(super) name: Option<Arc<str>>,
    pub(super) client: Client,
    pub(super) deadline: Duration,
    /// What the gateway reads of its answers, at most.
    pub(super) budgets: UpstreamBudgets,
    /// How to open a session of a call's own, for an upstream that speaks 2025-11-25
    /// over HTTP (its questions then come as requests on that session).
    pub(super) sessions: Option<crate::transport::http::client::HttpClientBuilder>,
    lists: Mutex<Lists>,
    /// Whether its list changes are heard: only then are its lists kept.
    pub(super) heard: AtomicBool,
}

/// An upstream's lists as last fetched (its tools, prompts, resources and templates, at
/// their [`Merged::SLOT`]); `None` until fetched, or since it changed. Each is kept as
/// text, within the upstream's [`list_bytes`](UpstreamBudgets::list_bytes).
type Lists = [Option<Arc<Vec<Kept>>>; 4];

impl Link {
    pub(super) fn new(upstream: Upstream) -> Self {
        Self {
            sessions: upstream.http.filter(|_| upstream.client.holds_session()),
            name: upstream.name,
            client: upstream.client,
            deadline: upstream.deadline,
            budgets: upstream.budgets,
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

    /// The list `M` as kept, if it is.
    fn kept<M: Merged>(&self) -> Option<Arc<Vec<Kept>>> {
        lock(&self.lists).get(M::SLOT)?.clone()
    }

    /// Keeps (or, with `None`, forgets) the list `M`.
    fn keep<M: Merged>(&self, list: Option<Arc<Vec<Kept>>>) {
        if let Some(slot) = lock(&self.lists).get_mut(M::SLOT) {
            *slot = list;
        }
    }

    /// Forgets the list `M`, which the upstream says changed.
    pub(super) fn forget<M: Merged>(&self) {
        self.keep::<M>(None);
    }

    /// Forgets every list (the upstream's changes went unheard for a while).
    pub(super) fn forget_all(&self) {
        *lock(&self.lists) = Lists::default();
    }

    /// Every item of the list `M` as the upstream lists it: kept, or fetched (within
    /// the upstream's deadline and budgets).
    pub(super) async fn list<M: Merged>(&self) -> Result<Arc<Vec<Kept>>, RpcError> {
        if let Some(kept) = self.kept::<M>() {
            return Ok(kept);
        }
        let heard_before = self.heard.load(Ordering::Acquire);
        let items = match tokio::time::timeout(self.deadline, self.fetch::<M>()).await {
            Ok(Ok(items)) => Arc::new(items),
            // An upstream without the method lists nothing, and will not (its
            // capabilities are its connection's): kept so, heard or not.
            Ok(Err(e)) if e.is_method_not_found() => {
                let none = Arc::new(Vec::new());
                self.keep::<M>(Some(Arc::clone(&none)));
                return Ok(none);
            }
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(self.late()),
        };
        // Kept only if a change would have been heard since the fetch began.
        if heard_before && self.heard.load(Ordering::Acquire) {
            self.keep::<M>(Some(Arc::clone(&items)));
        }
        Ok(items)
    }

    /// The list `M`, page by page, within the upstream's budgets: each page's bytes and
    /// entries counted on its text before it is read, then read an item at a time (no
    /// tree of a whole page is ever built).
    async fn fetch<M: Merged>(&self) -> Result<Vec<Kept>, RpcError> {
        let over = |o: Over| o.error(&self.label(), self.name(), M::METHOD);
        let mut items: Vec<Kept> = Vec::new();
        let (mut bytes, mut cursor) = (0usize, None);
        for _ in 0..budget::MAX_PAGES {
            let mut params = PaginatedRequestParams::new();
            params.cursor = cursor.take();
            let raw = self.client.send_raw::<M>(&params, None, None, None).await;
            let raw = raw.map_err(|e| self.failed(e))?;
            bytes = bytes.saturating_add(raw.taken().len());
            budget::list_bytes(&self.budgets, bytes).map_err(over)?;
            let entries = budget::count(&raw, M::MEMBER).map_err(|e| self.failed_with(&e))?;
            let total = items.len().saturating_add(entries);
            budget::list_entries(&self.budgets, total, M::MEMBER).map_err(over)?;
            items.reserve(entries);
            let mut failure = None;
            let next = budget::each(&raw, M::MEMBER, &mut |entry| {
                let kept = self.kept_item::<M>(entry).map_err(|e| failure = Some(e))?;
                items.push(kept);
                Ok(())
            });
            if let Some(failure) = failure {
                return Err(failure);
            }
            match next.map_err(|e| self.failed_with(&e))? {
                None => return Ok(items),
                Some(next) => cursor = Some(next),
            }
        }
        Err(over(budget::list_pages()))
    }

    /// One entry of a page of `M`, read as the client reads a page (so a 2025-11-25
    /// upstream's is converted), kept as the gateway serves it.
    fn kept_item<M: Merged>(&self, entry: &RawValue) -> Result<Kept, RpcError> {
        let page = format!(r#"{{"{}":[{}]}}"#, M::MEMBER, entry.get());
        let page = self
            .client
            .decode_relayed::<M>(&RawResult::unchecked(page.into()))
            .map_err(|e| self.failed(e))?;
        let (items, _) = M::split(page);
        let item = items.into_iter().next().ok_or_else(|| {
            self.failed_with(&format!("an entry of {} that is not one", M::METHOD))
        })?;
        Kept::new::<M>(&item).map_err(|e| self.failed_with(&e.to_string()))
    }

    /// This upstream's name, or its server's, for an error's data.
    fn name(&self) -> Option<&str> {
        self.name.as_deref().or(self.client.server_name())
    }

    /// What an answer of `method` past this upstream's budget becomes for the client.
    pub(super) fn over(&self, over: Over, method: &str) -> RpcError {
        over.error(&self.label(), self.name(), method)
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

    /// The upstreams' lists `M` (one a link, in upstream order; the routes leave out
    /// those that did not answer), merged as the gateway serves them: each name once
    /// (see [`MergedList`]).
    pub(super) fn merged<M: Merged>(&self, lists: Vec<Arc<Vec<Kept>>>) -> MergedList<M> {
        let sources = self.links.iter().zip(lists).map(|(link, items)| Source {
            prefix: link.name.clone(),
            label: link.label(),
            items,
        });
        let own = self.composites.iter().filter_map(|c| M::own(&c.tool));
        MergedList::new(sources.collect(), own.collect())
    }

    /// The upstream a tool or prompt served as `name` belongs to, and its name there: a
    /// named upstream's by the prefix, the only unnamed upstream's as it is, else the
    /// first unnamed upstream that lists it. A name outside the spec's rules is no
    /// one's, and so is one its upstream's kept list leaves out (a list the gateway
    /// holds because it hears the upstream's changes, or one the upstream has not at
    /// all): a call never reaches an upstream by a name the gateway does not serve. An
    /// upstream whose changes go unheard is not asked for its list on every call: its
    /// prefix, or its being the only one, names it.
    pub(super) async fn named<M: Merged>(
        &self,
        name: &str,
        own_name: fn(&Kept) -> &str,
    ) -> Result<Option<(Arc<Link>, String)>, RpcError> {
        if M::RULED && !super::merge::valid_tool_name(name.len(), name) {
            return Ok(None);
        }
        let unlisted = |link: &Link, own: &str| {
            link.kept::<M>()
                .is_some_and(|kept| !kept.iter().any(|i| own_name(i) == own))
        };
        if let Some((link, own)) = self.by_name(name) {
            let served = !unlisted(link, own);
            return Ok(served.then(|| (Arc::clone(link), own.to_owned())));
        }
        let mut unnamed = self.links.iter().filter(|l| l.name.is_none());
        if let (Some(only), None) = (unnamed.next(), unnamed.next()) {
            let served = !unlisted(only, name);
            return Ok(served.then(|| (Arc::clone(only), name.to_owned())));
        }
        // An unnamed upstream whose list failed lists nothing here; its failure is the
        // answer only when no other lists the name.
        let mut failed = None;
        for link in self.links.iter().filter(|l| l.name.is_none()) {
            match link.list::<M>().await {
                Ok(items) if items.iter().any(|i| own_name(i) == name) => {
                    return Ok(Some((Arc::clone(link), name.to_owned())));
                }
                Err(e) if !e.is_method_not_found() => failed = failed.or(Some(e)),
                Ok(_) | Err(_) => {}
            }
        }
        failed.map_or(Ok(None), Err)
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
        let tool = tools.iter().find(|t| &*t.name == own)?;
        let tool = tool.item::<method::ListTools>()?;
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
        // An upstream that serves no resources, or failed to list them, owns none here.
        for link in &self.links {
            let Ok(listed) = link.list::<method::ListResources>().await else {
                continue;
            };
            if listed.iter().any(|r| &*r.name == uri) {
                return Ok(Some(Arc::clone(link)));
            }
        }
        let mut best: Option<(usize, &Arc<Link>)> = None;
        for link in &self.links {
            let Ok(templates) = link.list::<method::ListResourceTemplates>().await else {
                continue;
            };
            for template in templates.iter() {
                let fixed = template.name.split('{').next().unwrap_or_default();
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
