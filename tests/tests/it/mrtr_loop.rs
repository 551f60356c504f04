//! The multi round-trip loop end to end: the low-level server answers input-required, the
//! client answers and retries. Over the in-memory transport, tapped to see the wire; the
//! tests on a fixture server run over every transport.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tern_mcp::client::ClientLimits;
use tern_tests::Stopped;
use tern_tests::fixtures::Fixture;
use tern_tests::seed::{self, answered_region as region_of};
use tern_tests::{Asked, recording_client};

use crate::transports::over_each_transport;

use serde_json::{Value, json};
use tern_mcp::Error;
use tern_mcp::ask;
use tern_mcp::client::Client;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::server::{RequestContext, Server, ServerBuilder};
use tern_mcp::transport::memory;
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ElicitRequestParams, GetPromptOutcome,
    GetPromptRequestParams, GetPromptResult, Outcome, PromptMessage, ReadResourceOutcome,
    ReadResourceRequestParams, ReadResourceResult, Role, TextResourceContents, method,
};
use tern_tests::wire::{RawPeer, Recording, Tap, meta};

type Log<T> = Arc<Mutex<Vec<T>>>;

fn done(text: &str) -> CallToolOutcome {
    CallToolResult::new(vec![ask::text(text)]).into()
}

fn text_of(result: &CallToolResult) -> String {
    match &result.content[0] {
        tern_mcp::types::v2026_07_28::ContentBlock::Text(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

/// A server with one tool, serving on one end of a tapped in-memory pair; returns the
/// client end and the recording of what the client sent.
fn serve(builder: ServerBuilder) -> (memory::MemoryTransport, Recording) {
    let server = builder.build().unwrap();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    let recording = Recording::default();
    // The recording taps the client's sends: wrap the client end.
    (client_end, recording)
}

async fn answering_client(transport: memory::MemoryTransport, recording: &Recording) -> Client {
    Client::builder("test-client", "1.0")
        .on_elicitation(|_ctx, _params| async { Ok(seed::answer_region()) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Tap::new(transport, recording.clone()))
        .await
        .unwrap()
}

#[tokio::test]
async fn one_round() {
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        |_ctx, params| async move {
            Ok(match region_of(&params) {
                None => ask::input_required([("region", seed::ask_region())], Some("v1")).into(),
                Some(r) => done(&format!("in {r}")),
            })
        },
    ));
    let client = answering_client(transport, &recording).await;
    let result = client
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "in eu-west-1");
    assert_eq!(recording.requests().len(), 2);
}

#[tokio::test]
async fn several_rounds_with_a_new_state_each_round() {
    // The fixture hands out round1, round2, round3 and refuses any state it did not give,
    // so finishing after three answered rounds means each state came back as given.
    let asked = Asked::default();
    let asked = &asked;
    over_each_transport(
        Fixture::ThreeRounds,
        || recording_client(asked),
        |client| async move {
            let result = client.call_tool("t", json!({})).await.unwrap();
            assert_eq!(text_of(&result), "finished after round3");
            assert_eq!(asked.take().len(), 3, "one answer per round");
        },
    )
    .await;
}

#[tokio::test]
async fn requests_of_one_round_run_concurrently() {
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        |_ctx, params| async move {
            Ok(match params.input_responses {
                Some(r) if r.len() == 3 => done("all three answered"),
                _ => ask::input_required(
                    [
                        ("a", seed::ask_region()),
                        ("b", seed::ask_region()),
                        ("c", seed::ask_region()),
                    ],
                    None,
                )
                .into(),
            })
        },
    ));
    // Each callback waits until all three are running: run one by one, they never would.
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    let client = Client::builder("c", "1")
        .on_elicitation(move |_ctx, _params| {
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                Ok(ask::accept([("region", "x")]))
            }
        })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Tap::new(transport, recording))
        .await
        .unwrap();
    let result = tokio::time::timeout(Duration::from_secs(5), client.call_tool("t", json!({})))
        .await
        .expect("the three requests of one round did not run concurrently")
        .unwrap();
    assert_eq!(text_of(&result), "all three answered");
}

