//! The gateway (`tern_mcp::proxy`) in front of tern upstreams over real sockets: a named
//! upstream's tools and questions under its name, its `requestState` never in what the
//! client receives, the gateway's state refused to another principal, an upstream that
//! hangs cut off at its deadline, an unknown tool refused. (The conformance suite runs
//! through `tern proxy` in `scripts/conformance`; the Python SDK's upstreams and client
//! in `gateway_interop`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tern_mcp::Error;
use tern_mcp::ask;
use tern_mcp::auth::{AuthError, AuthInfo, TokenVerifier};
use tern_mcp::client::{Client, ClientBuilder, InputContext};
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{Elicit, McpServer, NoArgs, ToolContext};
use tern_mcp::proxy::{Gateway, Upstream};
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::transport::BoxFuture;
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ElicitResult, InputResponses, Tool,
    ToolArguments,
    method::{CallTool, ListTools},
};
use tern_tests::{Asked, recording_client, text_of};

use crate::http_support::{serve, serve_default, url};

/// What the upstream's tool seals nothing of: its own state, plain, so a leak is plain.
const UPSTREAM_STATE: &str = "upstream-state-9f2c1e77";

/// An upstream called `who` with `ask` (one question, `region`, and a state of its
/// own) and `stall` (never answers).
async fn upstream(who: &'static str) -> String {
    counted_upstream(who).await.0
}

/// [`upstream`], and how many of its `ask` calls completed (got their answer).
async fn counted_upstream(who: &'static str) -> (String, Arc<AtomicUsize>) {
    let completed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&completed);
    let mcp = McpServer::new(who, "1");
    mcp.tool("ask")
        .description("Asks for a region")
        .run(move |_: NoArgs, ctx: ToolContext| {
            let count = Arc::clone(&count);
            async move {
                let answer = ctx.input_responses().and_then(|r| r.raw("region"));
                if let (Some(UPSTREAM_STATE), Some(answer)) = (ctx.request_state(), answer) {
                    count.fetch_add(1, Ordering::SeqCst);
                    let text = ask::text(format!("{who} got {}", answer.get()));
                    return Ok(CallToolOutcome::Complete(CallToolResult::new(vec![text])));
                }
                let form = json!({"type": "object", "properties": {"region": {"type": "string"}}});
                let question = ask::elicit_form("Which region?", form)?;
                Ok(ask::input_required([("region", question)], Some(UPSTREAM_STATE)).into())
            }
        });
    mcp.tool("stall")
        .description("Never answers")
        .run(|_: NoArgs, _ctx: ToolContext| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok("late")
        });
    (url(serve_default(mcp.server().unwrap()).await), completed)
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

/// A client that records the key of each question it is asked and answers it with
/// `answer`.
fn answering(
    asked: &Asked,
    answer: impl Fn(&InputContext) -> ElicitResult + Send + Sync + 'static,
) -> ClientBuilder {
    let asked = asked.clone();
    Client::builder("test-client", "1.0").on_elicitation(move |ctx, _params| {
        asked.record(ctx.key.clone());
        let answer = answer(&ctx);
        async move { Ok(answer) }
    })
}

async fn client_of(url: &str, token: &str, asked: &Asked) -> Client {
    let transport = HttpClientTransport::builder(url)
        .bearer_token(token)
        .build()
        .unwrap();
    recording_client(asked).connect(transport).await.unwrap()
}

