//! The serving pipeline reads each request's `_meta` once, whatever the transport.

use serde_json::{Value, json};

use super::Server;
use crate::protocol::meta::READS;
use crate::transport::{MessageTransport, memory};
use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::{CallToolResult, ContentBlock, TextContent, method};

fn server() -> Server {
    Server::builder("counting", "1.0.0")
        .handle::<method::CallTool, _, _>(|_ctx, _params| async move {
            Ok(CallToolResult::new(vec![ContentBlock::Text(TextContent::new("done"))]).into())
        })
        .build()
        .unwrap()
}

fn call(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": method::CallTool::METHOD,
        "params": {
            "name": "t", "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
}

fn reads() -> usize {
    READS.with(std::cell::Cell::get)
}

// A current-thread runtime keeps the server's tasks on this thread, where the counter is.
#[tokio::test(flavor = "current_thread")]
async fn a_message_transport_request_reads_meta_once() {
    let (client, server_end) = memory::pair();
    tokio::spawn(async move { server().serve(server_end).await });
    let (sink, mut source) = client.split();
    let before = reads();
    for id in 1..=3 {
        sink.send(call(id).to_string()).await.unwrap();
        let answer: Value = serde_json::from_str(&source.recv().await.unwrap().unwrap()).unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    }
    assert_eq!(reads() - before, 3, "one _meta read per request");
}

#[cfg(feature = "http-server")]
#[tokio::test(flavor = "current_thread")]
async fn an_http_request_reads_meta_once() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let endpoint = super::http::HttpServer::new(server());
    tokio::spawn(endpoint.serve(listener, std::future::pending()));
    let before = reads();
    let body = call(1).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {}\r\nMcp-Name: t\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        method::CallTool::METHOD,
        body.len()
    );
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"done\""), "{answer}");
    assert_eq!(reads() - before, 1, "one _meta read per request");
}

/// Params read once into their type still refuse in the same order: `_meta` first (with
/// its precise reason, even when the rest of the params is wrong too), then the params.
#[tokio::test]
async fn a_broken_meta_is_refused_before_broken_params_and_each_says_why() {
    use super::{IncomingRequest, Refusal, Verdict};
    use crate::types::v2026_07_28::RequestId;

    let server = server();
    let serve = |params: Value| {
        let request = IncomingRequest::new(
            RequestId::Integer(1),
            method::CallTool::METHOD,
            Some(params),
        );
        let accepted = server.accept(request);
        async move { accepted.serve().await }
    };
    let broken_both =
        json!({"name": 5, "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    match serve(broken_both).await {
        Verdict::Refused {
            reason: Refusal::InvalidMeta,
            error,
        } => {
            assert!(error.message.contains("protocolVersion"), "{error:?}");
        }
        other => panic!("expected an InvalidMeta refusal, got {other:?}"),
    }

    let mut broken_params = call(1)["params"].clone();
    broken_params["name"] = json!(5);
    match serve(broken_params).await {
        Verdict::Answered(Err(error)) => {
            assert_eq!(error.code, crate::jsonrpc::code::INVALID_PARAMS);
            assert!(
                error
                    .message
                    .starts_with(&format!("Invalid params for {}", method::CallTool::METHOD)),
                "{error:?}"
            );
        }
        other => panic!("expected invalid params, got {other:?}"),
    }

    match serve(call(1)["params"].clone()).await {
        Verdict::Answered(Ok(text)) => assert!(text.contains("\"done\""), "{text}"),
        other => panic!("expected the result, got {other:?}"),
    }
}
