//! One resolver tool serves both eras: input-required rounds on 2026-07-28, real
//! server-to-client requests on a 2025-11-25 session, answered by the same callback,
//! in memory and over Streamable HTTP.

use std::sync::{Arc, Mutex};
use tern_tests::text_of;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tern_mcp::client::{Client, EraMode};
use tern_mcp::http::HttpServer;
use tern_mcp::mcp::{Elicit, McpServer, Resolve, ToolError, form_content};
use tern_mcp::testing::{End, TestClient};
use tern_mcp::transport::http::client::HttpClientTransport;
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::InputRequest;

#[derive(Deserialize, JsonSchema)]
struct Args {
    name: String,
}

/// Which region should the database live in?
#[derive(Clone, Debug, Deserialize, JsonSchema)]
struct Region {
    region: String,
}

/// Asked after the region: a second level of questions.
#[derive(Clone, Debug)]
struct Confirm(bool);

impl Resolve<Args> for Confirm {
    type Deps = (Elicit<Region>,);
    fn key() -> String {
        "confirm".into()
    }
    fn question(args: &Args, _deps: &Self::Deps) -> Result<InputRequest, ToolError> {
        Ok(tern_mcp::ask::elicit_form(
            format!("Create {}?", args.name),
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
        )?)
    }
    fn from_response(response: &serde_json::value::RawValue, _deps: &Self::Deps) -> Option<Self> {
        form_content(response)?.get("ok")?.as_bool().map(Confirm)
    }
}

/// What the callback saw: the request's key and the question.
type Seen = Arc<Mutex<Vec<(Option<String>, String)>>>;

fn server() -> McpServer {
    let mcp = McpServer::new("Provisioner", "1.0.0");
    mcp.tool("provision").resolve(
        |args: Args, region: Elicit<Region>, confirm: Confirm| async move {
            let region = region.accepted().map(|r| r.region).unwrap_or_default();
            Ok(format!(
                "Provisioned '{}' in {region} (confirmed: {}).",
                args.name, confirm.0
            ))
        },
    );
    mcp
}

fn recording_client(seen: &Seen) -> impl Fn() -> tern_mcp::client::ClientBuilder + '_ {
    move || {
        let seen = Arc::clone(seen);
        Client::builder("c", "1").on_elicitation(move |ctx, params| {
            let seen = Arc::clone(&seen);
            async move {
                let tern_mcp::types::v2026_07_28::ElicitRequestParams::Form(form) = params else {
                    panic!("a form was expected");
                };
                seen.lock()
                    .unwrap()
                    .push((ctx.key.clone(), form.message.clone()));
                Ok(if form.message.starts_with("Create") {
                    tern_mcp::ask::accept([("ok", true)])
                } else {
                    tern_mcp::ask::accept([("region", "eu-west-1")])
                })
            }
        })
    }
}

#[tokio::test]
async fn one_resolver_tool_serves_both_eras_through_the_same_callback() {
    let seen: Seen = Arc::default();
    let builder = recording_client(&seen);
    let mcp = server();

    let (client_end, server_end) = memory::pair();
    let s = mcp.server().unwrap();
    tokio::spawn(async move { s.serve(server_end).await });
    let modern = builder()
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    let result = modern
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(
        text_of(&result),
        "Provisioned 'orders' in eu-west-1 (confirmed: true)."
    );

    let (client_end, server_end) = memory::pair();
    let s = mcp.server().unwrap();
    tokio::spawn(async move { s.serve(server_end).await });
    let legacy = builder()
        .era(EraMode::Session)
        .connect(client_end)
        .await
        .unwrap();
    assert_eq!(legacy.protocol_version(), "2025-11-25");
    let result = legacy
        .call_tool("provision", json!({"name": "billing"}))
        .await
        .unwrap();
    assert_eq!(
        text_of(&result),
        "Provisioned 'billing' in eu-west-1 (confirmed: true)."
    );

    let seen = seen.lock().unwrap();
    let keys: Vec<Option<&str>> = seen.iter().map(|(k, _)| k.as_deref()).collect();
    assert_eq!(
        keys,
        vec![Some("elicit_region"), Some("confirm"), None, None],
        "input requests carry keys; legacy requests do not"
    );
    assert_eq!(seen[0].1, seen[2].1, "the same question in both eras");
}

