//! What a 2025-11-25 session may cost the server: the capabilities and client info it
//! keeps are bounded in bytes (and shared by its requests, not copied into each), and at
//! the session cap a new client pushes out the least recently used idle session instead
//! of being locked out.

use crate::http_support;

use serde_json::{Value, json};
use tern::server::http::HttpServer;

use http_support::{Raw, post, serve};

fn legacy_headers(session: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".into(), "application/json".into()),
        (
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ),
    ];
    if let Some(s) = session {
        h.push(("Mcp-Session-Id".into(), s.into()));
        h.push(("MCP-Protocol-Version".into(), "2025-11-25".into()));
    }
    h
}

fn initialize(capabilities: Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "c", "version": "1"}
        }
    })
    .to_string()
}

async fn open(addr: std::net::SocketAddr) -> String {
    let raw = post(addr, &legacy_headers(None), &initialize(json!({}))).await;
    assert_eq!(raw.status, 200, "{raw:?}");
    raw.header("mcp-session-id").unwrap().to_owned()
}

async fn list_tools(addr: std::net::SocketAddr, session: &str) -> Raw {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    post(addr, &legacy_headers(Some(session)), &body.to_string()).await
}

fn server() -> tern::server::Server {
    tern_tests::seed::provision_server().build().unwrap()
}

#[tokio::test]
async fn an_initialize_with_fat_capabilities_is_refused() {
    let addr = serve(HttpServer::new(server())).await;
    // 3.5 MiB of experimental capabilities, under the 4 MiB body limit.
    let blob = "x".repeat(3_500_000);
    let raw = post(
        addr,
        &legacy_headers(None),
        &initialize(json!({"experimental": {"blob": {"data": blob}}})),
    )
    .await;
    assert_eq!(
        raw.error_code(),
        Some(-32602),
        "{}",
        &raw.body[..raw.body.len().min(300)]
    );
    assert!(raw.header("mcp-session-id").is_none());
    let message = raw.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("a session keeps at most 65536"),
        "{message}"
    );
    // Within the budget, a session opens and serves.
    let fits = "x".repeat(60_000);
    let raw = post(
        addr,
        &legacy_headers(None),
        &initialize(json!({"experimental": {"blob": {"data": fits}}})),
    )
    .await;
    let session = raw.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(list_tools(addr, &session).await.status, 200);
}

#[tokio::test]
async fn at_the_session_cap_a_new_client_evicts_the_least_recently_used_session() {
    let addr = serve(HttpServer::new(server()).with_max_sessions(3)).await;
    let kept = open(addr).await;
    let mut flood = Vec::new();
    for _ in 0..10 {
        // The kept session stays in use, so it is never the least recently used.
        assert_eq!(list_tools(addr, &kept).await.status, 200);
        flood.push(open(addr).await);
    }
    assert_eq!(
        list_tools(addr, &kept).await.status,
        200,
        "the active session survives"
    );
    // The newest sessions live; the older flood was pushed out (404: initialize again).
    assert_eq!(list_tools(addr, &flood[9]).await.status, 200);
    assert_eq!(list_tools(addr, &flood[0]).await.status, 404);
}
