//! A tern client on a 2025-11-25 session answering the server's own requests, seen
//! from a scripted server.

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::ListRootsResult;
use tern_tests::wire::RawPeer;

/// Connects `builder`'s client in legacy mode to a scripted server, completing the
/// handshake; returns the client and the server's end.
async fn session(builder: tern_mcp::client::ClientBuilder) -> (Client, RawPeer) {
    let (client_end, server_end) = memory::pair();
    let mut server = RawPeer::new(server_end);
    let client = tokio::spawn(builder.era(EraMode::Session).connect(client_end));
    let init = server.recv().await;
    assert_eq!(init["method"], "initialize");
    server
        .send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "script", "version": "0"}
        }}))
        .await;
    assert_eq!(server.recv().await["method"], "notifications/initialized");
    (client.await.unwrap().unwrap(), server)
}

async fn ask_client(server: &mut RawPeer, method: &str, params: Value) -> Value {
    server
        .call(json!({"jsonrpc": "2.0", "id": "s1", "method": method, "params": params}))
        .await
}

#[tokio::test]
async fn a_server_request_without_a_callback_is_method_not_found() {
    let (_client, mut server) = session(Client::builder("c", "1")).await;
    let answer = ask_client(&mut server, "roots/list", json!({})).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

#[tokio::test]
async fn a_callback_error_is_the_response_error() {
    let builder = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Err(RpcError::new(-32042, "not now")) });
    let (_client, mut server) = session(builder).await;
    let answer = ask_client(
        &mut server,
        "elicitation/create",
        json!({"message": "Region?", "requestedSchema": {"type": "object", "properties": {}}}),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    assert_eq!(answer["error"]["message"], "not now");
}

#[tokio::test]
async fn roots_and_ping_are_answered_on_the_connection() {
    let builder = Client::builder("c", "1").on_list_roots(|ctx, _p| async move {
        assert_eq!(ctx.key, None);
        Ok(ListRootsResult::new(vec![]))
    });
    let (_client, mut server) = session(builder).await;
    let roots = ask_client(&mut server, "roots/list", json!({})).await;
    assert_eq!(roots["result"]["roots"], json!([]), "{roots}");
    let pong = server
        .call(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        .await;
    assert_eq!(pong["result"], json!({}));
}
