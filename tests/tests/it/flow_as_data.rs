//! A flow kept as data: a call started in one process and finished from its
//! `PendingCall` JSON in others, over HTTP to one real server; and the name of the
//! server that asks, told to the input callback.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tern_mcp::Error;
use tern_mcp::client::{Client, EraMode, PendingCall, Step};
use tern_mcp::types::v2026_07_28::{CallToolRequestParams, InputResponse, InputResponses, method};
use tokio::process::Command;

use crate::client_surface::{connect, fleet_server};

/// Runs one leg of the flow in a child process of its own; returns what it printed.
async fn leg(phase: &str, url: &str, file: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pending_flow"))
        .args([phase, url, file.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{phase}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn a_flow_started_in_one_process_is_finished_from_its_json_in_others() {
    let (_server, url) = fleet_server("127.0.0.1:0").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pending.json");

    assert_eq!(leg("start", &url, &file).await, "pending round 1");
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(saved["method"], "tools/call");
    assert_eq!(saved["params"]["name"], "deploy");
    assert!(saved["requestState"].is_string());
    assert!(saved["inputRequests"]["region"].is_object());

    // Another process answers the region and is asked to confirm; a third finishes.
    assert_eq!(leg("step", &url, &file).await, "pending round 2");
    let done = leg("step", &url, &file).await;
    assert!(
        done.starts_with("done: Deployed 'orders' to eu-north"),
        "{done}"
    );
}

#[tokio::test]
async fn a_pending_call_is_resumed_only_as_its_method_and_with_answers_it_asked_for() {
    let (_server, url) = fleet_server("127.0.0.1:0").await;
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let c = connect(
        Client::builder("flow", "1")
            .era(EraMode::Stateless)
            .capabilities(capabilities),
        &url,
    )
    .await;
    let mut params = CallToolRequestParams::new("deploy");
    params.arguments = json!({"service": "orders"}).as_object().map(Into::into);
    let Step::NeedsInput(pending) = c.start::<method::CallTool>(params).await.unwrap() else {
        panic!("deploy asks first");
    };

    let err = c
        .resume::<method::GetPrompt>(pending.clone(), InputResponses::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Resume(_)), "{err}");

    let mut stray = InputResponses::new();
    stray
        .insert(
            "favourite-colour",
            InputResponse::Elicit(tern_mcp::ask::accept([("colour", "red")])),
        )
        .unwrap();
    let err = c
        .resume::<method::CallTool>(pending.clone(), stray)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("favourite-colour"), "{err}");

    // A state tampered with on disk is the server's to refuse, as its own error.
    let mut tampered = serde_json::to_value(&pending).unwrap();
    tampered["requestState"] = json!("t1.forged");
    let tampered: PendingCall = serde_json::from_value(tampered).unwrap();
    let mut answers = InputResponses::new();
    answers
        .insert(
            "region",
            InputResponse::Elicit(tern_mcp::ask::accept([("region", "eu")])),
        )
        .unwrap();
    let err = c
        .resume::<method::CallTool>(tampered, answers)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::StateRejected(_)), "{err}");
}

#[tokio::test]
async fn the_input_callback_is_told_the_name_of_the_server_asking() {
    let (_server, url) = fleet_server("127.0.0.1:0").await;
    let named = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&named);
    let builder = Client::builder("flow", "1").on_elicitation(move |ctx, _p| {
        seen.lock().unwrap().push(ctx.server.clone());
        async move {
            Ok(match ctx.key.as_deref() {
                Some("region") => tern_mcp::ask::accept([("region", "eu")]),
                _ => tern_mcp::ask::accept([("confirm", true)]),
            })
        }
    });
    let transport = tern_mcp::transport::http::client::HttpClientTransport::builder(&url)
        .build()
        .unwrap();
    // Discovery (server/discover) is where the client learns the name.
    let c = builder.connect(Arc::new(transport)).await.unwrap();
    assert_eq!(c.server_name(), Some("fleet"));
    c.call_tool("deploy", json!({"service": "orders"}))
        .await
        .unwrap();
    assert_eq!(
        *named.lock().unwrap(),
        [Some(Arc::from("fleet")), Some(Arc::from("fleet"))]
    );
}
