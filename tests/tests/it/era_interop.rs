//! Interoperability with the Python SDK (PyPI `mcp==2.3.0`): tern's client against
//! that SDK's low-level server (`tests/interop/provision_server.py`) over stdio and
//! over Streamable HTTP, in both eras; and against its `MCPServer` catalog
//! (`catalog_server.py`): lists, `subscriptions/listen`, the response cache. Runs when `TERN_INTEROP_PYTHON` names a Python
//! with that package installed: `scripts/interop` prepares one and runs these, which are
//! `#[ignore]`d so a plain `cargo test` reports them as ignored rather than passed.

use std::sync::Arc;
use std::time::Duration;
use tern_mcp::types::v2026_07_28::method::ListTools;

use serde_json::json;
use tern_mcp::client::Notice;
use tern_mcp::client::{Client, ClientBuilder, EraMode};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::stdio::ChildProcessTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, CallToolResult, SubscriptionFilter, method,
};
use tern_tests::{Asked, recording_client, text_of};
use tokio::io::AsyncBufReadExt;

fn python_server(script: &str) -> Option<ChildProcessTransport> {
    let python = std::env::var("TERN_INTEROP_PYTHON").ok()?;
    let script = tern_tests::workspace_root()
        .join("tests/interop")
        .join(script);
    let mut command = tokio::process::Command::new(python);
    command.arg(script);
    Some(ChildProcessTransport::spawn(command).unwrap())
}

/// The Python server on Streamable HTTP (uvicorn, sessions on), killed on drop.
pub(crate) struct PythonHttp {
    _child: tokio::process::Child,
    pub(crate) url: String,
}

async fn python_http_server(script: &str) -> Option<PythonHttp> {
    python_http_server_with(script, &[]).await
}

/// `script` served over HTTP with `args` after its port, once it answers; `None` unless
/// `TERN_INTEROP_PYTHON` names a Python with the SDK.
pub(crate) async fn python_http_server_with(script: &str, args: &[&str]) -> Option<PythonHttp> {
    let python = std::env::var("TERN_INTEROP_PYTHON").ok()?;
    let script = tern_tests::workspace_root()
        .join("tests/interop")
        .join(script);
    // Port 0: the server binds, listens, then reports the port it got.
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .args(["--http", "0"])
        .args(args)
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
    let ready = tern_client(EraMode::Auto).connect(Arc::new(probe));
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
    let transport = python_server("provision_server.py")?;
    let client = tern_client(mode).connect(transport).await.unwrap();
    Some(provision_with(&client).await)
}

async fn provision_over_http(mode: EraMode) -> Option<(String, String)> {
    let server = python_http_server("provision_server.py").await?;
    let transport = HttpClientTransport::builder(&server.url).build().unwrap();
    let client = tern_client(mode)
        .connect(Arc::new(transport))
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

/// What tern's client hears from the Python notifier in a session: the call's progress
/// (1..3) and its log entry (on the call's stream over HTTP, on the connection over
/// stdio: either way it arrives), and the update of the one resource it listens to.
async fn hears_the_python_notifier(client: &Client) {
    assert_eq!(client.protocol_version(), "2025-11-25");
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec!["note://a".into()]);
    let mut listener = client.listen(filter).await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    client
        .request_with_notices::<method::CallTool>(CallToolRequestParams::new("report"), tx)
        .await
        .unwrap();
    let mut progress = Vec::new();
    let mut logs = Vec::new();
    while let Some(notice) = rx.recv().await {
        match notice {
            Notice::Progress(p) => progress.push(p.progress.as_f64().unwrap()),
            Notice::Log(l) => logs.push(l.data),
            _ => {}
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    for uri in ["note://b", "note://a"] {
        client
            .call_tool("touch", json!({"uri": uri}))
            .await
            .unwrap();
    }
    let mut updates = Vec::new();
    while updates.is_empty() {
        let notice = tokio::time::timeout(Duration::from_secs(10), listener.next())
            .await
            .expect("the update within 10 s")
            .expect("the listener is open");
        match notice {
            Notice::ResourceUpdated(uri) => updates.push(uri),
            Notice::Log(l) => logs.push(l.data),
            _ => {}
        }
    }
    assert_eq!(updates, ["note://a"]);
    assert_eq!(logs, [json!("python info line")]);
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_hears_progress_logs_and_updates_from_the_python_http_server_in_a_session() {
    let Some(server) = python_http_server("session_server.py").await else {
        return;
    };
    let transport = HttpClientTransport::builder(&server.url).build().unwrap();
    let client = tern_client(EraMode::Session)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    hears_the_python_notifier(&client).await;
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_hears_progress_logs_and_updates_from_the_python_stdio_server_in_a_session() {
    let Some(transport) = python_server("session_server.py") else {
        return;
    };
    let client = tern_client(EraMode::Session)
        .connect(transport)
        .await
        .unwrap();
    hears_the_python_notifier(&client).await;
}

/// What `lists_served` says: the `tools/list` requests that reached the Python server.
async fn lists_served(client: &Client) -> String {
    text_of(&client.call_tool("lists_served", json!({})).await.unwrap())
}

#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn tern_lists_listens_and_caches_against_the_python_http_server() {
    let Some(server) = python_http_server("catalog_server.py").await else {
        return;
    };
    let transport = HttpClientTransport::builder(&server.url).build().unwrap();
    let client = tern_client(EraMode::Auto)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    let mut listener = client.listen(filter).await.unwrap();

    let names = |tools: Vec<tern_mcp::types::v2026_07_28::Tool>| {
        let mut names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
        names.sort();
        names
    };
    let first = names(client.list_all::<ListTools>().await.unwrap());
    assert_eq!(first, ["add_tool", "lists_served"]);
    // Python's cache hint (a minute, private) lets the second come from tern's cache.
    assert_eq!(names(client.list_all::<ListTools>().await.unwrap()), first);
    assert_eq!(lists_served(&client).await, "1");

    client
        .call_tool("add_tool", json!({"name": "fresh"}))
        .await
        .unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(30), listener.next())
        .await
        .expect("the Python server says its list changed");
    assert_eq!(heard, Some(Notice::ToolsChanged));
    // The change dropped the cached list: this one is fetched, and has the new tool.
    assert_eq!(
        names(client.list_all::<ListTools>().await.unwrap()),
        ["add_tool", "fresh", "lists_served"]
    );
    assert_eq!(lists_served(&client).await, "2");
}