/// The retry of `a.ask` through the gateway: its region answered, `state` echoed.
fn region_retry(state: Option<String>) -> CallToolRequestParams {
    let mut retry = call("a.ask");
    let mut answers = InputResponses::new();
    let region = ask::accept([("region", "eu-west-1")]);
    answers.insert("a.region", region.into()).unwrap();
    retry.input_responses = Some(answers);
    retry.request_state = state;
    retry
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
async fn each_caller_is_relayed_with_its_own_capabilities_however_calls_interleave() {
    // The upstream says whether the caller it was relayed declared elicitation: the
    // relayed `_meta` of one caller must never reach it for the other.
    let mcp = McpServer::new("mirror", "1");
    mcp.tool("declared")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let declared = ctx.meta().client_capabilities.elicitation.is_some();
            Ok::<_, tern_mcp::mcp::ToolError>(format!("elicitation: {declared}"))
        });
    let upstream = url(serve_default(mcp.server().unwrap()).await);
    let gw = gateway(vec![named("m", &upstream).await]).await;
    let asking = client_of(&gw, "alice", &Asked::default()).await;
    let transport = HttpClientTransport::builder(&gw)
        .bearer_token("bob")
        .build()
        .unwrap();
    let bare = Client::builder("bare", "1")
        .connect(transport)
        .await
        .unwrap();
    for _ in 0..3 {
        for (client, seen) in [
            (&asking, "elicitation: true"),
            (&bare, "elicitation: false"),
        ] {
            let result = client.call_tool("m.declared", json!({})).await.unwrap();
            assert_eq!(text_of(&result), seen);
        }
    }
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

    let done = client
        .request::<CallTool>(region_retry(Some(state)))
        .await
        .unwrap();
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
    let replay = region_retry(asked.request_state);
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

/// Consent to a trip, as the gateway's policy asks it.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct Consent {
    /// Book both legs?
    book: bool,
}

/// A gateway serving `trip` (flights' and hotels' `ask` at once), its policy asking
/// consent before `trip`; a client answering every question it is asked, `book` as given.
/// A gateway in front of two upstreams that ask, composing `trip` with a policy that
/// asks the caller's consent; its URL, and how many calls each upstream completed.
async fn trip_url() -> (String, [Arc<AtomicUsize>; 2]) {
    let (flights, flown) = counted_upstream("flights").await;
    let (hotels, stayed) = counted_upstream("hotels").await;
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), json!("object"));
    let gw = Gateway::new("gateway", "1")
        .upstream(named("flights", &flights).await)
        .upstream(named("hotels", &hotels).await)
        .compose(Tool::new(schema, "trip"), ["flights.ask", "hotels.ask"])
        .policy::<Elicit<Consent>, _>(
            |tool| tool == "trip",
            |_, consent| matches!(consent, Elicit::Accepted(Consent { book: true })),
        );
    let http = HttpServer::new(gw.build().unwrap());
    (url(serve(http).await), [flown, stayed])
}

async fn trip_gateway(book: bool) -> (Client, Asked, [Arc<AtomicUsize>; 2]) {
    let (gw, completed) = trip_url().await;
    let asked = Asked::default();
    let client = answering(&asked, move |ctx| {
        assert_eq!(ctx.round, 1, "every question in the first round");
        match ctx.key.as_deref() {
            Some("gateway.elicit_consent") => ask::accept([("book", book)]),
            _ => ask::accept([("region", "eu-west-1")]),
        }
    })
    .connect(HttpClientTransport::builder(&gw).build().unwrap())
    .await
    .unwrap();
    (client, asked, completed)
}

#[tokio::test]
async fn a_caller_that_declared_no_elicitation_is_not_asked_through_the_gateway() {
    let (gw, completed) = trip_url().await;
    let client = Client::builder("no-forms", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(HttpClientTransport::builder(&gw).build().unwrap())
        .await
        .unwrap();
    let refused = client.call_tool("trip", json!({})).await.unwrap_err();
    assert!(
        refused.rpc().is_some_and(|e| e.code == -32021),
        "the questions are held to the caller's own capabilities: {refused:?}"
    );
    assert!(
        completed.iter().all(|c| c.load(Ordering::SeqCst) == 0),
        "no upstream acted"
    );
}

#[tokio::test]
async fn two_upstreams_and_the_gateways_policy_ask_in_one_round_answered_in_one_retry() {
    let (client, asked, completed) = trip_gateway(true).await;
    let tools = client.list_all::<ListTools>().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "trip"),
        "the composite tool is listed"
    );

    let result = client.call_tool("trip", json!({})).await.unwrap();
    let mut keys = asked.keys();
    keys.sort();
    assert_eq!(
        keys,
        [
            Some("flights.region".to_owned()),
            Some("gateway.elicit_consent".to_owned()),
            Some("hotels.region".to_owned()),
        ]
    );
    let texts: Vec<String> = result
        .content
        .iter()
        .map(|c| {
            serde_json::to_value(c).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].starts_with("flights got "), "{texts:?}");
    assert!(texts[1].starts_with("hotels got "), "{texts:?}");
    assert_eq!(result.is_error, None);
    assert!(completed.iter().all(|c| c.load(Ordering::SeqCst) == 1));
}

