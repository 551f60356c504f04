//! The tern client and server over Streamable HTTP on a loopback socket: full
//! multi round-trip flows with JSON and with SSE answers, progress routing, cancellation
//! by closing the stream, and what the client reports when the server refuses.

use crate::http_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tern_tests::Stopped;
use tern_tests::seed::{self, answered_region as region_of};
use tern_tests::text_of;

use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::http::HttpServer;
use tern_mcp::server::{RequestContext, Server};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolResult, ListToolsResult, PaginatedRequestParams, Tool, method,
};

use http_support::{body, mcp_headers, open, post, serve, serve_default, url};

/// The seed's tool: asks for a region, then provisions. With `notify`, it logs a line
/// on the request's stream each round, which turns the answer into SSE.
fn provisioner(notify: bool) -> Server {
    Server::builder("Provisioner", "1.0.0")
        .handle::<method::ListTools, _, _>(seed::list_tools)
        .handle::<method::CallTool, _, _>(move |ctx: RequestContext, params| async move {
            if notify {
                // A raw notification: it switches the answer to SSE whatever log level was asked.
                ctx.notify::<method::LoggingMessage>(
                    tern_mcp::types::v2026_07_28::LoggingMessageNotificationParams::new(
                        json!("working"),
                        tern_mcp::types::v2026_07_28::LoggingLevel::Info,
                    ),
                );
            }
            if region_of(&params).is_some() {
                assert_eq!(params.request_state.as_deref(), Some(seed::STATE));
            }
            seed::call_tool(ctx, params).await
        })
        .build()
        .unwrap()
}

async fn http_client(addr: std::net::SocketAddr) -> Client {
    let transport = HttpClientTransport::builder(url(addr)).build().unwrap();
    Client::builder("test-client", "1.0")
        .on_elicitation(|_ctx, _params| async { Ok(seed::answer_region()) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap()
}

#[tokio::test]
async fn the_full_mrtr_flow_runs_over_http_with_json_responses() {
    let addr = serve_default(provisioner(false)).await;
    let client = http_client(addr).await;
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "Provisioned 'orders' in eu-west-1.");

    let first = body(
        1,
        "tools/call",
        json!({"name": "provision", "arguments": {"name": "o"}}),
    );
    let raw = post(addr, &mcp_headers("tools/call", Some("provision")), &first).await;
    assert_eq!(raw.header("content-type"), Some("application/json"));
    assert_eq!(raw.json()["result"]["resultType"], "input_required");
}

#[tokio::test]
async fn the_full_mrtr_flow_runs_over_http_with_sse_responses() {
    let addr = serve_default(provisioner(true)).await;
    let client = http_client(addr).await;
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "Provisioned 'orders' in eu-west-1.");

    let first = body(
        1,
        "tools/call",
        json!({"name": "provision", "arguments": {"name": "o"}}),
    );
    let raw = post(addr, &mcp_headers("tools/call", Some("provision")), &first).await;
    assert_eq!(raw.header("content-type"), Some("text/event-stream"));
    assert_eq!(raw.header("x-accel-buffering"), Some("no"));
    let events = raw.events();
    assert_eq!(events[0]["method"], "notifications/message", "{events:?}");
    assert_eq!(events[1]["id"], 1);
    assert_eq!(events[1]["result"]["resultType"], "input_required");
}

#[tokio::test]
async fn a_client_that_accepts_only_json_gets_json_without_the_notifications() {
    let addr = serve_default(provisioner(true)).await;
    let first = body(
        1,
        "tools/call",
        json!({"name": "provision", "arguments": {"name": "o"}}),
    );
    let mut headers = mcp_headers("tools/call", Some("provision"));
    http_support::set(&mut headers, "Accept", Some("application/json"));
    let raw = post(addr, &headers, &first).await;
    assert_eq!(raw.header("content-type"), Some("application/json"));
    assert_eq!(raw.json()["result"]["resultType"], "input_required");
}

