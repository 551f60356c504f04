//! What an [`McpServer`] serves: its tools, prompts, resources and templates, changed
//! while it serves, and the list changes subscribers hear about.

use std::sync::{Arc, RwLock};

use super::McpServer;
use super::prompt::PromptEntry;
use super::resource::{ResourceEntry, TemplateEntry};
use super::tool::ToolEntry;

/// What changed, for `subscriptions/listen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListChange {
    Tools,
    Prompts,
    Resources,
}

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
}
