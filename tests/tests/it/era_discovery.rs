//! Era discovery over the in-memory transport: the client probes with
//! `server/discover`, stays modern on a result or a modern error, and opens a
//! 2025-11-25 session on anything else.

use std::time::Duration;
use tern_mcp::client::ClientLimits;
use tern_tests::text_of;

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::server::Server;
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{CallToolResult, method};
use tern_mcp::{Era, Error};
use tern_tests::wire::{RawPeer, Recording, Tap};

/// A tern server (which speaks both eras) with one tool answering `era <version>`.
fn tern_server() -> memory::MemoryTransport {
    let server = Server::builder("dual", "1.0")
        .handle::<method::CallTool, _, _>(|ctx, _params| async move {
            let text = format!("era {}", ctx.meta().protocol_version);
            Ok(CallToolResult::new(vec![tern_mcp::ask::text(text)]).into())
        })
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    client_end
}

fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

/// A scripted server that knows only 2025-11-25: `server/discover` is -32601 to it
/// (or, with `silent_probe`, it never answers), and it serves `tools/call` after
/// `initialize`.
fn legacy_only_server(silent_probe: bool) -> memory::MemoryTransport {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move {
        let mut peer = RawPeer::new(server_end);
        loop {
            let m = peer.recv().await;
            let (Some(method), Some(id)) = (m["method"].as_str(), m.get("id").cloned()) else {
                continue;
            };
            let reply = match method {
                "server/discover" if silent_probe => continue,
                "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "old", "version": "0.9"}
                }}),
                "tools/call" => json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": "legacy ok"}]
                }}),
                other => error(&id, -32601, &format!("Method not found: {other}"), None),
            };
            peer.send(reply).await;
        }
    });
    client_end
}

#[tokio::test]
async fn discovery_against_a_modern_server_speaks_2026_07_28() {
    let recording = Recording::default();
    let client = Client::builder("c", "1")
        .connect(Tap::new(tern_server(), recording.clone()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.era(), Era::Stateless);
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(text_of(&result), "era 2026-07-28");
    let methods: Vec<Value> = recording
        .requests()
        .iter()
        .map(|r| r["method"].clone())
        .collect();
    assert_eq!(methods, vec![json!("server/discover"), json!("tools/call")]);
}

#[tokio::test]
async fn discovery_against_a_legacy_only_server_falls_back_to_initialize() {
    let transport = legacy_only_server(false);
    let recording = Recording::default();
    let client = Client::builder("c", "1")
        .connect(Tap::new(transport, recording.clone()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.era(), Era::Session);
    let result = client.call_tool("t", json!({"x": 1})).await.unwrap();
    assert_eq!(text_of(&result), "legacy ok");

    let sent = recording.messages();
    let methods: Vec<&str> = sent.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods,
        vec![
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
    assert_eq!(sent[1]["params"]["protocolVersion"], "2025-11-25");
    assert!(
        sent[3]["params"].get("_meta").is_none(),
        "a session's requests carry no 2026-07-28 _meta: {}",
        sent[3]
    );
}

#[tokio::test]
async fn a_server_that_ignores_the_probe_is_taken_for_legacy_after_the_timeout() {
    let transport = legacy_only_server(true);
    let client = Client::builder("c", "1")
        .limits(tern_tests::tuned(|l: &mut ClientLimits| {
            l.discovery_timeout = Duration::from_millis(100)
        }))
        .connect(transport)
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
}

#[tokio::test]
async fn a_modern_error_to_the_probe_keeps_the_client_modern() {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move {
        let mut peer = RawPeer::new(server_end);
        let probe = peer.recv().await;
        assert_eq!(probe["method"], "server/discover");
        peer.send(error(
            &probe["id"],
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
        ))
        .await;
        // Stay connected without answering anything else.
        loop {
            peer.recv().await;
        }
    });
    let client = Client::builder("c", "1").connect(client_end).await.unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
}

#[tokio::test]
async fn a_modern_server_listing_no_common_version_is_an_error() {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move {
        let mut peer = RawPeer::new(server_end);
        let probe = peer.recv().await;
        peer.send(error(
            &probe["id"],
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2099-01-01"], "requested": "2026-07-28"})),
        ))
        .await;
        loop {
            peer.recv().await;
        }
    });
    let err = Client::builder("c", "1")
        .connect(client_end)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Protocol(tern_mcp::ProtocolError::NoCommonVersion { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("2099-01-01"), "{err}");
}

#[tokio::test]
async fn explicit_legacy_mode_opens_a_session_with_a_dual_era_server() {
    let recording = Recording::default();
    let client = Client::builder("c", "1")
        .era(EraMode::Session)
        .connect(Tap::new(tern_server(), recording.clone()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(text_of(&result), "era 2025-11-25");
    assert_eq!(recording.requests()[0]["method"], "initialize");
}

#[tokio::test]
async fn connect_speaks_2026_07_28_without_probing() {
    let recording = Recording::default();
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Tap::new(tern_server(), recording.clone()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(recording.requests().len(), 1);
    assert_eq!(recording.requests()[0]["method"], "tools/call");
}

#[tokio::test]
async fn a_version_refusal_that_lists_our_version_is_retried_once_with_a_new_id() {
    let (client_end, server_end) = memory::pair();
    let server = tokio::spawn(async move {
        let mut peer = RawPeer::new(server_end);
        let first = peer.recv().await;
        peer.send(error(
            &first["id"],
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
        ))
        .await;
        let retry = peer.recv().await;
        let result = json!({"resultType": "complete", "tools": []});
        peer.send(json!({"jsonrpc": "2.0", "id": retry["id"], "result": result}))
            .await;
        (first, retry)
    });
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    let listed = client
        .request::<method::ListTools>(Default::default())
        .await
        .unwrap();
    assert!(listed.tools.is_empty());
    let (first, retry) = server.await.unwrap();
    assert_eq!(retry["method"], "tools/list");
    assert_ne!(first["id"], retry["id"]);
    assert_eq!(
        retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}
