//! Interoperability with the Python SDK (PyPI `mcp==2.3.0`): tern's client against
//! that SDK's low-level server (`tests/interop/provision_server.py`) over stdio and
//! over Streamable HTTP, in both eras. Runs when `TERN_INTEROP_PYTHON` names a Python
//! with that package installed: `scripts/interop` prepares one and runs these, which are
//! `#[ignore]`d so a plain `cargo test` reports them as ignored rather than passed.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tern::client::{Client, ClientBuilder, EraMode};
use tern::transport::http::client::HttpClientTransport;
use tern::transport::stdio::ChildProcessTransport;
use tern::types::v2026_07_28::CallToolResult;
use tern_tests::{Asked, recording_client, text_of};
use tokio::io::AsyncBufReadExt;

fn python_server() -> Option<ChildProcessTransport> {
    let python = std::env::var("TERN_INTEROP_PYTHON").ok()?;
    let script = tern_tests::workspace_root().join("tests/interop/provision_server.py");
    let mut command = tokio::process::Command::new(python);
    command.arg(script);
    Some(ChildProcessTransport::spawn(command).unwrap())
}

/// The Python server on Streamable HTTP (uvicorn, sessions on), killed on drop.
struct PythonHttp {
    _child: tokio::process::Child,
    url: String,
}

async fn python_http_server() -> Option<PythonHttp> {
    let python = std::env::var("TERN_INTEROP_PYTHON").ok()?;
    let script = tern_tests::workspace_root().join("tests/interop/provision_server.py");
    // Port 0: the server binds, listens, then reports the port it got.
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .args(["--http", "0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the Python HTTP server reports its port")
        .unwrap()
        .unwrap();
    let url = line.strip_prefix("listening on ").unwrap().to_owned();
    // Ready when it answers a protocol request, not when a connect succeeds.
    let probe = HttpClientTransport::builder(&url).build().unwrap();
    let ready = tern_client(EraMode::Auto).negotiate(Arc::new(probe));
    tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .expect("the Python HTTP server answers")
        .unwrap();
    Some(PythonHttp { _child: child, url })
}

fn tern_client(mode: EraMode) -> ClientBuilder {
    recording_client(&Asked::default()).era(mode)
}

async fn provision_with(client: &Client) -> (String, String) {
    let result: CallToolResult = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    (client.protocol_version().to_owned(), text_of(&result))
}

async fn provision(mode: EraMode) -> Option<(String, String)> {
    let transport = python_server()?;
    let client = tern_client(mode).discover(transport).await.unwrap();
    Some(provision_with(&client).await)
}

async fn provision_over_http(mode: EraMode) -> Option<(String, String)> {
    let server = python_http_server().await?;
    let transport = HttpClientTransport::builder(&server.url).build().unwrap();
    let client = tern_client(mode)
        .negotiate(Arc::new(transport))
        .await
        .unwrap();
    Some(provision_with(&client).await)
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_discovers_2026_07_28_on_the_python_http_server_and_completes_the_flow() {
    let Some((version, text)) = provision_over_http(EraMode::Auto).await else {
        return;
    };
    assert_eq!(version, "2026-07-28");
    assert_eq!(text, "Provisioned 'orders' in eu-west-1 over 2026-07-28.");
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_holds_a_2025_11_25_session_with_the_python_http_server() {
    let Some((version, text)) = provision_over_http(EraMode::Session).await else {
        return;
    };
    assert_eq!(version, "2025-11-25");
    assert_eq!(text, "Provisioned 'orders' in eu-west-1 over 2025-11-25.");
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_discovers_2026_07_28_on_the_python_server_and_completes_the_flow() {
    let Some((version, text)) = provision(EraMode::Auto).await else {
        return;
    };
    assert_eq!(version, "2026-07-28");
    assert_eq!(text, "Provisioned 'orders' in eu-west-1 over 2026-07-28.");
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_holds_a_2025_11_25_session_with_the_python_server() {
    let Some((version, text)) = provision(EraMode::Session).await else {
        return;
    };
    assert_eq!(version, "2025-11-25");
    assert_eq!(text, "Provisioned 'orders' in eu-west-1 over 2025-11-25.");
}
