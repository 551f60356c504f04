//! Driving the input-required loop yourself: inspect each round, refuse request types
//! you do not handle, apply your own wall-clock limit.
//!
//! ```sh
//! cargo run -p tern-mcp --example manual_loop
//! ```

#[path = "support/seed.rs"]
mod seed;

use std::time::Duration;

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, ContentBlock, InputRequest, InputResponse,
    InputResponses, Outcome, method,
};

/// This client answers elicitation only; anything else is refused.
fn fulfil(key: &str, request: &InputRequest) -> Result<InputResponse, String> {
    match request {
        InputRequest::Elicit(_) => {
            println!("  answering {key:?} with eu-west-1");
            Ok(InputResponse::Elicit(ask::accept([(
                "region",
                "eu-west-1",
            )])))
        }
        other => Err(format!(
            "this client cannot answer a {:?} request",
            other.method()
        )),
    }
}

async fn provision(
    client: &Client,
    name: &str,
) -> Result<CallToolResult, Box<dyn std::error::Error>> {
    let mut params = CallToolRequestParams::new("provision");
    params.arguments = json!({ "name": name }).as_object().map(Into::into);
    for round in 1.. {
        match client.request::<method::CallTool>(params.clone()).await? {
            Outcome::Complete(result) => return Ok(result),
            Outcome::InputRequired(asked) => {
                println!("round {round}: state {:?}", asked.request_state);
                let mut responses = InputResponses::new();
                for (key, request) in asked.input_requests.iter().flat_map(|r| r.iter()) {
                    // Audit point: log, inspect or refuse each request here.
                    responses.insert(key.clone(), fulfil(key, request)?)?;
                }
                // Same tool, same arguments; the answers and the state echoed.
                params.input_responses = Some(responses);
                params.request_state = asked.request_state;
            }
        }
    }
    Err("unreachable".into())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (client_end, server_end) = memory::pair();
    let server = seed::provision_server().build()?;
    tokio::spawn(async move { server.serve(server_end).await });
    // No callbacks: this client answers by hand, so it declares what it answers.
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}}))?;
    let client = Client::builder("manual-loop", "1.0.0")
        .capabilities(capabilities)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await?;

    // A wall-clock limit instead of a round count.
    let result =
        tokio::time::timeout(Duration::from_secs(30), provision(&client, "orders")).await??;
    for block in &result.content {
        if let ContentBlock::Text(t) = block {
            println!("{}", t.text);
        }
    }
    Ok(())
}
