//! The provision tool written with a resolver: the tool declares `Elicit<Region>` and
//! tern asks, seals the answer into the request state, retries and runs the body once.
//!
//! ```sh
//! cargo run -p tern-mcp --example provision_resolver
//! ```

#[path = "support/provision_mcp.rs"]
mod provision_mcp;

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{ContentBlock, ElicitRequestParams};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcp = provision_mcp::server();
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