#[tokio::test]
async fn the_round_cap_defaults_to_ten_and_names_itself() {
    let asked = Asked::default();
    let asked = &asked;
    over_each_transport(
        Fixture::AlwaysAsking,
        || recording_client(asked),
        |client| async move {
            let err = client.call_tool("t", json!({})).await.unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Input(tern_mcp::InputError::RoundsExceeded { max_rounds: 10 })
                ),
                "{err:?}"
            );
            assert!(err.to_string().contains("10 rounds"), "{err}");
            // Ten rounds answered: the first call and ten retries, the last one refused.
            assert_eq!(asked.take().len(), 10);
        },
    )
    .await;
}

#[tokio::test]
async fn the_round_cap_can_be_configured() {
    let asked = Asked::default();
    let asked = &asked;
    over_each_transport(
        Fixture::AlwaysAsking,
        || {
            recording_client(asked)
                .limits(tern_tests::tuned(|l: &mut ClientLimits| l.max_rounds = 3))
        },
        |client| async move {
            let err = client.call_tool("t", json!({})).await.unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Input(tern_mcp::InputError::RoundsExceeded { max_rounds: 3 })
                ),
                "{err:?}"
            );
            assert!(
                err.to_string().contains("ClientLimits::max_rounds = 3"),
                "{err}"
            );
            assert_eq!(asked.take().len(), 3);
        },
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_state_only_round_backs_off_50_ms_doubling_to_250_and_resets_after_requests() {
    // Rounds: five state-only, one with a request, one state-only, then complete.
    let times: Log<tokio::time::Instant> = Arc::default();
    let log = Arc::clone(&times);
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        move |_ctx, _params| {
            let log = Arc::clone(&log);
            async move {
                let n = {
                    let mut l = log.lock().unwrap();
                    l.push(tokio::time::Instant::now());
                    l.len()
                };
                Ok(match n {
                    1..=5 => ask::input_required(Vec::<(String, _)>::new(), Some("working")).into(),
                    6 => {
                        ask::input_required([("region", seed::ask_region())], Some("asked")).into()
                    }
                    7 => ask::input_required(Vec::<(String, _)>::new(), Some("working")).into(),
                    _ => done("done"),
                })
            }
        },
    ));
    let client = answering_client(transport, &recording).await;
    client.call_tool("t", json!({})).await.unwrap();
    let times = times.lock().unwrap();
    let gaps: Vec<u128> = times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect();
    assert_eq!(
        gaps,
        vec![50, 100, 200, 250, 250, 0, 50],
        "gaps between calls in ms"
    );
}

#[tokio::test]
async fn request_state_is_echoed_byte_for_byte() {
    let state =
        "{\"step\":1,\"note\":\"ünïcødé ✓ 🦀\",\"esc\":\"\\\"quoted\\\" \\\\ \\n\"}  trailing ";
    let seen: Log<Option<String>> = Arc::default();
    let log = Arc::clone(&seen);
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        move |_ctx, params| {
            let log = Arc::clone(&log);
            async move {
                log.lock().unwrap().push(params.request_state.clone());
                Ok(match params.request_state {
                    None => {
                        ask::input_required([("region", seed::ask_region())], Some(state)).into()
                    }
                    Some(_) => done("ok"),
                })
            }
        },
    ));
    let client = answering_client(transport, &recording).await;
    client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(seen.lock().unwrap()[1].as_deref(), Some(state));
    assert_eq!(
        recording.requests()[1]["params"]["requestState"],
        json!(state)
    );
}

