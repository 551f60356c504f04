//! The provision tool as the README writes it: an `McpServer` whose tool declares
//! `Elicit<Region>`; tern asks, seals the answer into the request state, retries and
//! runs the body once. Shared by the `provision_resolver` example and the `cost` bench
//! driver, so the benchmark measures the code the README shows.

use schemars::JsonSchema;
use serde::Deserialize;
use tern_mcp::mcp::{Elicit, McpServer, ToolError};

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ProvisionArgs {
    /// The database to create.
    name: String,
}

/// Which region should the database live in?
#[derive(Clone, Deserialize, JsonSchema)]
pub(crate) struct Region {
    /// A cloud region, such as eu-west-1.
    region: String,
}

async fn provision(args: ProvisionArgs, region: Elicit<Region>) -> Result<String, ToolError> {
    match region {
        Elicit::Accepted(r) => Ok(format!("Provisioned '{}' in {}.", args.name, r.region)),
        Elicit::Declined | Elicit::Cancelled => {
            Err(ToolError::new("no region chosen: nothing provisioned"))
        }
    }
}

/// The server with its one tool.
pub(crate) fn server() -> McpServer {
    let mcp = McpServer::new("Provisioner", "1.0.0");
    mcp.tool("provision")
        .description("Provision a database. Asks which region to put it in.")
        .resolve(provision);
    mcp
}