#[tokio::test]
async fn progress_notifications_reach_the_call_that_asked_over_sse() {
    let addr = serve_default(crate::mrtr_loop::progress_server()).await;
    crate::mrtr_loop::each_caller_sees_its_own_progress(&http_client(addr).await).await;
}

type Signal = Arc<Mutex<Option<tokio::sync::oneshot::Sender<()>>>>;

/// A tool that (optionally) sends one progress notification, then waits until it is
/// cancelled; `stopped` fires when its future is gone, `cancelled` when its token fired.
fn waits_for_cancellation(notify: bool, stopped: Signal, cancelled: Signal) -> Server {
    Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(move |ctx: RequestContext, _p| {
            let guard = Stopped(stopped.lock().unwrap().take());
            let cancelled = Arc::clone(&cancelled);
            async move {
                let _guard = guard;
                let token = ctx.cancellation().clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    if let Some(tx) = cancelled.lock().unwrap().take() {
                        let _ = tx.send(());
                    }
                });
                if notify {
                    ctx.notify::<method::LoggingMessage>(
                        tern_mcp::types::v2026_07_28::LoggingMessageNotificationParams::new(
                            json!("started"),
                            tern_mcp::types::v2026_07_28::LoggingLevel::Info,
                        ),
                    );
                }
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(CallToolResult::new(vec![ask::text("never sent")]).into())
            }
        })
        .build()
        .unwrap()
}

async fn closing_the_connection_cancels(notify: bool) {
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel();
    let (cancelled_tx, cancelled_rx) = tokio::sync::oneshot::channel();
    let server = waits_for_cancellation(
        notify,
        Arc::new(Mutex::new(Some(stopped_tx))),
        Arc::new(Mutex::new(Some(cancelled_tx))),
    );
    let addr = serve_default(server).await;
    let text = body(1, "tools/call", json!({"name": "slow", "arguments": {}}));
    let mut stream = open(
        addr,
        "POST",
        &mcp_headers("tools/call", Some("slow")),
        &text,
    )
    .await;
    if notify {
        // Wait for the stream to start (the first event), then hang up.
        use tokio::io::AsyncReadExt;
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&seen).contains("data: ") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream closed early");
            seen.extend_from_slice(&buf[..n]);
        }
        assert!(String::from_utf8_lossy(&seen).contains("text/event-stream"));
    } else {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(stream);
    tokio::time::timeout(Duration::from_secs(5), stopped_rx)
        .await
        .expect("the handler did not stop")
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), cancelled_rx)
        .await
        .expect("the handler's token was not cancelled")
        .unwrap();
}

#[tokio::test]
async fn closing_an_sse_stream_cancels_the_handler() {
    closing_the_connection_cancels(true).await;
}

#[tokio::test]
async fn closing_the_connection_of_a_pending_json_answer_cancels_the_handler() {
    closing_the_connection_cancels(false).await;
}

