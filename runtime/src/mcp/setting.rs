//! How a tool or a resource an [`McpServer`](super::McpServer) lists takes part in an
//! extension: the setting a tool carries for it, and the gate that shows or hides an
//! item, and its `_meta` members, by what each request's client declared.

use std::any::Any;
use std::sync::Arc;

use serde_json::{Map, Value};

/// How a tool takes part in an extension: set with
/// [`ToolBuilder::extension`](crate::mcp::ToolBuilder::extension), read back by the extension
/// with [`ToolHandoff::setting`](super::ToolHandoff::setting).
pub trait ToolSetting: Any + Send + Sync {
    /// The identifier of the extension this setting is for.
    const EXTENSION: &'static str;

    /// Members the setting adds to the tool's `_meta` as listed, shown only to a client
    /// whose request declares the extension (an app's `ui`). None by default.
    fn listed_meta(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Whether a client whose request does not declare the extension sees the tool
    /// listed at all (an app-only tool is not). Yes by default.
    fn listed_without_extension(&self) -> bool {
        true
    }

    /// Whether the settings a client declared for the extension say it can take what
    /// the setting lists (MCP Apps: its `mimeTypes` name the page type). Any settings
    /// by default.
    fn declared_by(settings: &Map<String, Value>) -> bool
    where
        Self: Sized,
    {
        let _ = settings;
        true
    }
}

/// How an item an `McpServer` lists depends on one extension its client may declare:
/// `_meta` members shown only to a client that declares it, and whether a client that
/// does not sees the item at all.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub(crate) extension: &'static str,
    /// Whether a client's settings for the extension count as declaring it.
    pub(crate) declared_by: fn(&Map<String, Value>) -> bool,
    pub(crate) meta: Map<String, Value>,
    pub(crate) listed_without: bool,
}

impl Gate {
    /// The gate of a tool's `setting`.
    pub(crate) fn of<S: ToolSetting>(setting: &S) -> Self {
        Self {
            extension: S::EXTENSION,
            declared_by: S::declared_by,
            meta: setting.listed_meta(),
            listed_without: setting.listed_without_extension(),
        }
    }

    /// Applies `gates` for a client with `caps` to an item's `_meta`: `false` when the
    /// item is not listed to it.
    pub(crate) fn apply(
        gates: &[Gate],
        caps: &crate::types::v2026_07_28::ClientCapabilities,
        meta: &mut Option<crate::types::v2026_07_28::MetaObject>,
    ) -> bool {
        for gate in gates {
            let declared = caps
                .extensions
                .as_ref()
                .and_then(|e| e.get(gate.extension))
                .is_some_and(gate.declared_by);
            if !declared && !gate.listed_without {
                return false;
            }
            if declared && !gate.meta.is_empty() {
                let meta =
                    meta.get_or_insert_with(|| crate::types::v2026_07_28::MetaObject(Map::new()));
                meta.0.extend(gate.meta.clone());
            }
        }
        true
    }
}

/// A tool's settings, one per extension.
pub(crate) type ToolSettings = Vec<(&'static str, Arc<dyn Any + Send + Sync>)>;
