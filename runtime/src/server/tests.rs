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
async fn a_message_transport_request_reads_meta_at_most_once() {
    let (client, server_end) = memory::pair();
    tokio::spawn(async move { server().serve(server_end).await });
    let (sink, mut source) = client.split();
    let before = reads();
    for id in 1..=3 {
        sink.send(call(id).to_string()).await.unwrap();
        let answer: Value = serde_json::from_str(&source.recv().await.unwrap().unwrap()).unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    }
    assert_eq!(
        reads() - before,
        1,
        "the same _meta is read once, then known"
    );
    // A `_meta` that is the request's own (a progress token) is read each time.
    let before = reads();
    for id in 4..=6 {
        let mut call = call(id);
        call["params"]["_meta"]["progressToken"] = json!(id);
        sink.send(call.to_string()).await.unwrap();
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
    let endpoint = crate::http::HttpServer::new(server());
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
        Verdict::Answered(Ok(text)) => {
            let text = text.into_string();
            assert!(text.contains("\"done\""), "{text}");
        }
        other => panic!("expected the result, got {other:?}"),
    }
}

/// A `_meta` the server knows reaches the handler exactly as one it reads: in the context,
/// and in the params when it has members of its own (then with all the members the
/// context does not take); a second `_meta` member, or params that are not their type,
/// are read whole as before.
#[tokio::test]
async fn a_known_meta_reaches_the_handler_as_a_read_one_does() {
    use std::sync::{Arc, Mutex};

    use super::{IncomingRequest, Verdict};
    use crate::types::v2026_07_28::{RequestId, RequestMetaObject};

    type Seen = (Option<RequestMetaObject>, Option<String>, String);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let record = Arc::clone(&seen);
    let server = Server::builder("recording", "1.0.0")
        .handle::<method::CallTool, _, _>(move |ctx, params| {
            record.lock().unwrap().push((
                params.meta.as_deref().cloned(),
                ctx.meta().client_info.as_deref().map(|i| i.name.clone()),
                ctx.meta().protocol_version.to_string(),
            ));
            async move {
                Ok(CallToolResult::new(vec![ContentBlock::Text(TextContent::new("done"))]).into())
            }
        })
        .build()
        .unwrap();
    let serve = |params: &str| {
        let params = crate::jsonrpc::RawParams::from(
            serde_json::value::RawValue::from_string(params.to_owned()).unwrap(),
        );
        let request = IncomingRequest::from_raw(
            RequestId::Integer(1),
            method::CallTool::METHOD,
            Some(params),
        );
        server.accept(request).serve()
    };
    let plain = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}"#;
    let meta = format!(r#"{plain},"com.example/mark":7}}"#);
    let plain = format!("{plain}}}");
    // Each `_meta` twice: first read, then known. The params `_meta` comes first in the
    // second request, so the known one is found where a client puts it.
    for meta in [&meta, &plain] {
        for params in [
            format!(r#"{{"name":"t","_meta":{meta}}}"#),
            format!(r#"{{"_meta":{meta},"name":"t","arguments":{{}}}}"#),
        ] {
            assert!(matches!(serve(&params).await, Verdict::Answered(Ok(_))));
        }
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4);
    assert_eq!(seen[0], seen[1], "read, then known");
    assert_eq!(seen[2], seen[3], "read, then known");
    let (kept, info, version) = &seen[0];
    let kept = kept
        .as_ref()
        .expect("the params keep a _meta with a member of its own");
    assert_eq!(kept.extra["com.example/mark"], json!(7));
    assert_eq!(
        (info.as_deref(), version.as_str()),
        (Some("c"), "2026-07-28")
    );
    // The protocol's keys alone are all in the context: the params keep no `_meta`.
    let (kept, info, version) = &seen[2];
    assert_eq!(kept, &None);
    assert_eq!(
        (info.as_deref(), version.as_str()),
        (Some("c"), "2026-07-28")
    );

    // Two `_meta` members: the general read decides (here, the last one counts).
    let twice = format!(
        r#"{{"name":"t","_meta":{meta},"_meta":{{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{{}}}}}}"#
    );
    let general = match serve(&twice).await {
        Verdict::Refused { error, .. } => error.message,
        Verdict::Answered(Ok(_)) => "answered".to_owned(),
        Verdict::Answered(Err(error)) => error.message,
    };
    assert_ne!(general, "answered", "the second _meta was not overlooked");
}

/// Every request's served future is boxed (`served` in `http/run.rs`), and a box over
/// 1,032 bytes, the largest glibc's per-thread cache keeps, takes the allocator's slow
/// path. At 3,624 bytes (an `async fn` chain keeping each argument twice) it cost the
/// HTTP flow some 1.7k instructions.
#[tokio::test]
async fn a_served_request_future_stays_within_the_allocators_cache() {
    use super::IncomingRequest;
    use crate::types::v2026_07_28::RequestId;

    let server = server();
    let params = json!({
        "name": "t",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    });
    let request = IncomingRequest::new(
        RequestId::Integer(1),
        method::CallTool::METHOD,
        Some(params),
    );
    let Ok(admitted) = server.accept(request).admit() else {
        panic!("the request was refused");
    };
    let served = admitted.serve();
    assert!(
        std::mem::size_of_val(&served) <= 1032,
        "{} bytes",
        std::mem::size_of_val(&served)
    );
}

#[tokio::test]
async fn discover_is_answered_with_the_text_written_at_build() {
    use super::IncomingRequest;
    use crate::types::v2026_07_28::RequestId;

    let server = server();
    let written: Value = serde_json::from_str(&server.discover()).unwrap();
    let info = &written["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "counting", "{written}");
    for id in 1..=2 {
        let params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }});
        let request = IncomingRequest::new(
            RequestId::Integer(id),
            method::Discover::METHOD,
            Some(params),
        );
        let mut answered = server.handle(request).await.unwrap();
        // The protocol's members spliced into every complete result are not the server's.
        for member in ["resultType", "ttlMs", "cacheScope"] {
            answered.as_object_mut().unwrap().remove(member);
        }
        let mut held = written.clone();
        for member in ["resultType", "ttlMs", "cacheScope"] {
            held.as_object_mut().unwrap().remove(member);
        }
        assert_eq!(answered, held, "answer {id} is the text held since build");
    }
}
