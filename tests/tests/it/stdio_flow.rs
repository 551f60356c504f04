//! The tern client and server over stdio: the provision example spawned as a child
//! process, newline-delimited JSON on its stdin and stdout, its stderr kept apart; and
//! era discovery against it and against a child that knows only 2025-11-25.

use std::time::Duration;

use serde_json::json;
use tern_mcp::ask;

use tern_mcp::client::Client;
use tern_mcp::server::Server;
use tern_mcp::transport::stdio::{ChildProcessTransport, LineTransport, StderrSink};
use tern_mcp::types::v2026_07_28::{CallToolResult, method};
use tern_tests::seed;
use tern_tests::wire::{RawPeer, meta};
use tern_tests::{Asked, recording_client, text_of};
use tokio::process::Command;

fn provision_server_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_provision"));
    command.args(["serve", "--stdio"]);
    command
}

#[tokio::test]
async fn the_full_mrtr_flow_runs_over_stdio_with_a_spawned_server() {
    let (tx, mut stderr) = tokio::sync::mpsc::unbounded_channel();
    let child = ChildProcessTransport::spawn_with_stderr(
        provision_server_command(),
        StderrSink::Channel(tx),
    )
    .unwrap();
    let client = Client::builder("test-client", "1.0")
        .on_elicitation(|_ctx, _params| async { Ok(seed::answer_region()) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(child)
        .await
        .unwrap();
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "Provisioned 'orders' in eu-west-1.");

    // The server's narration went to stderr, which reached our sink, not the protocol.
    let mut lines = Vec::new();
    while lines.len() < 2 {
        let line = tokio::time::timeout(Duration::from_secs(5), stderr.recv())
            .await
            .expect("no stderr line")
            .expect("stderr closed");
        lines.push(line);
    }
    assert!(lines[0].starts_with("server: no region yet"), "{lines:?}");
    assert!(
        lines[1].starts_with("server: got region \"eu-west-1\""),
        "{lines:?}"
    );
}

#[tokio::test]
async fn the_call_command_spawns_a_stdio_server_and_provisions() {
    let bin = env!("CARGO_BIN_EXE_provision");
    let out = Command::new(bin)
        .args(["call", &format!("{bin} serve --stdio")])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "Provisioned 'orders' in eu-west-1."),
        "{stdout}"
    );
}

#[tokio::test]
async fn discovery_over_stdio_finds_2026_07_28_on_a_tern_child() {
    let asked = Asked::default();
    let client = recording_client(&asked)
        .connect(ChildProcessTransport::spawn(provision_server_command()).unwrap())
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "Provisioned 'orders' in eu-west-1.");
    assert_eq!(asked.keys(), vec![Some("region".to_owned())]);
}

#[tokio::test]
async fn discovery_over_stdio_opens_a_session_with_a_legacy_only_child() {
    let (tx, mut stderr) = tokio::sync::mpsc::unbounded_channel();
    let child = ChildProcessTransport::spawn_with_stderr(
        Command::new(env!("CARGO_BIN_EXE_legacy_server")),
        StderrSink::Channel(tx),
    )
    .unwrap();
    let asked = Asked::default();
    let client = recording_client(&asked).connect(child).await.unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "legacy ok: region=eu-west-1");
    // The server's elicitation/create reached the callback that answers input requests.
    assert_eq!(asked.keys(), vec![None]);
    let mut seen = Vec::new();
    while seen.len() < 5 {
        let line = tokio::time::timeout(Duration::from_secs(5), stderr.recv())
            .await
            .expect("no stderr line")
            .expect("stderr closed");
        seen.push(line);
    }
    assert_eq!(
        seen,
        [
            "legacy server got: server/discover",
            "legacy server got: initialize",
            "legacy server got: notifications/initialized",
            "legacy server got: tools/call",
            "legacy server got: response",
        ]
    );
}

