//! Sealed `requestState` seen from a client, through the test kit (`tern_mcp::testing`): the
//! seed's server under a sealing policy with a manual clock, answered by a scripted
//! client. Within its TTL a state completes the call; past it, or altered on the way,
//! or sealed by another key, it is refused with the one fixed error.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tern_mcp::seal::ManualClock;
use tern_mcp::seal::RequestStateSecurity;
use tern_mcp::testing::TestClient;
use tern_tests::seed;

const KEY: [u8; 32] = [42; 32];
const TTL: Duration = Duration::from_secs(60);

/// The seed's server, its state sealed under [`KEY`] with a TTL of [`TTL`] on `clock`.
async fn client(clock: &Arc<ManualClock>, key: [u8; 32]) -> TestClient {
    let security = RequestStateSecurity::keys([key])
        .unwrap()
        .ttl(TTL)
        .unwrap()
        .clock(Arc::clone(clock) as Arc<dyn tern_mcp::seal::Clock>);
    let server = seed::provision_server().seal(security).build().unwrap();
    TestClient::over(server)
        .await
        .unwrap()
        .answer("region", json!({"region": seed::REGION}))
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(1_800_000_000_000))
}

#[tokio::test]
async fn a_state_answered_within_its_ttl_completes_the_call() {
    let clock = clock();
    let ticking = Arc::clone(&clock);
    let transcript = client(&clock, KEY)
        .await
        .between_rounds(move |_| ticking.advance(TTL - Duration::from_secs(1)))
        .call_tool("provision", json!({"name": "orders"}))
        .await;
    transcript
        .assert_rounds(1)
        .assert_asks_once("region")
        .assert_text(&seed::provisioned("orders", seed::REGION));
    let sealed = transcript.rounds[0].state_len.unwrap();
    assert!(sealed > seed::STATE.len(), "sealed state of {sealed} bytes");
}

#[tokio::test]
async fn a_state_answered_past_its_ttl_is_refused() {
    let clock = clock();
    let ticking = Arc::clone(&clock);
    client(&clock, KEY)
        .await
        .between_rounds(move |_| ticking.advance(TTL + Duration::from_secs(1)))
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .assert_rounds(1)
        .assert_fails_with("refused the requestState");
}

#[tokio::test]
async fn a_state_altered_on_the_way_is_refused() {
    let clock = clock();
    client(&clock, KEY)
        .await
        .alter_state(|state| {
            // One character of the sealed text changed (the tag no longer matches).
            let last = state.pop().unwrap_or('A');
            state.push(if last == 'A' { 'B' } else { 'A' });
        })
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .assert_fails_with("refused the requestState");
}

#[tokio::test]
async fn a_state_sealed_by_another_key_is_refused_by_the_instance_that_has_not_got_it() {
    // The first instance seals; the state is then taken to a server with another key:
    // what a fleet without the key on every instance does.
    let clock = clock();
    let first = client(&clock, KEY)
        .await
        .call_tool("provision", json!({"name": "orders"}))
        .await;
    first.assert_text(&seed::provisioned("orders", seed::REGION));

    let taken: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let seen = Arc::clone(&taken);
    client(&clock, KEY)
        .await
        .alter_state(move |state| *seen.lock().unwrap() = Some(state.clone()))
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .assert_text(&seed::provisioned("orders", seed::REGION));
    let sealed_elsewhere = taken.lock().unwrap().clone().unwrap();
    client(&clock, [7; 32])
        .await
        .alter_state(move |state| *state = sealed_elsewhere.clone())
        .call_tool("provision", json!({"name": "orders"}))
        .await
        .assert_fails_with("refused the requestState");
}
