//! What a 2025-11-25 session may cost the server: the capabilities and client info it
//! keeps are bounded in bytes (and shared by its requests, not copied into each), and at
//! the session cap a new client pushes out the least recently used idle session instead
//! of being locked out.

use crate::http_support;
use tern_mcp::http::HttpLimits;

use serde_json::{Value, json};
use tern_mcp::http::HttpServer;

use http_support::{Raw, legacy_body, legacy_headers, open_session, post, serve};

fn initialize(capabilities: Value) -> String {
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "c", "version": "1"}
    });
    legacy_body(1, "initialize", params)
}

async fn list_tools(addr: std::net::SocketAddr, session: &str) -> Raw {
    let body = legacy_body(2, "tools/list", json!({}));
    post(addr, &legacy_headers(Some(session)), &body).await
}

/// An `initialize` whose experimental capability carries `bytes` of data.
async fn initialize_with(addr: std::net::SocketAddr, bytes: usize) -> Raw {
    let blob = "x".repeat(bytes);
    let body = initialize(json!({"experimental": {"blob": {"data": blob}}}));
    post(addr, &legacy_headers(None), &body).await
}

fn server() -> tern_mcp::server::Server {
    tern_tests::seed::provision_server().build().unwrap()
}

#[tokio::test]
async fn an_initialize_with_fat_capabilities_is_refused() {
    let addr = serve(HttpServer::new(server())).await;
    // 3.5 MiB of experimental capabilities, under the 4 MiB body limit.
    let raw = initialize_with(addr, 3_500_000).await;
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
    let raw = initialize_with(addr, 60_000).await;
    let session = raw.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(list_tools(addr, &session).await.status, 200);
}

#[tokio::test]
async fn at_the_session_cap_a_new_client_evicts_the_least_recently_used_session() {
    let addr = serve(
        HttpServer::new(server())
            .limits(tern_tests::tuned(|l: &mut HttpLimits| l.max_sessions = 3)),
    )
    .await;
    let kept = open_session(addr).await;
    let mut flood = Vec::new();
    for _ in 0..10 {
        // The kept session stays in use, so it is never the least recently used.
        assert_eq!(list_tools(addr, &kept).await.status, 200);
        flood.push(open_session(addr).await);
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