#[tokio::test]
async fn no_state_is_sent_when_the_server_gave_none() {
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        |_ctx, params| async move {
            Ok(match region_of(&params) {
                None => ask::input_required([("region", seed::ask_region())], None).into(),
                Some(_) => done("ok"),
            })
        },
    ));
    let client = answering_client(transport, &recording).await;
    client.call_tool("t", json!({})).await.unwrap();
    let retry = &recording.requests()[1]["params"];
    assert!(retry.get("requestState").is_none(), "{retry}");
    assert!(retry.get("inputResponses").is_some(), "{retry}");
}

#[tokio::test]
async fn each_retry_has_a_new_id_and_the_same_method_and_params() {
    let (transport, recording) = serve(Fixture::AlwaysAsking.builder());
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(ask::accept([("region", "x")])) })
        .limits(tern_tests::tuned(|l: &mut ClientLimits| l.max_rounds = 3))
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Tap::new(transport, recording.clone()))
        .await
        .unwrap();
    let _ = client
        .call_tool("provision", json!({"name": "orders"}))
        .await;
    let requests = recording.requests();
    assert_eq!(requests.len(), 4);
    let mut ids: Vec<String> = requests.iter().map(|r| r["id"].to_string()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "ids repeat: {ids:?}");
    for r in &requests {
        assert_eq!(r["method"], "tools/call");
        assert_eq!(r["params"]["name"], "provision");
        assert_eq!(r["params"]["arguments"], json!({"name": "orders"}));
    }
}

#[tokio::test]
async fn concurrent_calls_do_not_share_answers_or_state() {
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        |_ctx, params| async move {
            let who = params
                .arguments
                .as_ref()
                .unwrap()
                .get("who")
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned();
            Ok(
                match (params.request_state.as_deref(), region_of(&params)) {
                    (None, _) => {
                        let q = ask::elicit_form(
                            format!("for {who}"),
                            json!({"type": "object", "properties": {"region": {"type": "string"}}}),
                        )
                        .unwrap();
                        ask::input_required([("region", q)], Some(&format!("state-{who}"))).into()
                    }
                    (Some(state), Some(region)) => {
                        assert_eq!(state, format!("state-{who}"), "state leaked between calls");
                        assert_eq!(
                            region,
                            format!("answer-for {who}"),
                            "answer leaked between calls"
                        );
                        done(&who)
                    }
                    (Some(_), None) => panic!("retry without an answer"),
                },
            )
        },
    ));
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, params| async move {
            let ElicitRequestParams::Form(form) = params else {
                panic!("form expected")
            };
            tokio::task::yield_now().await;
            Ok(ask::accept([(
                "region",
                format!("answer-{}", form.message),
            )]))
        })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Tap::new(transport, recording))
        .await
        .unwrap();
    let calls = (0..8).map(|i| {
        let client = client.clone();
        async move {
            client
                .call_tool("t", json!({"who": format!("caller{i}")}))
                .await
        }
    });
    let results = futures_join_all(calls).await;
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(text_of(&r.unwrap()), format!("caller{i}"));
    }
}

async fn futures_join_all<F>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// A server that does not follow the rules, scripted message by message.
async fn rogue_server(script: Vec<Value>) -> memory::MemoryTransport {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move {
        let mut peer = RawPeer::new(server_end);
        for result in script {
            let request = peer.recv().await;
            let mut response = json!({"jsonrpc": "2.0", "id": request["id"]});
            if let Some(error) = result.get("error") {
                response["error"] = error.clone();
            } else {
                response["result"] = result;
            }
            peer.send(response).await;
        }
    });
    client_end
}

#[tokio::test]
async fn a_request_type_without_a_callback_is_a_clear_error() {
    let transport = rogue_server(vec![json!({
        "resultType": "input_required",
        "inputRequests": {"summary": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}}
    })])
    .await;
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(ask::accept([("region", "x")])) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(
        matches!(&err, Error::Input(tern_mcp::InputError::NoCallback { method }) if method == "sampling/createMessage"),
        "{err:?}"
    );
    assert!(err.to_string().contains("on_sampling"), "{err}");
}