#[tokio::test]
async fn dropping_a_client_call_cancels_the_handler() {
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel();
    let (cancelled_tx, _cancelled_rx) = tokio::sync::oneshot::channel();
    let server = waits_for_cancellation(
        false,
        Arc::new(Mutex::new(Some(stopped_tx))),
        Arc::new(Mutex::new(Some(cancelled_tx))),
    );
    let addr = serve_default(server).await;
    let client = http_client(addr).await;
    let call = tokio::spawn(async move { client.call_tool("slow", json!({})).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    call.abort();
    tokio::time::timeout(Duration::from_secs(5), stopped_rx)
        .await
        .expect("the handler did not stop")
        .unwrap();
}

#[tokio::test]
async fn refusals_carry_the_http_status_and_the_json_rpc_error() {
    let addr = serve_default(provisioner(false)).await;
    let client = http_client(addr).await;
    let err = client
        .request::<method::ListPrompts>(PaginatedRequestParams::new())
        .await
        .unwrap_err();
    let Error::Transport(e) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(e.http_status(), Some(404), "{err}");
    assert_eq!(e.rpc_error().map(|r| r.code), Some(-32601), "{err}");
    assert_eq!(
        err.rpc().map(|r| r.code),
        Some(-32601),
        "Error::rpc sees it too"
    );
}

/// A server whose `sql` tool mirrors `region` into `Mcp-Param-Region` (the HTTP layer
/// checks it); `tools/list` says so when `advertise` is set, and counts its calls.
async fn sql_endpoint(advertise: bool, lists: Arc<Mutex<u32>>) -> std::net::SocketAddr {
    let annotation = if advertise {
        json!({"type": "string", "x-mcp-header": "Region"})
    } else {
        json!({"type": "string"})
    };
    let schema = json!({"type": "object", "properties": {
        "region": annotation,
        "query": {"type": "string"}
    }});
    let server = Server::builder("sql", "1")
        .handle::<method::ListTools, _, _>(move |_ctx, _p| {
            let schema = schema.clone();
            *lists.lock().unwrap() += 1;
            async move {
                let good = Tool::new(serde_json::from_value(schema).unwrap(), "sql");
                let bad_schema = json!({"type": "object", "properties": {
                    "n": {"type": "object", "x-mcp-header": "N"}
                }});
                let bad = Tool::new(serde_json::from_value(bad_schema).unwrap(), "bad");
                Ok(ListToolsResult::new(vec![good, bad]))
            }
        })
        .handle::<method::CallTool, _, _>(|_ctx, params| async move {
            let region = params.arguments.as_ref().unwrap().get("region").unwrap();
            Ok(CallToolResult::new(vec![ask::text(format!("ran in {region}"))]).into())
        })
        .build()
        .unwrap();
    let lookup = |tool: &str| {
        (tool == "sql").then(|| {
            tern_mcp::transport::http::param_headers(&json!({"properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}
            }}))
            .unwrap()
        })
    };
    serve(HttpServer::new(server).tool_headers(lookup)).await
}

#[tokio::test]
async fn the_client_mirrors_annotated_arguments_it_learned_from_tools_list() {
    let lists = Arc::new(Mutex::new(0));
    let client = http_client(sql_endpoint(true, Arc::clone(&lists)).await).await;
    // tools/list teaches the annotation; the tool with an invalid one is left out.
    let tools = client
        .request::<method::ListTools>(PaginatedRequestParams::new())
        .await
        .unwrap();
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["sql"]);
    let args = json!({"region": "Zürich ", "query": "SELECT 1"});
    let result = client.call_tool("sql", args).await.unwrap();
    assert_eq!(text_of(&result), "ran in \"Zürich \"");
    assert_eq!(*lists.lock().unwrap(), 1, "no refresh was needed");
}

#[tokio::test]
async fn a_call_refused_for_its_param_headers_is_retried_after_rereading_tools_list() {
    let lists = Arc::new(Mutex::new(0));
    let client = http_client(sql_endpoint(true, Arc::clone(&lists)).await).await;
    let args = json!({"region": "us-west1", "query": "SELECT 1"});
    let result = client.call_tool("sql", args).await.unwrap();
    assert_eq!(text_of(&result), "ran in \"us-west1\"");
    assert_eq!(*lists.lock().unwrap(), 1, "one tools/list refresh");
}

#[tokio::test]
async fn a_header_refusal_that_tools_list_cannot_explain_is_reported_with_its_status() {
    let lists = Arc::new(Mutex::new(0));
    let client = http_client(sql_endpoint(false, Arc::clone(&lists)).await).await;
    let args = json!({"region": "us-west1", "query": "SELECT 1"});
    let err = client.call_tool("sql", args).await.unwrap_err();
    let Error::Transport(e) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(e.http_status(), Some(400), "{err}");
    assert_eq!(e.rpc_error().map(|r| r.code), Some(-32020), "{err}");
}

