//! A distributed client: one process starts the call and persists `requestState` with
//! the answers; another process finishes it.
//!
//! ```sh
//! cargo run -p tern --example resume                  # runs both phases, as two processes
//! cargo run -p tern --example resume -- start FILE    # phase 1: call, answer, persist
//! cargo run -p tern --example resume -- finish FILE   # phase 2: retry from FILE
//! ```
//!
//! The server seals its state under a shared key (`RequestStateSecurity::keys`), so a
//! retry from another process (or against another instance with the same key) verifies.
//! Never ship the demo key below: generate your own with `tern::seal::generate_secret_hex()`.

#[path = "support/seed.rs"]
mod seed;

use serde_json::{Value, json};
use tern::client::Client;
use tern::seal::{RequestStateSecurity, parse_secret_hex};
use tern::transport::memory;
use tern::types::v2026_07_28::{CallToolRequestParams, ContentBlock, Outcome, method};

const DEMO_KEY: &str = "8d1c9b3e2f6a4d70b5e19c83f2a6d4e07b1c5f9a3e8d2b6c4f0a1e7d3b9c5f2a";

type Error = Box<dyn std::error::Error>;

async fn connect(client: tern::client::ClientBuilder) -> Result<Client, Error> {
    let key = parse_secret_hex(DEMO_KEY)?;
    let server = seed::provision_server()
        .seal(RequestStateSecurity::keys([key.as_slice()])?)
        .build()?;
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    Ok(client.connect(client_end))
}

fn params() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("provision");
    params.arguments = json!({"name": "orders"}).as_object().cloned();
    params
}

/// Phase 1: the call, the user's answers, and everything the retry needs, on disk.
async fn start(file: &str) -> Result<(), Error> {
    let client = connect(
        Client::builder("resume-start", "1.0.0")
            .on_elicitation(|_ctx, _p| async { Ok(tern::ask::accept([("region", "eu-west-1")])) }),
    )
    .await?;
    let Outcome::InputRequired(asked) = client.request::<method::CallTool>(params()).await? else {
        return Err("the server did not ask for anything".into());
    };
    let answers = client.fulfil(asked.input_requests.as_ref()).await?;
    let saved = json!({"requestState": asked.request_state, "inputResponses": answers});
    std::fs::write(file, serde_json::to_vec_pretty(&saved)?)?;
    println!(
        "[{}] saved requestState and {} answer(s) to {file}",
        std::process::id(),
        answers.len()
    );
    Ok(())
}

/// Phase 2: a new process, a new client, the same call finished from the file.
async fn finish(file: &str) -> Result<(), Error> {
    let saved: Value = serde_json::from_slice(&std::fs::read(file)?)?;
    let client = connect(Client::builder("resume-finish", "1.0.0")).await?;
    let mut retry = params();
    retry.request_state = saved["requestState"].as_str().map(str::to_owned);
    retry.input_responses = Some(serde_json::from_value(saved["inputResponses"].clone())?);
    match client.request::<method::CallTool>(retry).await? {
        Outcome::Complete(result) => {
            for block in &result.content {
                if let ContentBlock::Text(t) = block {
                    println!("[{}] {}", std::process::id(), t.text);
                }
            }
            Ok(())
        }
        Outcome::InputRequired(_) => Err("the server asked again".into()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["start", file] => start(file).await,
        ["finish", file] => finish(file).await,
        [] => {
            let file =
                std::env::temp_dir().join(format!("tern-resume-{}.json", std::process::id()));
            let file = file.to_string_lossy().into_owned();
            let me = std::env::current_exe()?;
            for phase in ["start", "finish"] {
                let status = std::process::Command::new(&me)
                    .args([phase, &file])
                    .status()?;
                if !status.success() {
                    return Err(format!("phase {phase} failed").into());
                }
            }
            let _ = std::fs::remove_file(&file);
            Ok(())
        }
        _ => Err("usage: resume [start FILE | finish FILE]".into()),
    }
}
