//! The client a host needs, over real transports: typed lists that follow `nextCursor`
//! (and stop against a server that loops), an input callback told what is asking, and
//! the automatic loop starting a call over once when a restarted server refuses the
//! state of its retry.

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tern_mcp::types::v2026_07_28::method::{
    ListPrompts, ListResourceTemplates, ListResources, ListTools,
};

use serde_json::json;
use tern_mcp::Error;
use tern_mcp::client::{Client, EraMode, InputContext, Notice, RoundEvent};
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::server::Server;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{ListToolsResult, Tool, method};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use crate::http_support::{serve, serve_default, url};
use tern_tests::stepper;

fn stateless() -> tern_mcp::client::ClientBuilder {
    Client::builder("surface", "1").era(EraMode::Stateless)
}

pub(crate) async fn connect(builder: tern_mcp::client::ClientBuilder, url: &str) -> Client {
    builder
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Arc::new(HttpClientTransport::builder(url).build().unwrap()))
        .await
        .unwrap()
}

#[tokio::test]
async fn lists_come_a_page_at_a_time_or_all_at_once() {
    let mcp = McpServer::new("lists", "1").page_size(2);
    for name in ["a", "b", "c", "d", "e"] {
        mcp.tool(name)
            .run(|_: NoArgs, _ctx: ToolContext| async move { Ok("ok") });
    }
    let addr = serve(tern_mcp::http::HttpServer::new(mcp.server().unwrap())).await;
    let c = connect(stateless(), &url(addr)).await;
    let first = c.list::<ListTools>(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let second = c
        .list::<ListTools>(first.next_cursor.clone())
        .await
        .unwrap();
    assert_eq!(second.tools[0].name, "c");
    let all: Vec<String> = c
        .list_all::<ListTools>()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(all, ["a", "b", "c", "d", "e"]);
    assert!(c.list_all::<ListPrompts>().await.unwrap().is_empty());
    assert!(c.list_all::<ListResources>().await.unwrap().is_empty());
    assert!(
        c.list_all::<ListResourceTemplates>()
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn listing_every_page_stops_at_the_cap_against_a_server_that_loops() {
    let pages = Arc::new(AtomicUsize::new(0));
    let served = Arc::clone(&pages);
    let server = Server::builder("loops", "1")
        .handle::<method::ListTools, _, _>(move |_ctx, _params| {
            served.fetch_add(1, Ordering::SeqCst);
            async move {
                let mut result = ListToolsResult::new(vec![Tool::new(Default::default(), "again")]);
                result.next_cursor = Some("again".into());
                Ok(result)
            }
        })
        .build()
        .unwrap();
    let addr = serve_default(server).await;
    let c = connect(stateless(), &url(addr)).await;
    let err = c.list_all::<ListTools>().await.unwrap_err();
    assert!(
        matches!(err, Error::Protocol(tern_mcp::ProtocolError::TooManyPages { method: "tools/list", pages }) if pages == 1_000),
        "{err}"
    );
    assert_eq!(pages.load(Ordering::SeqCst), 1_000);
}

/// One `fleet_server` process on `addr` (port 0 for any), with its own ephemeral key.
pub(crate) async fn fleet_server(addr: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleet_server"))
        .args(["--addr", addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    (child, url)
}

/// Answers `deploy`'s two questions; records what each callback was told.
fn answering(seen: Arc<Mutex<Vec<InputContext>>>) -> tern_mcp::client::ClientBuilder {
    Client::builder("surface", "1")
        .era(EraMode::Stateless)
        .on_elicitation(move |ctx, _params| {
            let seen = Arc::clone(&seen);
            async move {
                let key = ctx.key.clone().unwrap_or_default();
                seen.lock().unwrap().push(ctx);
                Ok(match key.as_str() {
                    "region" => tern_mcp::ask::accept([("region", "eu")]),
                    _ => tern_mcp::ask::accept([(
                        "confirm",
                        tern_mcp::types::v2026_07_28::ElicitValue::Boolean(true),
                    )]),
                })
            }
        })
}

#[tokio::test]
async fn an_input_callback_is_told_the_method_tool_arguments_and_round_asking() {
    let (_server, url) = fleet_server("127.0.0.1:0").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let c = connect(answering(Arc::clone(&seen)), &url).await;
    let result = c
        .call_tool("deploy", json!({"service": "orders"}))
        .await
        .unwrap();
    assert_eq!(result.is_error, None);
    let seen = seen.lock().unwrap();
    let told: Vec<_> = seen
        .iter()
        .map(|c| (c.key.clone().unwrap(), c.method, c.target.clone(), c.round))
        .collect();
    assert_eq!(
        told,
        [
            (
                "region".into(),
                Some("tools/call"),
                Some("deploy".to_owned()),
                1
            ),
            (
                "confirm".into(),
                Some("tools/call"),
                Some("deploy".to_owned()),
                2
            ),
        ]
    );
    let arguments = seen[0].arguments.as_deref().unwrap();
    assert_eq!(arguments.get("service"), Some(json!("orders")));
}

#[tokio::test]
async fn a_server_restarted_between_rounds_makes_the_loop_start_the_call_over_once() {
    let (server, url) = fleet_server("127.0.0.1:0").await;
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let server = Arc::new(tokio::sync::Mutex::new(Some(server)));
    let asked = Arc::new(AtomicUsize::new(0));
    // The first answer to `region` restarts the server (a new ephemeral key) first.
    let builder = {
        let (server, asked, addr) = (Arc::clone(&server), Arc::clone(&asked), addr.clone());
        Client::builder("surface", "1")
            .era(EraMode::Stateless)
            .on_elicitation(move |ctx, _params| {
                let (server, asked, addr) = (Arc::clone(&server), Arc::clone(&asked), addr.clone());
                async move {
                    if ctx.key.as_deref() == Some("region") {
                        if asked.fetch_add(1, Ordering::SeqCst) == 0 {
                            let mut slot = server.lock().await;
                            if let Some(mut old) = slot.take() {
                                old.kill().await.unwrap();
                            }
                            *slot = Some(fleet_server(&addr).await.0);
                        }
                        return Ok(tern_mcp::ask::accept([("region", "eu")]));
                    }
                    Ok(tern_mcp::ask::accept([(
                        "confirm",
                        tern_mcp::types::v2026_07_28::ElicitValue::Boolean(true),
                    )]))
                }
            })
    };
    let c = connect(builder, &url).await;
    let result = c
        .call_tool("deploy", json!({"service": "orders"}))
        .await
        .unwrap();
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert!(
        text.as_str()
            .unwrap()
            .starts_with("Deployed 'orders' to eu"),
        "{text}"
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "the first round was asked again"
    );

    // Without the restart, the refusal is its own error.
    asked.store(0, Ordering::SeqCst);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let strict = connect(answering(seen).restart_on_rejected_state(false), &url).await;
    let mut params = tern_mcp::types::v2026_07_28::CallToolRequestParams::new("deploy");
    params.arguments = json!({"service": "orders"}).as_object().map(Into::into);
    let tern_mcp::types::v2026_07_28::Outcome::InputRequired(asked_round) = strict
        .request::<method::CallTool>(params.clone())
        .await
        .unwrap()
    else {
        panic!("deploy asks first")
    };
    params.request_state = asked_round.request_state;
    params.request_state.as_mut().unwrap().push('x');
    let err = strict
        .request::<method::CallTool>(params)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::StateRejected(_)), "{err}");
}

#[tokio::test]
async fn progress_and_logs_arrive_in_order_across_a_three_round_call() {
    let addr = serve(tern_mcp::http::HttpServer::new(stepper().server().unwrap())).await;
    let logs = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&logs);
    let builder = Client::builder("surface", "1")
        .era(EraMode::Stateless)
        .log_level(tern_mcp::types::v2026_07_28::LoggingLevel::Info)
        .on_log(move |entry| heard.lock().unwrap().push(entry.data.to_string()))
        .on_elicitation(|_ctx, _p| async { Ok(tern_mcp::ask::accept([("go", true)])) });
    let c = connect(builder, &url(addr)).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let result = c
        .call_tool_with_notices("steps", json!({}), tx)
        .await
        .unwrap();
    assert_eq!(result.is_error, None);
    // The server's progress and the loop's round events, in the order they happened.
    let mut heard = Vec::new();
    while let Ok(notice) = rx.try_recv() {
        match notice {
            Notice::Progress(p) => heard.push(format!("progress {}", p.message.unwrap())),
            Notice::Round(RoundEvent::NeedsInput { round, keys }) => {
                heard.push(format!("round {round} asks {}", keys.join(",")))
            }
            Notice::Round(RoundEvent::Done { rounds }) => heard.push(format!("done in {rounds}")),
            Notice::Round(other) => panic!("unexpected {other:?}"),
            _ => {}
        }
    }
    assert_eq!(
        heard,
        [
            "progress round 1",
            "round 1 asks go1",
            "progress round 2",
            "round 2 asks go2",
            "progress round 3",
            "done in 2",
        ]
    );
    // The client asked for info and above: the debug entries never came.
    assert_eq!(
        *logs.lock().unwrap(),
        [r#""info 1""#, r#""info 2""#, r#""info 3""#]
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Short {
    #[schemars(length(max = 5))]
    code: String,
}

#[tokio::test]
async fn an_argument_breaking_its_schema_is_refused_before_the_tool_runs() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mcp = McpServer::new("strict", "1");
    let counted = Arc::clone(&ran);
    mcp.tool("short")
        .run(move |args: Short, _ctx: ToolContext| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok(args.code) }
        });
    let addr = serve(tern_mcp::http::HttpServer::new(mcp.server().unwrap())).await;
    let c = connect(stateless(), &url(addr)).await;
    let err = c
        .call_tool("short", json!({"code": "much too long"}))
        .await
        .unwrap_err();
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32602, "{err}");
    assert!(rpc.message.contains("`code`"), "{}", rpc.message);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the tool never ran");
    let ok = c.call_tool("short", json!({"code": "abc"})).await.unwrap();
    assert_eq!(ok.is_error, None);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

/// A server whose `count` tool lists an output schema (a count at least 0) and sends
/// whatever `structuredContent` the call's `send` argument says.
fn counting_server() -> Server {
    let tool: Tool = serde_json::from_value(json!({
        "name": "count",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 0}},
            "required": ["count"]
        }
    }))
    .unwrap();
    Server::builder("counting", "1")
        .handle::<method::ListTools, _, _>(move |_ctx, _params| {
            let tool = tool.clone();
            async move { Ok(ListToolsResult::new(vec![tool])) }
        })
        .handle::<method::CallTool, _, _>(|_ctx, params| async move {
            let mut result = tern_mcp::types::v2026_07_28::CallToolResult::new(vec![]);
            result.structured_content = params.arguments.and_then(|a| a.get("send"));
            Ok(result.into())
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn structured_content_breaking_the_listed_output_schema_is_an_error() {
    let addr = serve_default(counting_server()).await;
    let c = connect(stateless(), &url(addr)).await;
    // Before the client listed the tool it knows no schema to hold the result to.
    c.call_tool("count", json!({"send": {"count": -1}}))
        .await
        .unwrap();
    c.list_all::<ListTools>().await.unwrap();
    let ok = c
        .call_tool("count", json!({"send": {"count": 3}}))
        .await
        .unwrap();
    assert_eq!(ok.structured_content, Some(json!({"count": 3})));
    for (sent, says) in [
        (json!({"count": -1}), "`count`"),
        (json!({"total": 1}), "count"),
        (serde_json::Value::Null, "no structuredContent"),
    ] {
        let err = c
            .call_tool("count", json!({"send": sent}))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Protocol(tern_mcp::ProtocolError::InvalidStructuredContent { tool, detail }) if tool == "count" && detail.contains(says)),
            "{sent}: {err}"
        );
    }
}