#[tokio::test]
async fn an_error_response_aborts_the_loop() {
    let transport = rogue_server(vec![
        json!({"resultType": "input_required", "inputRequests": {"r": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}}}),
        json!({"error": {"code": -32603, "message": "Internal error"}}),
    ])
    .await;
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(ask::accept([("region", "x")])) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!((rpc.code, rpc.message.as_str()), (-32603, "Internal error"));
}

#[tokio::test]
async fn a_refused_state_starts_the_call_over_once_then_is_its_own_error() {
    let asked = json!({"resultType": "input_required", "requestState": "s", "inputRequests": {"r": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}}});
    let refused = json!({"error": {"code": -32602, "message": "Invalid or expired requestState"}});
    // Refused, started over from round 1, refused again: the second time it fails.
    let transport = rogue_server(vec![
        asked.clone(),
        refused.clone(),
        asked.clone(),
        refused.clone(),
    ])
    .await;
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(ask::accept([("region", "x")])) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(err, Error::StateRejected(_)), "{err:?}");
    // Turned off, the first refusal fails the call.
    let transport = rogue_server(vec![asked, refused]).await;
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(ask::accept([("region", "x")])) })
        .restart_on_rejected_state(false)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(err, Error::StateRejected(_)), "{err:?}");
}

#[tokio::test]
async fn a_callback_error_aborts_the_round() {
    let transport = rogue_server(vec![json!({
        "resultType": "input_required",
        "inputRequests": {"r": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}}
    })])
    .await;
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Err(RpcError::internal("the user closed the window")) })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(
        matches!(&err, Error::Input(tern_mcp::InputError::Callback { method, .. }) if method == "elicitation/create"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_result_without_result_type_is_complete() {
    let transport = rogue_server(vec![
        json!({"content": [{"type": "text", "text": "from an older server"}]}),
    ])
    .await;
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(text_of(&result), "from an older server");
}

#[tokio::test]
async fn an_unknown_result_type_is_an_error() {
    let transport = rogue_server(vec![json!({"resultType": "teleport", "content": []})]).await;
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(
        matches!(&err, Error::Protocol(tern_mcp::ProtocolError::UnknownResultType(t)) if t == "teleport"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_task_in_the_shape_of_the_old_tasks_is_a_decoding_error() {
    // The 2025-11-25 shape nested the task; the extension's is flat.
    let transport =
        rogue_server(vec![json!({"resultType": "task", "task": {"taskId": "1"}})]).await;
    let client = Client::builder("c", "1")
        .extension(tern_mcp::tasks::ClientTasks)
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Protocol(tern_mcp::ProtocolError::Decode { .. })
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_result_that_is_not_json_fails_its_call_and_not_the_connection() {
    // The result is found by its extent and checked when read into its type: a broken
    // one fails that call as a decoding error; the next answer on the connection reads.
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move {
        let mut peer = RawPeer::new(server_end);
        let first = peer.recv().await;
        peer.send_text(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"a}}]"}}],"x":tru}}}}"#,
            first["id"]
        ))
        .await;
        let second = peer.recv().await;
        peer.send(json!({"jsonrpc": "2.0", "id": second["id"],
            "result": {"resultType": "complete", "content": [{"type": "text", "text": "fine"}]}}))
            .await;
    });
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();
    // Bounded: a reader that dropped the broken response would leave the call waiting.
    let within = |call| tokio::time::timeout(std::time::Duration::from_secs(10), call);
    let err = within(client.call_tool("t", json!({})))
        .await
        .expect("the broken response ends the call")
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Protocol(tern_mcp::ProtocolError::Decode { .. })
        ),
        "{err:?}"
    );
    let result = within(client.call_tool("t", json!({})))
        .await
        .expect("the next response ends its call")
        .unwrap();
    assert_eq!(text_of(&result), "fine");
}

