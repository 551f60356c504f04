//! 2026-07-28 logging is opt-in per request: `RequestContext::log` sends only what the
//! request's `_meta["io.modelcontextprotocol/logLevel"]` asked for.

use serde_json::{Value, json};
use tern::server::{IncomingRequest, RequestContext, Server};
use tern::types::v2026_07_28::{CallToolResult, RequestId, method};
use tern_tests::wire::meta;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn logging_server() -> Server {
    Server::builder("logs", "1")
        .handle::<method::CallTool, _, _>(|ctx: RequestContext, _params| async move {
            ctx.log("debug", json!("noise"));
            ctx.log("warning", json!("careful"));
            ctx.log("error", json!("broken"));
            Ok(CallToolResult::new(vec![tern::ask::text("done")]).into())
        })
        .build()
        .unwrap()
}

/// The log entries (their `data`) sent while serving one call with `log_level`.
async fn logged(log_level: Option<&str>) -> Vec<Value> {
    let mut meta = meta(json!({}));
    if let Some(level) = log_level {
        meta["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    logging_server()
        .handle(IncomingRequest {
            id: RequestId::Integer(1),
            method: "tools/call".into(),
            params: Some(json!({"name": "t", "arguments": {}, "_meta": meta})),
            auth: None,
            cancel: CancellationToken::new(),
            outbound: Some(tx),
        })
        .await
        .unwrap();
    let mut data = Vec::new();
    while let Ok(line) = rx.try_recv() {
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(message["method"], "notifications/message");
        data.push(message["params"]["data"].clone());
    }
    data
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
