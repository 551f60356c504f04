//! 2026-07-28 logging is opt-in per request: `RequestContext::log` sends only what the
//! request's `_meta["io.modelcontextprotocol/logLevel"]` asked for.

use serde_json::{Value, json};
use tern::server::{IncomingRequest, RequestContext, Server};
use tern::types::v2026_07_28::{CallToolResult, LoggingLevel, RequestId, method};
use tern_tests::wire::meta;
use tokio::sync::mpsc;

fn logging_server() -> Server {
    Server::builder("logs", "1")
        .handle::<method::CallTool, _, _>(|ctx: RequestContext, _params| async move {
            ctx.log(LoggingLevel::Debug, json!("noise"));
            ctx.log(LoggingLevel::Warning, json!("careful"));
            ctx.log(LoggingLevel::Error, json!("broken"));
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
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    logging_server()
        .handle(
            IncomingRequest::new(
                RequestId::Integer(1),
                "tools/call",
                Some(json!({"name": "t", "arguments": {}, "_meta": meta})),
            )
            .with_outbound(Some(tx.into())),
        )
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
