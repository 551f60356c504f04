//! The front door as a new user meets it (#60): `tern proxy --config` reads its file up
//! to a bound on what is read, whatever the file's metadata says (`/dev/zero`, which
//! says it holds nothing, is refused, never read until memory runs out); a stdio server
//! that prints log lines instead of JSON-RPC (one started without `--stdio`) ends
//! discovery at the client's discovery timeout, and `tern tools` with an error that
//! says what went wrong, exiting non-zero; and every request over stdio is under the
//! client's deadline (60 s, pushed back only by progress), the server told it was
//! cancelled.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tern_mcp::client::{Client, ClientLimits, EraMode};
use tern_mcp::transport::memory;
use tern_mcp::transport::stdio::ChildProcessTransport;
use tern_mcp::types::v2026_07_28::method::ListTools;
use tern_tests::wire::RawPeer;
use tokio::process::Command;

/// A server that prints log lines on its stdout and never a JSON-RPC message, as a
/// server started for HTTP does.
const LOGS_ON_STDOUT: &str = "while true; do echo 'INFO listening on port 3034'; sleep 0.1; done";

/// `tern args`, stdin closed, given at most `limit`: its exit code, stderr, and how
/// long it ran. `None` for the code when it had to be killed.
async fn tern(args: &[&str], limit: Duration) -> (Option<i32>, String, Duration) {
    let bin = tokio::task::spawn_blocking(tern_tests::tern_bin)
        .await
        .unwrap();
    let started = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(out) => {
            let out = out.unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            (out.status.code(), stderr, started.elapsed())
        }
        Err(_) => (None, String::new(), started.elapsed()),
    }
}

#[tokio::test]
async fn a_proxy_config_that_never_ends_is_refused_at_its_bound() {
    let (code, stderr, took) = tern(
        &["proxy", "--config", "/dev/zero", "--listen", "127.0.0.1:0"],
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(code, Some(2), "a usage error, in {took:?}: {stderr}");
    assert!(
        stderr.contains("/dev/zero: more than 1048576 bytes") && stderr.contains("at most 1 MiB"),
        "{stderr}"
    );
}

#[tokio::test]
async fn tern_tools_on_a_server_printing_log_lines_says_so_and_exits() {
    let target = format!("sh -c \"{LOGS_ON_STDOUT}\"");
    // Discovery's probe and `initialize` have 10 s each; then the error.
    let (code, stderr, took) = tern(&["tools", &target], Duration::from_secs(60)).await;
    assert_eq!(code, Some(3), "a failure, in {took:?}: {stderr}");
    assert!(
        stderr.contains("no answer to initialize within 10 s"),
        "{stderr}"
    );
    assert!(
        stderr.contains("that are not JSON-RPC")
            && stderr.contains("INFO listening on port 3034")
            && stderr.contains("is it started for stdio?"),
        "{stderr}"
    );
}

#[tokio::test]
async fn discovery_over_stdio_ends_at_the_discovery_timeout() {
    let mut command = Command::new("sh");
    command.args(["-c", LOGS_ON_STDOUT]);
    let transport = ChildProcessTransport::spawn(command).unwrap();
    let limits =
        tern_tests::tuned(|l: &mut ClientLimits| l.discovery_timeout = Duration::from_millis(500));
    let connecting = Client::builder("t", "1").limits(limits).connect(transport);
    // The probe's half second, then `initialize`'s: never the hang it was.
    let failed = tokio::time::timeout(Duration::from_secs(30), connecting)
        .await
        .expect("discovery ends")
        .unwrap_err();
    assert!(
        failed
            .to_string()
            .contains("no answer to initialize within 0.5 s"),
        "{failed}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_a_message_transport_never_answers_fails_at_the_deadline() {
    let (client_end, server_end) = memory::pair();
    let mut server = RawPeer::new(server_end);
    let client = Client::builder("t", "1")
        .era(EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    let listing = tokio::spawn(async move { client.list_all::<ListTools>().await });
    let request = server.recv().await;
    assert_eq!(request["method"], "tools/list");
    let failed = tokio::time::timeout(Duration::from_secs(3600), listing)
        .await
        .expect("the request ends")
        .unwrap()
        .unwrap_err();
    assert_eq!(started.elapsed().as_secs(), 60, "{failed}");
    assert!(
        failed
            .to_string()
            .contains("no answer to tools/list within 60 s"),
        "{failed}"
    );
    let cancelled = server.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}