#[tokio::test]
async fn a_task_for_a_prompt_is_an_invalid_answer() {
    let created = json!({"resultType": "task", "taskId": "t1", "status": "working",
        "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:00Z", "ttlMs": null});
    let transport = rogue_server(vec![created]).await;
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.get_prompt("p", None).await.unwrap_err();
    assert!(
        matches!(&err, Error::Protocol(tern_mcp::ProtocolError::UnknownResultType(t)) if t == "task"),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_input_required_result_with_neither_requests_nor_state_is_an_error() {
    let transport = rogue_server(vec![json!({"resultType": "input_required"})]).await;
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(transport)
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Protocol(tern_mcp::ProtocolError::EmptyInputRequired)
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn prompts_and_resource_templates_run_the_same_loop() {
    let server = Server::builder("s", "1")
        .handle::<method::GetPrompt, _, _>(|_ctx, params: GetPromptRequestParams| async move {
            let audience = params
                .input_responses
                .as_ref()
                .and_then(|r| r.get::<method::Elicit>("audience"))
                .and_then(Result::ok)
                .and_then(|a| a.content)
                .and_then(|c| c.get("audience").and_then(|v| v.as_str().map(str::to_owned)));
            let outcome: GetPromptOutcome = match audience {
                None => ask::input_required([("audience", ask::elicit_form("Who is it for?", json!({"type": "object", "properties": {"audience": {"type": "string"}}})).unwrap())], None).into(),
                Some(a) => GetPromptResult::new(vec![PromptMessage::new(ask::text(format!("Write a briefing for {a}.")), Role::User)]).into(),
            };
            Ok(outcome)
        })
        .handle::<method::ReadResource, _, _>(|_ctx, params: ReadResourceRequestParams| async move {
            let outcome: ReadResourceOutcome = match params.request_state.as_deref() {
                None => ask::input_required([("roots", ask::list_roots())], Some("reading")).into(),
                Some(_) => {
                    let roots = params.input_responses.as_ref().unwrap().get::<method::ListRoots>("roots").unwrap().unwrap();
                    let text = format!("{} sees {}", params.uri, roots.roots[0].uri);
                    ReadResourceResult::new(vec![TextResourceContents::new(text, params.uri.clone()).into()]).into()
                }
            };
            Ok(outcome)
        })
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    let client = Client::builder("c", "1")
        .on_elicitation(|_ctx, _p| async { Ok(ask::accept([("audience", "the board")])) })
        .on_list_roots(|_ctx, _p| async {
            Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///work"}]})).unwrap())
        })
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(client_end)
        .await
        .unwrap();

    let prompt = client.get_prompt("briefing", None).await.unwrap();
    let tern_mcp::types::v2026_07_28::ContentBlock::Text(t) = &prompt.messages[0].content else {
        panic!()
    };
    assert_eq!(t.text, "Write a briefing for the board.");

    let resource = client.read_resource("notes://project/1").await.unwrap();
    let json = serde_json::to_value(&resource.contents[0]).unwrap();
    assert_eq!(json["text"], "notes://project/1 sees file:///work");
}

#[tokio::test]
async fn asking_for_a_capability_the_client_did_not_declare_is_32021() {
    let (transport, recording) = serve(Server::builder("s", "1").handle::<method::CallTool, _, _>(
        |_ctx, _params| async move {
            Ok(ask::input_required(
                [
                    ("summary", ask::sample("Summarise", 50)),
                    ("region", seed::ask_region()),
                ],
                None,
            )
            .into())
        },
    ));
    // This client answers elicitation only: no sampling capability is declared.
    let client = answering_client(transport, &recording).await;
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32021);
    assert_eq!(
        rpc.data.as_ref().unwrap()["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

async fn raw_server() -> RawPeer {
    let server = Server::builder("s", "1")
        .handle::<method::ListTools, _, _>(|_ctx, _p| async {
            Ok(tern_mcp::types::v2026_07_28::ListToolsResult::new(vec![]))
        })
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    RawPeer::new(client_end)
}

#[tokio::test]
async fn a_request_without_meta_is_32602() {
    let mut peer = raw_server().await;
    let response = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("_meta")
    );
    let response = peer
        .call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}))
        .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
}

#[tokio::test]
async fn an_unsupported_version_is_32022_with_supported_and_requested() {
    let mut peer = raw_server().await;
    let mut m = meta(json!({}));
    m["io.modelcontextprotocol/protocolVersion"] = json!("2024-11-05");
    let response = peer
        .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": m}}))
        .await;
    assert_eq!(response["error"]["code"], -32022, "{response}");
    assert_eq!(
        response["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2024-11-05"})
    );
}

