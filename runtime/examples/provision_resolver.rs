//! The provision tool written with a resolver: the tool declares `Elicit<Region>` and
//! tern asks, seals the answer into the request state, retries and runs the body once.
//!
//! ```sh
//! cargo run -p tern-mcp --example provision_resolver
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::mcp::{Elicit, McpServer, ToolError};
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{ContentBlock, ElicitRequestParams};

#[derive(Deserialize, JsonSchema)]
struct ProvisionArgs {
    /// The database to create.
    name: String,
}

/// Which region should the database live in?
#[derive(Clone, Deserialize, JsonSchema)]
struct Region {
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

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcp = McpServer::new("Provisioner", "1.0.0");
    mcp.tool("provision")
        .description("Provision a database. Asks which region to put it in.")
        .resolve(provision);

    let (client_end, server_end) = memory::pair();
    let server = mcp.server()?;
    tokio::spawn(async move { server.serve(server_end).await });

    let client = Client::builder("provision-resolver-example", "1.0.0")
        .on_elicitation(|ctx, params| async move {
            if let ElicitRequestParams::Form(form) = &params {
                println!(
                    "client: {:?} asks {:?}; answering eu-west-1",
                    ctx.key.unwrap_or_default(),
                    form.message
                );
            }
            Ok(ask::accept([("region", "eu-west-1")]))
        })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await?;
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await?;
    for block in &result.content {
        if let ContentBlock::Text(t) = block {
            println!("{}", t.text);
        }
    }
    Ok(())
}
