//! The gateway (`tern_mcp::proxy`) in front of tern upstreams over real sockets: a named
//! upstream's tools and questions under its name, its `requestState` never in what the
//! client receives, the gateway's state refused to another principal, an upstream that
//! hangs cut off at its deadline, an unknown tool refused. (The conformance suite runs
//! through `tern proxy` in `scripts/conformance`; the Python SDK's upstreams and client
//! in `gateway_interop`.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::Error;
use tern_mcp::ask;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::client::Client;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::server::http::HttpServer;
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, InputResponses, ToolArguments,
    method::{CallTool, ListTools},
};
use tern_tests::{Asked, recording_client, text_of};

use crate::http_support::{serve, serve_default, url};

/// What the upstream's tool seals nothing of: its own state, plain, so a leak is plain.
const UPSTREAM_STATE: &str = "upstream-state-9f2c1e77";

/// An upstream called `who` with `ask` (one question, `region`, and a state of its
/// own) and `stall` (never answers).
async fn upstream(who: &'static str) -> String {
    let mcp = McpServer::new(who, "1");
    mcp.tool("ask").description("Asks for a region").run(
        move |_: NoArgs, ctx: ToolContext| async move {
            let answer = ctx.input_responses().and_then(|r| r.raw("region"));
            match (ctx.request_state(), answer) {
                (Some(UPSTREAM_STATE), Some(answer)) => {
                    let text = format!("{who} got {}", answer.get());
                    Ok(CallToolOutcome::Complete(CallToolResult::new(vec![
                        ask::text(text),
                    ])))
                }
                _ => {
                    let form =
                        json!({"type": "object", "properties": {"region": {"type": "string"}}});
                    let question = ask::elicit_form("Which region?", form)?;
                    Ok(ask::input_required([("region", question)], Some(UPSTREAM_STATE)).into())
                }
            }
        },
    );
    mcp.tool("stall")
        .description("Never answers")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok("late")
        });
    url(serve_default(mcp.server().unwrap()).await)
}

async fn named(name: &str, url: &str) -> Upstream {
    Upstream::http(HttpClientTransport::builder(url))
        .await
        .unwrap()
        .named(name)
        .unwrap()
}

/// Two principals, by their bearer tokens.
struct TwoPrincipals;

impl TokenVerifier for TwoPrincipals {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let result = match token {
            "alice" | "bob" => Ok(AuthInfo::new(token)),
            _ => Err(AuthError::InvalidToken("unknown token".into())),
        };
        Box::pin(async move { result })
    }
}

/// A gateway over `upstreams`, served; its URL.
async fn gateway(upstreams: Vec<Upstream>) -> String {
    let mut gateway = Gateway::new("gateway", "1");
    for upstream in upstreams {
        gateway = gateway.upstream(upstream);
    }
    let http = HttpServer::new(gateway.build().unwrap())
        .token_verifier(Arc::new(TwoPrincipals))
        .resource_metadata("http://127.0.0.1/.well-known/oauth-protected-resource");
    url(serve(http).await)
}

async fn client_of(url: &str, token: &str, asked: &Asked) -> Client {
    let transport = HttpClientTransport::builder(url)
        .bearer_token(token)
        .build()
        .unwrap();
    recording_client(asked).connect(transport).await.unwrap()
}

fn call(name: &str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name);
    params.arguments = Some(ToolArguments::from_value(&json!({})).unwrap());
    params
}

#[tokio::test]
async fn named_upstreams_serve_their_tools_and_questions_under_their_names() {
    let (a, b) = (upstream("a").await, upstream("b").await);
    let gw = gateway(vec![named("a", &a).await, named("b", &b).await]).await;
    let asked = Asked::default();
    let client = client_of(&gw, "alice", &asked).await;

    let tools = client.list_all::<ListTools>().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a.ask", "a.stall", "b.ask", "b.stall"]);

    let result = client.call_tool("b.ask", json!({})).await.unwrap();
    assert_eq!(
        text_of(&result),
        r#"b got {"action":"accept","content":{"region":"eu-west-1"}}"#
    );
    assert_eq!(asked.keys(), [Some("b.region".to_owned())]);

    let unknown = client.call_tool("c.ask", json!({})).await.unwrap_err();
    let Error::Rpc(e) = unknown else {
        panic!("refused: {unknown:?}")
    };
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("Unknown tool: c.ask"), "{}", e.message);
}