#[tokio::test]
async fn the_client_sends_its_bearer_token() {
    struct Token;
    impl tern_mcp::auth::TokenVerifier for Token {
        fn verify(
            &self,
            token: &str,
        ) -> tern_mcp::transport::BoxFuture<
            '_,
            Result<tern_mcp::auth::AuthInfo, tern_mcp::auth::AuthError>,
        > {
            let ok = token == "s3cret";
            Box::pin(async move {
                if ok {
                    Ok(tern_mcp::auth::AuthInfo::new("me"))
                } else {
                    Err(tern_mcp::auth::AuthError::InvalidToken("no".into()))
                }
            })
        }
    }
    let addr = serve(HttpServer::new(provisioner(false)).token_verifier(Arc::new(Token))).await;
    let anonymous = http_client(addr).await;
    let err = anonymous
        .call_tool("provision", json!({"name": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Transport(e) if e.http_status() == Some(401)),
        "{err:?}"
    );

    let transport = HttpClientTransport::builder(url(addr))
        .bearer_token("s3cret")
        .build()
        .unwrap();
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(seed::answer_region()) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    let result = client
        .call_tool("provision", json!({"name": "x"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "Provisioned 'x' in eu-west-1.");
}

#[tokio::test]
async fn the_provision_example_serves_http_and_its_call_command_provisions() {
    let (_server, addr) = http_support::provision_child().await;
    let url = url(addr);
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_provision"))
        .args(["call", &url])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "Provisioned 'orders' in eu-west-1."),
        "{stdout}"
    );
}

#[tokio::test]
async fn graceful_shutdown_finishes_the_requests_in_flight() {
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|_ctx, _p| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(CallToolResult::new(vec![ask::text("finished")]).into())
        })
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(HttpServer::new(server).serve(listener, async move {
        let _ = stopped.await;
    }));
    let text = body(1, "tools/call", json!({"name": "slow", "arguments": {}}));
    let in_flight =
        tokio::spawn(
            async move { post(addr, &mcp_headers("tools/call", Some("slow")), &text).await },
        );
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    let answer = in_flight.await.unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.json()["result"]["content"][0]["text"], "finished");
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server did not stop")
        .unwrap()
        .unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still accepting"
    );
}

#[test]
fn a_header_annotation_on_a_number_property_is_refused() {
    let annotated = |ty: &str| json!({"type": "object", "properties": {"v": {"type": ty, "x-mcp-header": "V"}}});
    assert!(tern_mcp::transport::http::param_headers(&annotated("number")).is_err());
    assert!(tern_mcp::transport::http::param_headers(&annotated("integer")).is_ok());
}

/// Accepts one connection, reads one request, answers `status` with the JSON that
/// `answer` makes from the request, and closes; returns the request's JSON body.
async fn answer_one(
    listener: &tokio::net::TcpListener,
    status: &str,
    answer: impl FnOnce(&Value) -> Value,
) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let request_body = loop {
        let n = stream.read(&mut buf).await.unwrap();
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).to_string();
        if let Some((head, rest)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            if rest.len() >= length {
                break rest[..length].to_owned();
            }
        }
        assert!(n > 0, "the client closed before sending a whole request");
    };
    let request: Value = serde_json::from_str(&request_body).unwrap();
    let body = answer(&request).to_string();
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await.unwrap();
    request
}

#[tokio::test]
async fn over_http_a_400_version_refusal_listing_our_version_is_retried_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let first = answer_one(&listener, "400 Bad Request", |r| {
            json!({"jsonrpc": "2.0", "id": r["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}})
        })
        .await;
        let second = answer_one(&listener, "200 OK", |r| {
            json!({"jsonrpc": "2.0", "id": r["id"],
                "result": {"resultType": "complete", "tools": []}})
        })
        .await;
        (first, second)
    });
    let transport = HttpClientTransport::builder(url(addr)).build().unwrap();
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(transport))
        .await
        .unwrap();
    let listed = client
        .request::<method::ListTools>(PaginatedRequestParams::new())
        .await
        .unwrap();
    assert!(listed.tools.is_empty());
    let (first, second) = server.await.unwrap();
    assert_eq!(second["method"], "tools/list");
    assert_ne!(first["id"], second["id"], "a retry is a new request");
}