#[tokio::test]
async fn a_stdio_server_answers_one_line_per_message_and_skips_blank_lines() {
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|_ctx, _p| async {
            Ok(CallToolResult::new(vec![ask::text("ok")]).into())
        })
        .build()
        .unwrap();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        server
            .serve(LineTransport::new(server_read, server_write))
            .await
    });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"_meta": meta(json!({})), "name": "t", "arguments": {}}});
    client_write
        .write_all(format!("\n\r\n{request}\r\n").as_bytes())
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let line = lines.next_line().await.unwrap().unwrap();
    let response: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["content"][0]["text"], "ok");
}

#[tokio::test]
async fn a_raw_peer_over_a_child_gets_parse_errors_for_garbage() {
    let child = ChildProcessTransport::spawn(provision_server_command()).unwrap();
    let mut peer = RawPeer::new(child);
    peer.send(json!("not an object")).await;
    let answer = peer.recv().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

#[tokio::test]
async fn dropping_the_client_ends_the_child_process() {
    let child = ChildProcessTransport::spawn(provision_server_command()).unwrap();
    let pid = child.id().unwrap();
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(child)
        .await
        .unwrap();
    drop(client);
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while proc_dir.exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the child {pid} is still running"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The provision server over stdio with its stdin and stdout piped to the test.
fn piped_provision_server() -> tokio::process::Child {
    provision_server_command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn tools_list_line(id: i64) -> String {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
        "params": {"_meta": meta(json!({}))}});
    format!("{request}\n")
}

#[tokio::test]
async fn a_200_mb_line_is_skipped_with_one_error_and_the_next_request_is_answered() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = piped_provision_server();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let writing = tokio::spawn(async move {
        // 200 MB of one line, written in 1 MiB pieces, then an ordinary request.
        let piece = vec![b'x'; 1 << 20];
        for _ in 0..200 {
            stdin.write_all(&piece).await.unwrap();
        }
        stdin.write_all(b"\n").await.unwrap();
        stdin
            .write_all(tools_list_line(2).as_bytes())
            .await
            .unwrap();
        stdin
    });
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["error"]["code"], -32600, "{first}");
    assert!(first["id"].is_null());
    assert!(
        first["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skipped"),
        "{first}"
    );
    let second: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], 2, "{second}");
    assert!(second["result"]["tools"].is_array(), "{second}");
    drop(writing.await.unwrap());
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn every_request_before_the_end_of_input_is_answered() {
    // `printf 'req1\nreq2\n...' | server`: the input ends at once, the answers still come.
    let mut input = String::new();
    for id in 1..=20 {
        input.push_str(&tools_list_line(id));
    }
    for _ in 0..5 {
        let mut child = piped_provision_server();
        let mut stdin = child.stdin.take().unwrap();
        use tokio::io::AsyncWriteExt;
        stdin.write_all(input.as_bytes()).await.unwrap();
        drop(stdin);
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        let mut ids: Vec<i64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=20).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn a_message_over_the_json_limits_is_refused_to_its_own_id_over_stdio() {
    let child = ChildProcessTransport::spawn(provision_server_command()).unwrap();
    let mut peer = RawPeer::new(child);
    let answers: serde_json::Map<String, serde_json::Value> = (0..100_000)
        .map(|i| (format!("q{i}"), json!({"action": "accept"})))
        .collect();
    let params = json!({
        "name": "provision", "arguments": {"name": "x"},
        "inputResponses": answers, "requestState": "s", "_meta": meta(json!({})),
    });
    // The id comes last, after 2 MB of answers: the scan still finds it.
    let text =
        format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{params},"id":"fat-1"}}"#);
    peer.send_text(&text).await;
    let refused = tokio::time::timeout(Duration::from_secs(10), peer.recv())
        .await
        .expect("no answer to the refused message");
    assert_eq!(refused["id"], "fat-1", "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("more than 1000 inputResponses"),
        "{message}"
    );

    // The connection goes on serving.
    let listed = peer
        .call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                     "params": {"_meta": meta(json!({}))}}))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
}
