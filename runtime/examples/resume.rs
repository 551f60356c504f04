//! A distributed client: one process starts the call and keeps it as data (a
//! `PendingCall`, JSON on disk); another process answers its questions and finishes it.
//!
//! ```sh
//! cargo run -p tern-mcp --example resume                  # runs both phases, as two processes
//! cargo run -p tern-mcp --example resume -- start FILE    # phase 1: call, persist the PendingCall
//! cargo run -p tern-mcp --example resume -- finish FILE   # phase 2: answer, resume from FILE
//! ```
//!
//! The server seals its state under a shared key (`RequestStateSecurity::keys`), so a
//! retry from another process (or against another instance with the same key) verifies.
//! Never ship the demo key below: generate your own with `tern_mcp::seal::generate_secret_hex()`.

#[path = "support/seed.rs"]
mod seed;

use serde_json::json;
use tern_mcp::client::{Client, PendingCall, Step};
use tern_mcp::seal::{RequestStateSecurity, parse_secret};
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, ContentBlock, method};

const DEMO_KEY: &str = "8d1c9b3e2f6a4d70b5e19c83f2a6d4e07b1c5f9a3e8d2b6c4f0a1e7d3b9c5f2a";

type Error = Box<dyn std::error::Error>;

async fn connect(client: tern_mcp::client::ClientBuilder) -> Result<Client, Error> {
    let key = parse_secret(DEMO_KEY)?;
    let server = seed::provision_server()
        .seal(RequestStateSecurity::keys([key.as_slice()])?)
        .build()?;
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    Ok(client
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await?)
}

fn params() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("provision");
    params.arguments = json!({"name": "orders"}).as_object().map(Into::into);
    params
}

/// Phase 1: the call, stopped at its questions, on disk.
async fn start(file: &str) -> Result<(), Error> {
    // This process answers nothing itself, so it says what the other one will answer.
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}}))?;
    let client =
        connect(Client::builder("resume-start", "1.0.0").capabilities(capabilities)).await?;
    let Step::NeedsInput(pending) = client.start::<method::CallTool>(params()).await? else {
        return Err("the server did not ask for anything".into());
    };
    std::fs::write(file, serde_json::to_vec_pretty(&pending)?)?;
    println!(
        "[{}] saved round {} of {} with {} question(s) to {file}",
        std::process::id(),
        pending.round,
        pending.method,
        pending.input_requests.len()
    );
    Ok(())
}

/// Phase 2: a new process, a new client; the questions answered by its callback and
/// the call finished from the file.
async fn finish(file: &str) -> Result<(), Error> {
    let mut pending: PendingCall = serde_json::from_slice(&std::fs::read(file)?)?;
    let client = connect(
        Client::builder("resume-finish", "1.0.0").on_elicitation(|_ctx, _p| async {
            Ok(tern_mcp::ask::accept([("region", "eu-west-1")]))
        }),
    )
    .await?;
    loop {
        let answers = client.fulfil(Some(&pending.input_requests)).await?;
        match client.resume::<method::CallTool>(pending, answers).await? {
            Step::Done(result) => {
                for block in &result.content {
                    if let ContentBlock::Text(t) = block {
                        println!("[{}] {}", std::process::id(), t.text);
                    }
                }
                return Ok(());
            }
            Step::NeedsInput(next) => pending = next,
            _ => return Err("the server made the call a task".into()),
        }
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
