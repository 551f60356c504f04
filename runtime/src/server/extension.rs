//! The one seam an extension plugs in through, as the core does: its identifier and
//! settings under `capabilities.extensions`, and its methods routed by the same pipeline
//! (each a [`Request`](crate::types::rpc::Request) marker, generated from the
//! extension's schema or written by its author). The core knows no high-level server:
//! [`McpExtension`](crate::mcp::McpExtension) adds the hooks an
//! [`McpServer`](crate::mcp::McpServer) gives an extension, on top of this one.
//!
//! ```
//! use serde_json::{Map, Value};
//! use tern_mcp::server::{ProtocolExtension, Server};
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
//! let server = Server::builder("demo", "1.0.0").extension(Beacon).build()?;
//! # let _ = server;
//! # Ok::<(), tern_mcp::ConfigError>(())
//! ```

use serde_json::{Map, Value};

use super::ServerBuilder;

/// An extension a server serves. Declared once, on [`ServerBuilder::extension`] (or,
/// with the high-level server's hooks too, on
/// [`McpServer::extension`](crate::mcp::McpServer::extension)); every method but
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
}

impl ServerBuilder {
    /// Serves `extension`: its methods are routed, and it is declared under
    /// `capabilities.extensions` (added to capabilities given with
    /// [`capabilities`](Self::capabilities) too).
    pub fn extension(self, extension: impl ProtocolExtension) -> Self {
        let mut me = extension.routes(self);
        me.extensions.push((extension.id(), extension.settings()));
        me
    }
}
