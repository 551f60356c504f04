//! Interoperability with the Python SDK (PyPI `mcp==2.3.0`): tern's client against
//! that SDK's low-level server (`tests/interop/provision_server.py`) over stdio, in
//! both eras. Runs when `TERN_INTEROP_PYTHON` names a Python with that package
//! installed (`scripts/interop` prepares one); skipped otherwise.

use serde_json::json;
use tern::ask;
use tern::client::{Client, EraMode};
use tern::transport::stdio::ChildProcessTransport;
use tern::types::v2026_07_28::ContentBlock;

fn python_server() -> Option<ChildProcessTransport> {
    let python = std::env::var("TERN_INTEROP_PYTHON").ok()?;
    let script = tern_tests::workspace_root().join("tests/interop/provision_server.py");
    let mut command = tokio::process::Command::new(python);
    command.arg(script);
    Some(ChildProcessTransport::spawn(command).unwrap())
}

async fn provision(mode: EraMode) -> Option<(String, String)> {
    let transport = python_server()?;
    let client = Client::builder("tern-interop", "1.0")
        .on_elicitation(|_ctx, _params| async { Ok(ask::accept([("region", "eu-west-1")])) })
        .era(mode)
        .discover(transport)
        .await
        .unwrap();
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    let ContentBlock::Text(text) = &result.content[0] else {
        panic!("not text: {result:?}")
    };
    Some((client.protocol_version().to_owned(), text.text.clone()))
}

#[tokio::test]
async fn tern_discovers_2026_07_28_on_the_python_server_and_completes_the_flow() {
    let Some((version, text)) = provision(EraMode::Auto).await else {
        return;
    };
    assert_eq!(version, "2026-07-28");
    assert_eq!(text, "Provisioned 'orders' in eu-west-1 over 2026-07-28.");
}

#[tokio::test]
async fn tern_holds_a_2025_11_25_session_with_the_python_server() {
    let Some((version, text)) = provision(EraMode::Legacy).await else {
        return;
    };
    assert_eq!(version, "2025-11-25");
    assert_eq!(text, "Provisioned 'orders' in eu-west-1 over 2025-11-25.");
}