#[tokio::test]
async fn results_carry_result_type_and_caching_fields() {
    let mut peer = raw_server().await;
    let response = peer.call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta(json!({}))}})).await;
    let result = &response["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(
        result["ttlMs"].is_number() && result["cacheScope"].is_string(),
        "{result}"
    );
    let response = peer.call(json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": meta(json!({}))}})).await;
    let result = &response["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["resultType"], "complete");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
}

fn stateful_tool(builder: ServerBuilder, seen: Log<Option<String>>) -> ServerBuilder {
    builder.handle::<method::CallTool, _, _>(move |_ctx, params| {
        let seen = Arc::clone(&seen);
        async move {
            seen.lock().unwrap().push(params.request_state.clone());
            Ok(match params.request_state.as_deref() {
                None => {
                    ask::input_required([("region", seed::ask_region())], Some("plain-state-42"))
                        .into()
                }
                Some(_) => done("ok"),
            })
        }
    })
}

#[tokio::test]
async fn without_sealing_state_crosses_the_wire_verbatim() {
    let seen: Log<Option<String>> = Arc::default();
    let (transport, recording) = serve(stateful_tool(Server::builder("s", "1"), Arc::clone(&seen)));
    let client = answering_client(transport, &recording).await;
    client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(
        recording.requests()[1]["params"]["requestState"],
        "plain-state-42"
    );
    assert_eq!(seen.lock().unwrap()[1].as_deref(), Some("plain-state-42"));
}

#[tokio::test]
async fn with_the_one_line_opt_in_state_is_sealed_on_the_wire_and_plain_for_the_handler() {
    let seen: Log<Option<String>> = Arc::default();
    let builder = stateful_tool(Server::builder("s", "1"), Arc::clone(&seen))
        .seal(RequestStateSecurity::ephemeral());
    let (transport, recording) = serve(builder);
    let client = answering_client(transport, &recording).await;
    client.call_tool("t", json!({"a": 1})).await.unwrap();
    let on_wire = recording.requests()[1]["params"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!on_wire.contains("plain-state-42"), "{on_wire}");
    assert!(on_wire.starts_with("t1."), "{on_wire}");
    assert_eq!(seen.lock().unwrap()[1].as_deref(), Some("plain-state-42"));
}

#[tokio::test]
async fn a_sealed_server_rejects_tampered_or_unsealed_state_with_the_fixed_error() {
    let seen: Log<Option<String>> = Arc::default();
    let server = stateful_tool(Server::builder("s", "1"), Arc::clone(&seen))
        .seal(RequestStateSecurity::ephemeral())
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    let mut peer = RawPeer::new(client_end);
    let call = |id: i64, state: Option<&str>| {
        let mut params =
            json!({"_meta": meta(json!({"elicitation": {}})), "name": "t", "arguments": {}});
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let first = peer.call(call(1, None)).await;
    let token = first["result"]["requestState"].as_str().unwrap().to_owned();
    let mut tampered = token.clone().into_bytes();
    let last = tampered.len() - 5;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    for (i, bad) in [
        String::from_utf8(tampered).unwrap(),
        "plain-state-42".to_owned(),
    ]
    .iter()
    .enumerate()
    {
        let response = peer.call(call(2 + i as i64, Some(bad))).await;
        assert_eq!(
            response["error"],
            json!({"code": -32602, "message": "Invalid or expired requestState"})
        );
    }
    let ok = peer.call(call(9, Some(&token))).await;
    assert_eq!(ok["result"]["resultType"], "complete", "{ok}");
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let stopped_tx = Arc::new(Mutex::new(Some(stopped_tx)));
    let server = Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(move |ctx: RequestContext, _p| {
            let started = started_tx.lock().unwrap().take();
            let guard = Stopped(stopped_tx.lock().unwrap().take());
            async move {
                let _guard = guard;
                if let Some(s) = started {
                    let _ = s.send(());
                }
                // Runs until cancelled (the server drops it) or for a minute.
                tokio::select! {
                    () = ctx.cancellation().cancelled() => {}
                    () = tokio::time::sleep(Duration::from_secs(60)) => {}
                }
                Ok(done("never sent"))
            }
        })
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    let recording = Recording::default();
    tokio::spawn(async move { server.serve(server_end).await });
    let client = Client::builder("c", "1")
        .era(tern_mcp::client::EraMode::Stateless)
        .connect(Tap::new(client_end, recording.clone()))
        .await
        .unwrap();
    let call = tokio::spawn(async move { client.call_tool("slow", json!({})).await });
    started_rx.await.unwrap();
    call.abort();
    tokio::time::timeout(Duration::from_secs(5), stopped_rx)
        .await
        .expect("the handler did not stop")
        .unwrap();
    let cancel = recording
        .messages()
        .into_iter()
        .find(|m| m["method"] == "notifications/cancelled");
    assert_eq!(
        cancel.expect("no cancellation was sent")["params"]["requestId"],
        recording.requests()[0]["id"]
    );
}

/// A server whose tool reports three progress steps, numbered by its `n` argument.
pub(crate) fn progress_server() -> Server {
    Server::builder("s", "1")
        .handle::<method::CallTool, _, _>(|ctx: RequestContext, params| async move {
            let n: f64 = params
                .arguments
                .as_ref()
                .unwrap()
                .get("n")
                .unwrap()
                .as_f64()
                .unwrap();
            for i in 1..=3 {
                ctx.progress(n * 10.0 + f64::from(i), Some(n * 10.0 + 3.0), None);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(done("ok"))
        })
        .build()
        .unwrap()
}

/// Two concurrent callers of [`progress_server`] each see their own three steps, and
/// only theirs.
pub(crate) async fn each_caller_sees_its_own_progress(client: &Client) {
    let mut tasks = Vec::new();
    for n in [1, 2] {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let mut params = CallToolRequestParams::new("t");
            params.arguments = Some(json!({"n": n}).as_object().unwrap().into());
            let outcome = client
                .request_with_notices::<method::CallTool>(params, tx)
                .await
                .unwrap();
            assert!(matches!(outcome, Outcome::Complete(_)));
            let mut seen = Vec::new();
            while let Ok(notice) = rx.try_recv() {
                if let tern_mcp::client::Notice::Progress(p) = notice {
                    seen.push(p.progress.as_f64().unwrap());
                }
            }
            (n, seen)
        }));
    }
    for t in tasks {
        let (n, seen) = t.await.unwrap();
        let base = f64::from(n) * 10.0;
        assert_eq!(seen, vec![base + 1.0, base + 2.0, base + 3.0], "caller {n}");
    }
}

#[tokio::test]
async fn progress_notifications_reach_the_request_that_asked() {
    let server = progress_server();
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { server.serve(server_end).await });
    each_caller_sees_its_own_progress(
        &Client::builder("c", "1")
            .era(tern_mcp::client::EraMode::Stateless)
            .connect(client_end)
            .await
            .unwrap(),
    )
    .await;
}