#[tokio::test]
async fn one_resolver_tool_serves_both_eras_over_http() {
    let seen: Seen = Arc::default();
    let builder = recording_client(&seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = HttpServer::new(server().server().unwrap());
    tokio::spawn(http.serve(listener, std::future::pending()));

    for (mode, name) in [
        (EraMode::Stateless, "orders"),
        (EraMode::Session, "billing"),
    ] {
        let transport = HttpClientTransport::builder(&url).build().unwrap();
        let client = builder()
            .era(mode)
            .connect(Arc::new(transport))
            .await
            .unwrap();
        let result = client
            .call_tool("provision", json!({"name": name}))
            .await
            .unwrap();
        assert_eq!(
            text_of(&result),
            format!("Provisioned '{name}' in eu-west-1 (confirmed: true).")
        );
    }
    let seen = seen.lock().unwrap();
    let keys: Vec<Option<&str>> = seen.iter().map(|(k, _)| k.as_deref()).collect();
    assert_eq!(
        keys,
        vec![Some("elicit_region"), Some("confirm"), None, None]
    );
}

/// Through the test kit: the resolver asks for the region in one round, then, with the
/// region known, for the confirmation in the next; a declined region still reaches the
/// confirmation (the tool decides what a decline means), and an unscripted question
/// stops the call at that question.
#[tokio::test]
async fn the_resolver_asks_region_then_confirmation_one_round_each() {
    let mcp = server();
    TestClient::new(&mcp)
        .await
        .unwrap()
        .answer("elicit_region", json!({"region": "eu-west-1"}))
        .answer_question("Create orders?", json!({"ok": true}))
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .assert_rounds(2)
        .assert_asks_once("elicit_region")
        .assert_asks_once("confirm")
        .assert_text("Provisioned 'orders' in eu-west-1 (confirmed: true).");

    TestClient::new(&mcp)
        .await
        .unwrap()
        .decline("elicit_region")
        .answer("confirm", json!({"ok": false}))
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .assert_text("Provisioned 'orders' in  (confirmed: false).");

    let stopped = TestClient::new(&mcp)
        .await
        .unwrap()
        .answer("elicit_region", json!({"region": "eu-west-1"}))
        .call_tool("provision", json!({"name": "orders"}))
        .await;
    stopped.assert_rounds(2);
    assert!(
        matches!(&stopped.end, End::Unanswered { key, question } if key == "confirm" && question == "Create orders?"),
        "{stopped}"
    );
}

/// A resolver tool on a 2025-11-25 session asks its client under `policy`, the bounds
/// a session's rounds keep to; the client's answers take `delay`. The error, and the
/// questions the client was asked.
async fn resolver_on_a_session(
    policy: tern_mcp::server::SessionInput,
    delay: std::time::Duration,
) -> (tern_mcp::Error, usize) {
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let (client_end, server_end) = memory::pair();
    let s = server().fulfil_input_on_sessions(policy).server().unwrap();
    tokio::spawn(async move { s.serve(server_end).await });
    let client = Client::builder("c", "1")
        .on_elicitation(move |_ctx, _params| {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move {
                tokio::time::sleep(delay).await;
                Ok(tern_mcp::ask::accept([("region", "eu-west-1")]))
            }
        })
        .era(EraMode::Session)
        .connect(client_end)
        .await
        .unwrap();
    let err = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap_err();
    (err, asked.load(std::sync::atomic::Ordering::Relaxed))
}

fn rpc_code(err: &tern_mcp::Error) -> i64 {
    match err {
        tern_mcp::Error::Rpc(rpc) => rpc.code,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_resolver_on_a_session_keeps_to_the_sessions_round_cap() {
    // The tool needs two rounds (the region, then the confirmation): one is allowed.
    let mut policy = tern_mcp::server::SessionInput::default();
    policy.max_rounds = 1;
    let (err, asked) = resolver_on_a_session(policy, std::time::Duration::ZERO).await;
    assert_eq!(rpc_code(&err), -32603, "{err}");
    assert_eq!(asked, 1, "the first round was asked, the second refused");
}

#[tokio::test]
async fn a_resolver_on_a_session_gives_up_on_a_silent_client_at_the_sessions_deadline() {
    let mut policy = tern_mcp::server::SessionInput::default();
    policy.timeout = std::time::Duration::from_millis(200);
    let started = std::time::Instant::now();
    let (err, asked) = resolver_on_a_session(policy, std::time::Duration::from_secs(30)).await;
    assert_eq!(rpc_code(&err), -32603, "{err}");
    assert!(err.to_string().contains("Timed out"), "{err}");
    assert_eq!(asked, 1);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
