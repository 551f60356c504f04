//! The server of the `hello_*` examples, as a user writes one: an `McpServer` with one
//! tool that needs the caller's name, asked for through a resolver. `requestState` is
//! sealed by default (a key made at start); nothing here turns that on.

use schemars::JsonSchema;
use serde::Deserialize;
use tern_mcp::mcp::{Elicit, McpServer, NoArgs, ToolError};

/// What should I call you?
#[derive(Clone, Deserialize, JsonSchema)]
pub(crate) struct Name {
    /// Your name.
    pub(crate) name: String,
}

/// The server: `greet` asks for a name, then greets.
pub(crate) fn server() -> McpServer {
    let mcp = McpServer::new("hello", "1.0.0");
    mcp.tool("greet")
        .description("Greets you, once it knows your name.")
        .resolve(|_: NoArgs, name: Elicit<Name>| async move {
            match name {
                Elicit::Accepted(n) => Ok(format!("Hello, {}!", n.name)),
                Elicit::Declined | Elicit::Cancelled => Err(ToolError::new("no name, no greeting")),
            }
        });
    mcp
}
