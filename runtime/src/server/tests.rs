//! The serving pipeline reads each request's `_meta` once, whatever the transport.

use serde_json::{Value, json};

use super::Server;
use crate::protocol::meta::READS;
use crate::transport::{MessageTransport, memory};
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
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
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
         Mcp-Method: tools/call\r\nMcp-Name: t\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
