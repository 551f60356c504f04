//! The one seam an extension plugs in through, as the core does: its identifier and
//! settings under `capabilities.extensions`, its methods routed by the same pipeline
//! (each a [`Request`](crate::types::rpc::Request) marker, generated from the
//! extension's schema or written by its author), and, on an [`McpServer`], the tool
//! calls and listen streams it takes part in.
//!
//! ```
//! use serde_json::{Map, Value};
//! use tern_mcp::server::{ProtocolExtension, ServerBuilder};
//! use tern_mcp::mcp::McpServer;
//!
//! /// An extension that only says it is there.
//! struct Beacon;
//!
//! impl ProtocolExtension for Beacon {
//!     fn id(&self) -> &'static str {
//!         "com.example/beacon"
//!     }
//!     fn settings(&self) -> Map<String, Value> {
//!         let mut settings = Map::new();
//!         settings.insert("interval".into(), 30.into());
//!         settings
//!     }
//! }
//!
//! let mcp = McpServer::new("demo", "1.0.0").extension(Beacon);
//! # let _ = mcp.server()?;
//! # Ok::<(), tern_mcp::Error>(())
//! ```
//!
//! [`McpServer`]: crate::mcp::McpServer

use std::any::Any;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{RequestContext, ServerBuilder};
use crate::jsonrpc::RpcError;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{CallToolOutcome, ServerCapabilities, SubscriptionFilter};

use super::mcp::ToolHandoff;

/// An extension a server serves. Declared once, on [`ServerBuilder::extension`] or
/// [`McpServer::extension`](crate::mcp::McpServer::extension); every method but
/// [`id`](Self::id) has a default that does nothing.
pub trait ProtocolExtension: Send + Sync + 'static {
    /// The identifier declared under `capabilities.extensions`.
    fn id(&self) -> &'static str;

    /// The settings declared under the identifier (an empty object by default).
    fn settings(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Routes the extension's methods, each with [`ServerBuilder::handle`].
    fn routes(&self, server: ServerBuilder) -> ServerBuilder {
        server
    }

    /// Registers what the extension serves through an
    /// [`McpServer`](crate::mcp::McpServer)'s own tools, prompts and resources (the
    /// skills extension's files, an app's `ui://` page), once, when it is added with
    /// [`McpServer::extension`](crate::mcp::McpServer::extension). A low-level
    /// [`ServerBuilder`] does not call it.
    fn register(&self, server: &crate::mcp::McpServer) {
        let _ = server;
    }

    /// Takes a `tools/call` of a tool registered with a [`ToolSetting`] of this
    /// extension ([`ToolBuilder::extension`](crate::mcp::ToolBuilder::extension)), after the
    /// arguments were checked. The default runs the tool as if the extension were not
    /// there.
    fn call_tool(&self, call: ToolHandoff) -> BoxFuture<'static, Result<ToolReply, RpcError>> {
        Box::pin(async move { call.run().await.map(ToolReply::Result) })
    }

    /// What the extension adds to a `subscriptions/listen` stream that asked with
    /// `filter`: `None` when the filter asks nothing of it. An error refuses the stream.
    fn listen(
        &self,
        ctx: &RequestContext,
        filter: &SubscriptionFilter,
    ) -> BoxFuture<'static, Result<Option<Box<dyn ListenFeed>>, RpcError>> {
        let _ = (ctx, filter);
        Box::pin(async { Ok(None) })
    }
}

/// How a [`ProtocolExtension`] answered a `tools/call` it took.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "moved once per call an extension takes; a box would allocate on each"
)]
pub enum ToolReply {
    /// The tool's result (complete or input-required).
    Result(CallToolOutcome),
    /// A result of the extension's own in place of the tool's (for the tasks
    /// extension, the task it made of the call), sent as written.
    Instead(Box<serde_json::value::RawValue>),
}

/// How a tool takes part in an extension: set with
/// [`ToolBuilder::extension`](crate::mcp::ToolBuilder::extension), read back by the extension
/// with [`ToolHandoff::setting`].
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

/// What an extension adds to one listen stream, for as long as it lives.
pub trait ListenFeed: Send {
    /// The members of the acknowledgement's `notifications` this feed accepted.
    fn accepted(&self) -> Map<String, Value>;

    /// The next notifications to send, as (method, params); `meta` is the stream's
    /// `_meta` (its subscription id), which each notification carries. Dropped and
    /// called again whenever another event comes first.
    fn next<'a>(&'a mut self, meta: &'a Value) -> BoxFuture<'a, Vec<(&'static str, Value)>>;
}

/// Declares `extensions` under `capabilities.extensions`, keeping any declared there
/// already.
pub(crate) fn declare(
    extensions: &[Arc<dyn ProtocolExtension>],
    capabilities: &mut ServerCapabilities,
) {
    if extensions.is_empty() {
        return;
    }
    let declared = capabilities.extensions.get_or_insert_with(Default::default);
    for extension in extensions {
        declared
            .entry(extension.id().to_owned())
            .or_insert_with(|| extension.settings());
    }
}
