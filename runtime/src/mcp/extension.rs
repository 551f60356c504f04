//! The high-level server's half of the extension seam: on top of the core's
//! [`ProtocolExtension`] (identifier, settings, routes), the tool calls, listen streams
//! and registries of an [`McpServer`] an extension takes part in.
//!
//! ```
//! use serde_json::{Map, Value};
//! use tern_mcp::mcp::{McpExtension, McpServer};
//! use tern_mcp::server::ProtocolExtension;
//!
//! /// An extension that only says it is there.
//! struct Beacon;
//!
//! impl ProtocolExtension for Beacon {
//!     fn id(&self) -> &'static str {
//!         "com.example/beacon"
//!     }
//! }
//!
//! // The high-level server's hooks all have defaults.
//! impl McpExtension for Beacon {}
//!
//! let mcp = McpServer::new("demo", "1.0.0").extension(Beacon);
//! # let _ = mcp.server()?;
//! # Ok::<(), tern_mcp::Error>(())
//! ```

use serde_json::{Map, Value};

use super::{McpServer, ToolHandoff};
use crate::jsonrpc::RpcError;
use crate::server::{ProtocolExtension, RequestContext};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{CallToolOutcome, SubscriptionFilter};

/// An extension an [`McpServer`] serves: a [`ProtocolExtension`] (declared and routed
/// as on any server) with the hooks the high-level server adds. Added with
/// [`McpServer::extension`]; every hook has a default that does nothing.
pub trait McpExtension: ProtocolExtension {
    /// Registers what the extension serves through an
    /// [`McpServer`]'s own tools, prompts and resources (the
    /// skills extension's files, an app's `ui://` page), once, when it is added with
    /// [`McpServer::extension`]. A low-level
    /// [`ServerBuilder`](crate::server::ServerBuilder) does not call it.
    fn register(&self, server: &McpServer) {
        let _ = server;
    }

    /// Takes a `tools/call` of a tool registered with a [`ToolSetting`](super::ToolSetting) of this
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

/// How an [`McpExtension`] answered a `tools/call` it took.
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

/// What an extension adds to one listen stream, for as long as it lives.
pub trait ListenFeed: Send {
    /// The members of the acknowledgement's `notifications` this feed accepted.
    fn accepted(&self) -> Map<String, Value>;

    /// The next notifications to send, as (method, params); `meta` is the stream's
    /// `_meta` (its subscription id), which each notification carries. Dropped and
    /// called again whenever another event comes first.
    fn next<'a>(&'a mut self, meta: &'a Value) -> BoxFuture<'a, Vec<(&'static str, Value)>>;
}