#[tokio::test]
async fn an_upstreams_state_never_reaches_the_client_and_its_retry_still_completes() {
    let a = upstream("a").await;
    let gw = gateway(vec![named("a", &a).await]).await;
    let client = client_of(&gw, "alice", &Asked::default()).await;

    let first = client.request::<CallTool>(call("a.ask")).await.unwrap();
    let written = serde_json::to_string(&first).unwrap();
    assert!(!written.contains(UPSTREAM_STATE), "leaked: {written}");
    let CallToolOutcome::InputRequired(asked) = first else {
        panic!("asks first")
    };
    let state = asked.request_state.clone().unwrap();
    assert!(state.starts_with("t1."), "sealed: {state}");
    assert!(asked.input_requests.unwrap().contains_key("a.region"));

    let mut retry = call("a.ask");
    let mut answers = InputResponses::new();
    answers
        .insert("a.region", ask::accept([("region", "eu-west-1")]).into())
        .unwrap();
    retry.input_responses = Some(answers);
    retry.request_state = Some(state);
    let done = client.request::<CallTool>(retry).await.unwrap();
    let CallToolOutcome::Complete(done) = done else {
        panic!("complete")
    };
    assert!(text_of(&done).starts_with("a got "), "{}", text_of(&done));
}

#[tokio::test]
async fn a_gateway_state_replayed_by_another_principal_is_the_fixed_invalid_params() {
    let a = upstream("a").await;
    let gw = gateway(vec![named("a", &a).await]).await;
    let alice = client_of(&gw, "alice", &Asked::default()).await;
    let bob = client_of(&gw, "bob", &Asked::default()).await;

    let CallToolOutcome::InputRequired(asked) =
        alice.request::<CallTool>(call("a.ask")).await.unwrap()
    else {
        panic!("asks first")
    };
    let mut replay = call("a.ask");
    let mut answers = InputResponses::new();
    answers
        .insert("a.region", ask::accept([("region", "eu-west-1")]).into())
        .unwrap();
    replay.input_responses = Some(answers);
    replay.request_state = asked.request_state;
    let refused = bob.request::<CallTool>(replay).await.unwrap_err();
    let Error::StateRejected(e) = refused else {
        panic!("refused as a state: {refused:?}")
    };
    assert_eq!(e.code, -32602);
    assert_eq!(e.message, "Invalid or expired requestState");
}

#[tokio::test]
async fn an_upstream_that_hangs_is_cut_off_at_its_deadline_naming_it() {
    let slow = upstream("slow").await;
    let upstream = named("slow", &slow)
        .await
        .deadline(Duration::from_millis(300));
    let gw = gateway(vec![upstream]).await;
    let client = client_of(&gw, "alice", &Asked::default()).await;

    let started = Instant::now();
    let late = client.call_tool("slow.stall", json!({})).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let Error::Rpc(e) = late else {
        panic!("an error: {late:?}")
    };
    assert_eq!(e.code, -32001);
    assert!(
        e.message
            .contains("upstream \"slow\" did not answer within 0.300 s"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn a_gateway_needs_an_upstream_and_unique_names() {
    let none = Gateway::new("gateway", "1").build();
    assert!(none.is_err());
    let a = upstream("a").await;
    let twice = Gateway::new("gateway", "1")
        .upstream(named("a", &a).await)
        .upstream(named("a", &a).await)
        .build();
    let Err(e) = twice else {
        panic!("two upstreams named a")
    };
    assert!(
        e.to_string().contains("two upstreams are named \"a\""),
        "{e}"
    );
    let client = Client::builder("t", "1")
        .connect(HttpClientTransport::builder(&a).build().unwrap())
        .await
        .unwrap();
    assert!(Upstream::new(client).named("a.b").is_err());
}

/// The Python SDK's `MCPServer` (mcp 2.3.0) behind the gateway, named: `modern` asks at
/// 2026-07-28 with an InputRequiredResult, `legacy` (a 2025-11-25 server) with
/// elicitation/create on a session the gateway opens for the call. tern's client
/// answers both through its ordinary callback, as 2026-07-28 rounds of the gateway's.
#[tokio::test]
#[ignore = "needs TERN_INTEROP_PYTHON: run scripts/interop"]
async fn python_upstreams_of_either_era_are_answered_through_the_gateway() {
    use crate::era_interop::python_http_server_with;
    let Some(modern) = python_http_server_with("gateway_upstream.py", &[]).await else {
        return;
    };
    let Some(legacy) = python_http_server_with("gateway_upstream.py", &["--legacy"]).await else {
        return;
    };
    let gw = gateway(vec![
        named("modern", &modern.url).await,
        named("legacy", &legacy.url).await,
    ])
    .await;
    let asked = Asked::default();
    let client = Client::builder("test-client", "1.0")
        .on_elicitation({
            let asked = asked.clone();
            move |ctx, _params| {
                asked.record(ctx.key.clone());
                async { Ok(ask::accept([("seat", "7F")])) }
            }
        })
        .connect(
            HttpClientTransport::builder(&gw)
                .bearer_token("alice")
                .build()
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    for (tool, key) in [
        ("modern.book", "modern.__main__:ask_seat"),
        ("legacy.book", "legacy.q1"),
    ] {
        let result = client
            .call_tool(tool, json!({"city": "Lisbon"}))
            .await
            .unwrap();
        let text = serde_json::to_string(&result).unwrap();
        assert!(text.contains("Booked Lisbon, seat 7F"), "{tool}: {text}");
        assert_eq!(asked.take(), [Some(key.to_owned())], "{tool}");
    }
}
