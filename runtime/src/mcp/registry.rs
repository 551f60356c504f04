//! What an [`McpServer`] serves: its tools, prompts, resources and templates, changed
//! while it serves, and the list changes published to listeners.

use std::sync::{Arc, RwLock};

use super::McpServer;
use super::prompt::PromptEntry;
use super::resource::{ResourceEntry, TemplateEntry};
use super::tool::ToolEntry;
use crate::server::ServerEvent;

#[derive(Default)]
pub(super) struct Registry {
    pub(super) tools: Vec<Arc<ToolEntry>>,
    pub(super) prompts: Vec<Arc<PromptEntry>>,
    pub(super) resources: Vec<Arc<ResourceEntry>>,
    pub(super) templates: Vec<Arc<TemplateEntry>>,
}

pub(super) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpServer {
    /// Tells listening clients about `event` (see [`Server::publish`](crate::server::Server::publish)).
    pub fn publish(&self, event: ServerEvent) {
        self.inner.events.publish(event);
    }

    /// The `x-mcp-header` annotations of the tool `name` (read once, when it was
    /// registered): what the server this one builds tells its HTTP endpoint, so
    /// `tools/call` requests have their `Mcp-Param-*` headers checked.
    #[cfg(feature = "http-server")]
    pub(crate) fn param_headers(
        &self,
        name: &str,
    ) -> Option<Vec<crate::transport::http::ParamHeader>> {
        read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| t.headers.clone())
            .filter(|h| !h.is_empty())
    }

    /// The OAuth scopes a request needs, by its method and target: a `tools/call`,
    /// `prompts/get` or `resources/read` of an entry registered with `required_scopes`
    /// needs those; anything else, none. What the server this one builds tells its
    /// HTTP endpoint. The lists leave out what the caller's token may not use.
    pub(crate) fn required_scopes(
        &self,
        method: &str,
        target: Option<&str>,
    ) -> Option<Vec<String>> {
        use crate::types::rpc::Request as _;
        use crate::types::v2026_07_28::method::{CallTool, GetPrompt, ReadResource};
        let name = target?;
        let registry = read(&self.inner.registry);
        // A route by method to the registry that names its target.
        let scopes = match method {
            CallTool::METHOD => registry
                .tools
                .iter()
                .find(|t| t.tool.name == name)?
                .scopes
                .clone(),
            GetPrompt::METHOD => registry
                .prompts
                .iter()
                .find(|p| p.prompt.name == name)?
                .scopes
                .clone(),
            ReadResource::METHOD => registry
                .resources
                .iter()
                .find(|r| r.resource.uri == name)?
                .scopes
                .clone(),
            _ => return None,
        };
        (!scopes.is_empty()).then_some(scopes)
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
            self.inner.events.publish(ServerEvent::ToolsChanged);
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
        change: ServerEvent,
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
        self.inner.events.publish(change);
    }

    pub(crate) fn add_tool(&self, entry: ToolEntry) {
        self.upsert(
            entry,
            |r| &mut r.tools,
            |e| &e.tool.name,
            ServerEvent::ToolsChanged,
        );
    }

    pub(crate) fn add_prompt(&self, entry: PromptEntry) {
        self.upsert(
            entry,
            |r| &mut r.prompts,
            |e| &e.prompt.name,
            ServerEvent::PromptsChanged,
        );
    }

    pub(crate) fn add_resource(&self, entry: ResourceEntry) {
        self.upsert(
            entry,
            |r| &mut r.resources,
            |e| &e.resource.uri,
            ServerEvent::ResourcesChanged,
        );
    }

    pub(crate) fn add_template(&self, entry: TemplateEntry) {
        self.upsert(
            entry,
            |r| &mut r.templates,
            |e| &e.template.uri_template,
            ServerEvent::ResourcesChanged,
        );
    }
}

impl McpServer {
    /// A handle that does not keep the server alive.
    pub(crate) fn downgrade(&self) -> super::WeakMcpServer {
        super::WeakMcpServer(std::sync::Arc::downgrade(&self.inner))
    }

    /// The body of the tool `name` (if the server has it) called with `arguments` under
    /// `ctx`, detached from any request: a restartable task's, run again.
    pub(crate) fn tool_body(
        &self,
        name: &str,
        ctx: crate::server::RequestContext,
        arguments: crate::types::v2026_07_28::ToolArguments,
    ) -> Option<super::ToolBody> {
        let entry = read(&self.inner.registry)
            .tools
            .iter()
            .find(|t| t.tool.name == name)
            .cloned()?;
        Some(super::ToolBody::new(entry, ctx, arguments))
    }
}