#[tokio::test]
async fn a_policy_that_refuses_ends_the_call_before_the_upstreams_get_their_answers() {
    let (client, _asked, completed) = trip_gateway(false).await;
    let result = client.call_tool("trip", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text_of(&result),
        "The gateway's policy did not allow this call of trip."
    );
    assert!(
        completed.iter().all(|c| c.load(Ordering::SeqCst) == 0),
        "no upstream acted"
    );
}

#[tokio::test]
async fn until_the_policy_is_answered_the_upstreams_get_no_answers() {
    let (client, _asked, completed) = trip_gateway(true).await;
    let retry = |state: Option<String>, consent: serde_json::Value| {
        let mut params = call("trip");
        let mut answers = InputResponses::new();
        for key in ["flights.region", "hotels.region"] {
            let region = ask::accept([("region", "eu-west-1")]);
            answers.insert(key, region.into()).unwrap();
        }
        let consent = serde_json::value::to_raw_value(&consent).unwrap();
        answers
            .insert_raw("gateway.elicit_consent", &consent)
            .unwrap();
        params.input_responses = Some(answers);
        params.request_state = state;
        params
    };
    let state_of = |outcome: CallToolOutcome| match outcome {
        CallToolOutcome::InputRequired(asked) => asked.request_state,
        CallToolOutcome::Complete(done) => panic!("not yet: {done:?}"),
    };
    let first = client.request::<CallTool>(call("trip")).await.unwrap();
    // A consent that does not fit its form is asked again, and the parts wait.
    let unfit = json!({"action": "accept", "content": {"book": "yes"}});
    let second = client
        .request::<CallTool>(retry(state_of(first), unfit))
        .await
        .unwrap();
    assert!(completed.iter().all(|c| c.load(Ordering::SeqCst) == 0));
    let fit = json!({"action": "accept", "content": {"book": true}});
    let third = client
        .request::<CallTool>(retry(state_of(second), fit))
        .await
        .unwrap();
    assert!(matches!(third, CallToolOutcome::Complete(_)), "{third:?}");
    assert!(completed.iter().all(|c| c.load(Ordering::SeqCst) == 1));
}

#[tokio::test]
async fn gateway_instances_sharing_keys_serve_each_others_retries() {
    let a = upstream("a").await;
    let keys = [[7u8; 32]];
    let mut urls = Vec::new();
    for _ in 0..2 {
        let gateway = Gateway::new("gateway", "1")
            .upstream(named("a", &a).await)
            .seal(RequestStateSecurity::keys(keys).unwrap());
        urls.push(url(serve(HttpServer::new(gateway.build().unwrap())).await));
    }
    let connect = |url: &String| {
        let transport = HttpClientTransport::builder(url).build().unwrap();
        recording_client(&Asked::default()).connect(transport)
    };
    let (first, second) = (
        connect(&urls[0]).await.unwrap(),
        connect(&urls[1]).await.unwrap(),
    );
    let CallToolOutcome::InputRequired(asked) =
        first.request::<CallTool>(call("a.ask")).await.unwrap()
    else {
        panic!("asks first")
    };
    let done = second
        .request::<CallTool>(region_retry(asked.request_state))
        .await
        .unwrap();
    let CallToolOutcome::Complete(done) = done else {
        panic!("the other instance completes it: {done:?}")
    };
    assert!(text_of(&done).starts_with("a got "), "{}", text_of(&done));
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
    let client = answering(&asked, |_| ask::accept([("seat", "7F")]))
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
