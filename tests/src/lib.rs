//! Cross-crate integration, conformance and interoperability tests for tern.
//!
//! The tests live in `tests/tests/it/` (one binary, a module per area); this library holds
//! the helpers and fixtures they share.

mod stepper;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tern_mcp::client::{Client, ClientBuilder};
use tern_mcp::types::v2026_07_28::{CallToolResult, ContentBlock};

pub use stepper::stepper;

/// The workspace root (the directory holding the virtual `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The executable of `package`'s target `name` of `kind` (`--bin`, `--example`), built
/// by cargo (or found up to date) in this workspace.
pub fn built(package: &str, kind: &str, name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "build",
            "-q",
            "-p",
            package,
            kind,
            name,
            "--message-format=json",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "building {name} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo names {name}'s executable"))
}

/// The `tern` command's executable, built once per test binary (see [`built`]).
pub fn tern_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| built("tern-mcp-cli", "--bin", "tern"))
}

/// The fetched schema folder, or a message saying how to fetch it.
pub fn schema_dir() -> Result<PathBuf, String> {
    let dir = workspace_root().join("schema");
    if dir.join("2026-07-28").join("schema.json").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "the schema is not fetched: run `schema/fetch` in {}",
            workspace_root().display()
        ))
    }
}

/// Binds `addr` (port 0 for any), prints `listening on http://ADDR/mcp` (flushed: a
/// parent reads it to learn the port), then serves `server` until SIGTERM or ctrl-c.
/// What the test servers in `src/bin` share.
pub async fn announce_and_serve(
    addr: &str,
    server: tern_mcp::server::Server,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write as _;
    let shutdown = tern_mcp::server::shutdown_signal();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on http://{}/mcp", listener.local_addr()?)?;
    stdout.flush()?;
    tern_mcp::http::HttpServer::new(server)
        .serve(listener, shutdown)
        .await?;
    Ok(())
}

/// The text of a tool result's first content block (panics on anything else).
pub fn text_of(result: &CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

/// The input keys an elicitation callback was called with, in order: `Some(key)` for a
/// 2026-07-28 input request, `None` for a 2025-11-25 server's own `elicitation/create`.
#[derive(Debug, Clone, Default)]
pub struct Asked(Arc<Mutex<Vec<Option<String>>>>);

impl Asked {
    /// Records a callback's call with `key`.
    pub fn record(&self, key: Option<String>) {
        if let Ok(mut keys) = self.0.lock() {
            keys.push(key);
        }
    }

    /// The keys so far.
    pub fn keys(&self) -> Vec<Option<String>> {
        self.0.lock().map(|k| k.clone()).unwrap_or_default()
    }

    /// The keys so far, forgetting them: what one run of a flow asked, when a test runs
    /// it several times over one recorder.
    pub fn take(&self) -> Vec<Option<String>> {
        self.0
            .lock()
            .map(|mut k| std::mem::take(&mut *k))
            .unwrap_or_default()
    }
}

/// A client that answers every elicitation the way the seed's client does
/// ([`seed::answer_region`]: `{"region": "eu-west-1"}`) and records each call's input key
/// in `asked`.
pub fn recording_client(asked: &Asked) -> ClientBuilder {
    let asked = asked.clone();
    Client::builder("test-client", "1.0").on_elicitation(move |ctx, _params| {
        asked.record(ctx.key.clone());
        async { Ok(seed::answer_region()) }
    })
}

/// Signals when dropped: a handler holding it has stopped, whether it returned or its
/// future was dropped (cancelled).
#[derive(Debug)]
pub struct Stopped(pub Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

pub mod fixtures;
pub mod notifier;
pub mod wire;

/// The seed's provision server and its answer, defined once for the examples and the
/// tests: `runtime/examples/support/seed.rs`, included here by path.
#[path = "../../runtime/examples/support/seed.rs"]
pub mod seed;

/// Sends `signal` (`-TERM`, `-KILL`) to process `pid` with kill(1).
pub fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill(1) runs");
    assert!(sent.success(), "kill {signal} {pid}");
}

/// A settings value (`HttpLimits`, `HttpTimeouts`, `ClientLimits`, `ServerLimits`) at its
/// defaults with `change` applied: what a test sets in one line. Name the type on the
/// closure's parameter (`|l: &mut HttpLimits| ...`).
pub fn tuned<T: Default>(change: impl FnOnce(&mut T)) -> T {
    let mut value = T::default();
    change(&mut value);
    value
}
