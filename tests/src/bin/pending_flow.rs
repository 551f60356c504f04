//! One leg of a flow kept as data, for the test of `PendingCall`: each run is its own
//! process and client, and what passes between them is the JSON in FILE.
//!
//! ```sh
//! pending_flow start URL FILE   # calls `deploy`, writes the PendingCall to FILE
//! pending_flow step URL FILE    # answers FILE's questions, resumes; writes the next
//!                               # PendingCall to FILE, or prints `done: <text>`
//! ```

use std::sync::Arc;

use serde_json::json;
use tern_mcp::client::{Client, EraMode, PendingCall, Step};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, ContentBlock, ElicitValue, InputResponse,
    InputResponses, method,
};

type Failure = Box<dyn std::error::Error>;

async fn client(url: &str) -> Result<Client, Failure> {
    let transport = HttpClientTransport::builder(url).build()?;
    // No callbacks here (the answers are given as data), so the client says what it
    // will answer itself.
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}}))?;
    Ok(Client::builder("pending-flow", "1")
        .era(EraMode::Stateless)
        .capabilities(capabilities)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap())
}

/// The user's answers: a region for `region`, yes to anything else.
fn answers(pending: &PendingCall) -> Result<InputResponses, Failure> {
    let mut out = InputResponses::new();
    for key in pending.input_requests.keys() {
        let answer = match key.as_str() {
            "region" => tern_mcp::ask::accept([("region", "eu-north")]),
            other => tern_mcp::ask::accept([(other, ElicitValue::Boolean(true))]),
        };
        out.insert(key.clone(), InputResponse::Elicit(answer))?;
    }
    Ok(out)
}

fn save(step: Step<CallToolResult>, file: &str) -> Result<(), Failure> {
    match step {
        Step::NeedsInput(pending) => {
            std::fs::write(file, serde_json::to_vec(&pending)?)?;
            println!("pending round {}", pending.round);
        }
        Step::Done(result) => {
            let text = result.content.iter().find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            });
            println!("done: {}", text.unwrap_or_default());
        }
        other => return Err(format!("unexpected step {other:?}").into()),
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [phase, url, file] = args.as_slice() else {
        return Err("usage: pending_flow start|step URL FILE".into());
    };
    let client = client(url).await?;
    let step = match phase.as_str() {
        "start" => {
            let mut params = CallToolRequestParams::new("deploy");
            params.arguments = json!({"service": "orders"}).as_object().map(Into::into);
            client.start::<method::CallTool>(params).await?
        }
        "step" => {
            let pending: PendingCall = serde_json::from_slice(&std::fs::read(file)?)?;
            let answers = answers(&pending)?;
            client.resume::<method::CallTool>(pending, answers).await?
        }
        other => return Err(format!("unknown phase {other}").into()),
    };
    save(step, file)
}
