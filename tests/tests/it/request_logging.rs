//! 2026-07-28 logging is opt-in per request: `RequestContext::log` sends only what the
//! request's `_meta["io.modelcontextprotocol/logLevel"]` asked for.

use serde_json::{Value, json};
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::types::v2026_07_28::{CallToolResult, LoggingLevel, method};
use tern_tests::wire::{RawPeer, meta};

fn logging_server() -> Server {
    Server::builder("logs", "1")
        .handle::<method::CallTool, _, _>(|ctx: RequestContext, _params| async move {
            ctx.log(LoggingLevel::Debug, json!("noise"));
            ctx.log(LoggingLevel::Warning, json!("careful"));
            ctx.log(LoggingLevel::Error, json!("broken"));
            Ok(CallToolResult::new(vec![tern_mcp::ask::text("done")]).into())
        })
        .build()
        .unwrap()
}

/// The log entries (their `data`) sent while serving one call with `log_level`, read
/// off the wire of a message transport until the call's response.
async fn logged(log_level: Option<&str>) -> Vec<Value> {
    let mut meta = meta(json!({}));
    if let Some(level) = log_level {
        meta["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    let (client_end, server_end) = tern_mcp::transport::memory::pair();
    let server = logging_server();
    tokio::spawn(async move { server.serve(server_end).await });
    let mut peer = RawPeer::new(client_end);
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "t", "arguments": {}, "_meta": meta}}))
        .await;
    let mut data = Vec::new();
    loop {
        let message = peer.recv().await;
        if message.get("id") == Some(&json!(1)) {
            assert!(message.get("result").is_some(), "{message}");
            return data;
        }
        assert_eq!(message["method"], "notifications/message");
        data.push(message["params"]["data"].clone());
    }
}

#[tokio::test]
async fn a_request_without_a_log_level_gets_no_log_messages() {
    assert_eq!(logged(None).await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_request_gets_the_log_messages_at_or_above_its_level() {
    assert_eq!(
        logged(Some("warning")).await,
        vec![json!("careful"), json!("broken")]
    );
    assert_eq!(logged(Some("debug")).await.len(), 3);
}
