//! The seed's provision flow, run over every transport: with the automatic client loop,
//! and with the loop driven by hand.

use serde_json::json;
use tern_mcp::client::Client;
use tern_mcp::types::v2026_07_28::{
    CallToolRequestParams, InputRequest, InputResponse, InputResponses, Outcome, method,
};
use tern_tests::fixtures::Fixture;
use tern_tests::seed;
use tern_tests::{Asked, recording_client, text_of};

use crate::transports::over_each_transport;

#[tokio::test]
async fn the_seed_provision_flow_completes_in_one_answered_round() {
    let asked = Asked::default();
    let asked = &asked;
    over_each_transport(
        Fixture::Provision,
        || recording_client(asked),
        |client| async move {
            let result = client
                .call_tool("provision", json!({"name": "orders"}))
                .await
                .unwrap();
            assert_eq!(text_of(&result), seed::provisioned("orders", seed::REGION));
            assert_eq!(asked.take(), vec![Some("region".to_owned())]);
        },
    )
    .await;
}

#[tokio::test]
async fn the_manual_loop_completes_the_seed_flow_echoing_the_state() {
    // No callbacks: this client answers by hand, so it declares what it answers.
    let manual = || {
        let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        Client::builder("manual-loop", "1.0").capabilities(capabilities)
    };
    over_each_transport(Fixture::Provision, manual, |client| async move {
        let mut params = CallToolRequestParams::new("provision");
        params.arguments = json!({"name": "orders"}).as_object().map(Into::into);
        let mut states = Vec::new();
        let result = loop {
            assert!(states.len() < 10, "the flow never completed: {states:?}");
            match client
                .request::<method::CallTool>(params.clone())
                .await
                .unwrap()
            {
                Outcome::Complete(result) => break result,
                Outcome::InputRequired(asked) => {
                    let mut responses = InputResponses::new();
                    for (key, request) in asked.input_requests.iter().flat_map(|r| r.iter()) {
                        assert!(matches!(request, InputRequest::Elicit(_)), "{request:?}");
                        let answer = InputResponse::Elicit(seed::answer_region());
                        responses.insert(key.clone(), answer).unwrap();
                    }
                    states.push(asked.request_state.clone());
                    params.input_responses = Some(responses);
                    params.request_state = asked.request_state;
                }
            }
        };
        assert_eq!(text_of(&result), seed::provisioned("orders", seed::REGION));
        assert_eq!(states, vec![Some(seed::STATE.to_owned())]);
    })
    .await;
}
