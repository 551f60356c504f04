//! What a token is bound to: time, request, principal and audience.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::*;
use crate::auth::AuthInfo;
use crate::types::rpc::Request as _;

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn alice() -> Principal {
    Principal::from_auth(&AuthInfo {
        client_id: "https://client.example/app".into(),
        issuer: Some("https://idp.example".into()),
        subject: Some("alice".into()),
        scopes: vec![],
        dpop_jkt: None,
    })
}

fn bob() -> Principal {
    Principal::from_auth(&AuthInfo {
        client_id: "https://client.example/app".into(),
        issuer: Some("https://idp.example".into()),
        subject: Some("bob".into()),
        scopes: vec![],
        dpop_jkt: None,
    })
}

#[test]
fn a_token_verifies_for_the_request_that_minted_it() {
    let (sealer, _) = keyed_sealer("svc");
    let arguments = args(json!({"name": "orders", "size": 3}));
    let request = RequestBinding::tool("provision", Some(&arguments));
    let token = sealer.seal(&request, b"state").unwrap();
    assert!(token.starts_with(TOKEN_PREFIX));
    assert_eq!(sealer.verify(&token, &request).unwrap(), b"state");
}

#[test]
fn expiry_one_second_past_the_ttl_is_rejected_and_just_inside_is_accepted() {
    let (sealer, clock) = keyed_sealer("svc");
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    clock.set(T0 + 600_000 - 1);
    assert!(sealer.verify(&token, &request).is_ok(), "just inside");
    clock.set(T0 + 600_000 + 1_000);
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Expired
    );
}

#[test]
fn a_custom_ttl_sets_the_window() {
    let clock = Arc::new(ManualClock::new(T0));
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .ttl(Duration::from_millis(1500))
        .unwrap()
        .clock(clock.clone())
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    clock.advance(Duration::from_millis(1_499));
    assert!(sealer.verify(&token, &request).is_ok());
    clock.advance(Duration::from_millis(1));
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Expired
    );
}

#[test]
fn each_round_reseals_with_a_fresh_expiry() {
    let (sealer, clock) = keyed_sealer("svc");
    let request = RequestBinding::tool("t", None);
    let round1 = sealer.seal(&request, b"1").unwrap();
    clock.advance(Duration::from_secs(500));
    let state = sealer.verify(&round1, &request).unwrap();
    let round2 = sealer.seal(&request, &state).unwrap();
    clock.advance(Duration::from_secs(500));
    assert_eq!(
        reason(sealer.verify(&round1, &request)),
        RejectReason::Expired
    );
    assert_eq!(sealer.verify(&round2, &request).unwrap(), b"1");
}

#[test]
fn a_token_minted_more_than_60_seconds_in_the_future_is_rejected() {
    let (sealer, clock) = keyed_sealer("svc");
    let request = RequestBinding::tool("t", None);
    clock.set(T0 + 60_000);
    let at_the_limit = sealer.seal(&request, b"s").unwrap();
    clock.set(T0 + 61_000);
    let beyond = sealer.seal(&request, b"s").unwrap();
    clock.set(T0);
    assert!(
        sealer.verify(&at_the_limit, &request).is_ok(),
        "60 s of skew is tolerated"
    );
    assert_eq!(
        reason(sealer.verify(&beyond, &request)),
        RejectReason::MintedInFuture
    );
}

#[test]
fn replay_against_another_method_tool_prompt_uri_or_arguments_is_rejected() {
    let (sealer, _) = keyed_sealer("svc");
    let arguments = args(json!({"name": "orders"}));
    let other_arguments = args(json!({"name": "users"}));
    let cases: [(RequestBinding<'_>, Vec<RequestBinding<'_>>); 3] = [
        (
            RequestBinding::tool("provision", Some(&arguments)),
            vec![
                RequestBinding::tool("destroy", Some(&arguments)),
                RequestBinding::prompt("provision", Some(&arguments)),
                RequestBinding::tool("provision", Some(&other_arguments)),
                RequestBinding::tool("provision", None),
                RequestBinding::new(
                    crate::types::v2026_07_28::method::ListTools::METHOD,
                    "provision",
                )
                .with_arguments(Some(&arguments)),
            ],
        ),
        (
            RequestBinding::prompt("greet", Some(&arguments)),
            vec![
                RequestBinding::prompt("farewell", Some(&arguments)),
                RequestBinding::tool("greet", Some(&arguments)),
                RequestBinding::prompt("greet", Some(&other_arguments)),
            ],
        ),
        (
            RequestBinding::resource("file:///a.txt"),
            vec![
                RequestBinding::resource("file:///b.txt"),
                RequestBinding::resource("file:///a.txt#"),
                RequestBinding::tool("file:///a.txt", None),
            ],
        ),
    ];
    for (original, replays) in cases {
        let token = sealer.seal(&original, b"s").unwrap();
        for replay in replays {
            assert_eq!(
                reason(sealer.verify(&token, &replay)),
                RejectReason::RequestBinding,
                "{replay:?}"
            );
        }
        assert_eq!(sealer.verify(&token, &original).unwrap(), b"s");
    }
}

#[test]
fn argument_key_order_does_not_matter_and_missing_arguments_bind_as_empty() {
    let (sealer, _) = keyed_sealer("svc");
    let forward: Map<String, Value> = serde_json::from_str(r#"{"a":1,"b":{"x":1,"y":2}}"#).unwrap();
    let backward: Map<String, Value> =
        serde_json::from_str(r#"{"b":{"y":2,"x":1},"a":1}"#).unwrap();
    let token = sealer
        .seal(&RequestBinding::tool("t", Some(&forward)), b"s")
        .unwrap();
    assert!(
        sealer
            .verify(&token, &RequestBinding::tool("t", Some(&backward)))
            .is_ok()
    );

    let empty = Map::new();
    let token = sealer.seal(&RequestBinding::tool("t", None), b"s").unwrap();
    assert!(
        sealer
            .verify(&token, &RequestBinding::tool("t", Some(&empty)))
            .is_ok()
    );
}

#[test]
fn the_same_principal_verifies() {
    let (sealer, _) = keyed_sealer("svc");
    let (sealed_for, presented) = (alice(), alice());
    let token = sealer
        .seal(
            &RequestBinding::tool("t", None).with_principal(Some(&sealed_for)),
            b"s",
        )
        .unwrap();
    let request = RequestBinding::tool("t", None).with_principal(Some(&presented));
    assert_eq!(sealer.verify(&token, &request).unwrap(), b"s");
}

#[test]
fn another_principal_is_rejected() {
    let (sealer, _) = keyed_sealer("svc");
    let (a, b) = (alice(), bob());
    let token = sealer
        .seal(
            &RequestBinding::tool("t", None).with_principal(Some(&a)),
            b"s",
        )
        .unwrap();
    let request = RequestBinding::tool("t", None).with_principal(Some(&b));
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Principal
    );
}

#[test]
fn a_principal_that_disappears_is_rejected() {
    let (sealer, _) = keyed_sealer("svc");
    let a = alice();
    let token = sealer
        .seal(
            &RequestBinding::tool("t", None).with_principal(Some(&a)),
            b"s",
        )
        .unwrap();
    assert_eq!(
        reason(sealer.verify(&token, &RequestBinding::tool("t", None))),
        RejectReason::Principal
    );
}

#[test]
fn a_principal_that_appears_is_rejected() {
    let (sealer, _) = keyed_sealer("svc");
    let a = alice();
    let token = sealer.seal(&RequestBinding::tool("t", None), b"s").unwrap();
    let request = RequestBinding::tool("t", None).with_principal(Some(&a));
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Principal
    );
}

#[test]
fn a_verifier_that_drops_the_subject_changes_the_principal() {
    let (sealer, _) = keyed_sealer("svc");
    let full = alice();
    let client_only = Principal::from_auth(&AuthInfo {
        client_id: "https://client.example/app".into(),
        ..AuthInfo::default()
    });
    let token = sealer
        .seal(
            &RequestBinding::tool("t", None).with_principal(Some(&full)),
            b"s",
        )
        .unwrap();
    let request = RequestBinding::tool("t", None).with_principal(Some(&client_only));
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Principal
    );
}

#[test]
fn bind_principal_supplies_a_principal_when_the_request_has_none() {
    let identity = Arc::new(std::sync::Mutex::new("alice"));
    let hook_identity = identity.clone();
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .bind_principal(move |_| Some(Principal::custom(*hook_identity.lock().unwrap())))
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    assert!(sealer.verify(&token, &request).is_ok());
    *identity.lock().unwrap() = "mallory";
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Principal
    );
}

#[test]
fn bind_principal_overrides_a_validated_token_principal() {
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .bind_principal(|_| Some(Principal::custom("proxy-user")))
        .build(Some("svc"))
        .unwrap();
    let a = alice();
    let with_auth = RequestBinding::tool("t", None).with_principal(Some(&a));
    let token = sealer.seal(&with_auth, b"s").unwrap();
    assert!(sealer.verify(&token, &with_auth).is_ok());
    assert!(
        sealer
            .verify(&token, &RequestBinding::tool("t", None))
            .is_ok(),
        "the hook's principal is bound, whatever the token says"
    );
}

#[test]
fn a_hook_that_names_no_principal_keeps_the_token_principal() {
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .bind_principal(|_| None)
        .build(Some("svc"))
        .unwrap();
    let a = alice();
    let with_auth = RequestBinding::tool("t", None).with_principal(Some(&a));
    let token = sealer.seal(&with_auth, b"s").unwrap();
    assert!(sealer.verify(&token, &with_auth).is_ok());
    assert_eq!(
        reason(sealer.verify(&token, &RequestBinding::tool("t", None))),
        RejectReason::Principal,
        "the token's principal is still bound"
    );
}

#[test]
fn a_panicking_bind_principal_hook_fails_closed() {
    let plain = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .build(Some("svc"))
        .unwrap();
    let panicking = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .bind_principal(|_| panic!("identity backend down"))
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    assert_eq!(
        panicking.seal(&request, b"s").unwrap_err().reason(),
        SealFailureReason::Panicked
    );
    let token = plain.seal(&request, b"s").unwrap();
    assert_eq!(
        reason(panicking.verify(&token, &request)),
        RejectReason::Principal
    );
}

#[test]
fn another_audience_is_rejected() {
    let (svc_a, _) = keyed_sealer("service-a");
    let (svc_b, _) = keyed_sealer("service-b");
    let request = RequestBinding::tool("t", None);
    let token = svc_a.seal(&request, b"s").unwrap();
    assert_eq!(
        reason(svc_b.verify(&token, &request)),
        RejectReason::Audience
    );
    assert!(svc_a.verify(&token, &request).is_ok());
}

#[test]
fn an_explicit_audience_lets_services_share_state_deliberately() {
    let shared = |name: &str| {
        RequestStateSecurity::keys([SECRET_A])
            .unwrap()
            .audience("fleet")
            .build(Some(name))
            .unwrap()
    };
    let request = RequestBinding::tool("t", None);
    let token = shared("a").seal(&request, b"s").unwrap();
    assert_eq!(shared("b").verify(&token, &request).unwrap(), b"s");
    assert_eq!(shared("b").audience(), Some("fleet"));
}

#[test]
fn audience_presence_drift_is_rejected_both_ways() {
    let keys = Arc::new(ring(&[SECRET_A]));
    let clock = Arc::new(ManualClock::new(T0));
    let with = sealer_with(&keys, Some("svc"), &clock);
    let without = sealer_with(&keys, None, &clock);
    let request = RequestBinding::tool("t", None);
    let from_with = with.seal(&request, b"s").unwrap();
    let from_without = without.seal(&request, b"s").unwrap();
    assert_eq!(
        reason(without.verify(&from_with, &request)),
        RejectReason::Audience
    );
    assert_eq!(
        reason(with.verify(&from_without, &request)),
        RejectReason::Audience
    );
    assert!(with.verify(&from_with, &request).is_ok());
    assert!(without.verify(&from_without, &request).is_ok());
}

#[test]
fn oversize_tokens_are_rejected_by_the_sealer_both_ways() {
    let sealer = RequestStateSecurity::keys([SECRET_A])
        .unwrap()
        .max_token_len(300)
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    assert!(sealer.seal(&request, &[0; 100]).is_ok());
    let failure = sealer.seal(&request, &[0; 300]).unwrap_err();
    assert_eq!(failure.reason(), SealFailureReason::TooLarge);
    assert_eq!(
        wire(failure),
        json!({"code": -32603, "message": "Internal error"})
    );
    let big = "A".repeat(301);
    assert_eq!(
        reason(sealer.verify(&big, &request)),
        RejectReason::TooLarge
    );
}

/// What the server sends the client for a sealing error: the mapping it uses itself.
fn wire(error: impl Into<crate::jsonrpc::RpcError>) -> serde_json::Value {
    serde_json::to_value(error.into()).expect("an RpcError serializes")
}

struct PanickingCodec;

impl StateCodec for PanickingCodec {
    fn seal(&self, _: &[u8]) -> Result<String, SealFailure> {
        panic!("KMS unreachable")
    }
    fn unseal(&self, _: &str) -> Result<Vec<u8>, InvalidRequestState> {
        panic!("KMS unreachable")
    }
}

struct FailingCodec;

impl StateCodec for FailingCodec {
    fn seal(&self, _: &[u8]) -> Result<String, SealFailure> {
        Err(SealFailure::default())
    }
    fn unseal(&self, _: &str) -> Result<Vec<u8>, InvalidRequestState> {
        Err(InvalidRequestState::default())
    }
}

/// A codec that "verifies" anything: the claims inside must still hold.
struct IdentityCodec;

impl StateCodec for IdentityCodec {
    fn seal(&self, payload: &[u8]) -> Result<String, SealFailure> {
        Ok(payload.iter().map(|b| format!("{b:02x}")).collect())
    }
    fn unseal(&self, token: &str) -> Result<Vec<u8>, InvalidRequestState> {
        crate::seal::secret::parse_secret(token)
            .map(|bytes| bytes.to_vec())
            .map_err(|_| InvalidRequestState::default())
    }
}

#[test]
fn a_panicking_custom_codec_fails_closed() {
    let sealer = RequestStateSecurity::codec(PanickingCodec)
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    let failure = sealer.seal(&request, b"s").unwrap_err();
    assert_eq!(failure.reason(), SealFailureReason::Panicked);
    assert_eq!(wire(failure)["code"], -32603);
    assert_eq!(
        reason(sealer.verify("anything", &request)),
        RejectReason::Codec
    );
}

#[test]
fn an_erroring_custom_codec_fails_closed() {
    let sealer = RequestStateSecurity::codec(FailingCodec)
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    assert_eq!(
        sealer.seal(&request, b"s").unwrap_err().reason(),
        SealFailureReason::Codec
    );
    assert_eq!(
        reason(sealer.verify("anything", &request)),
        RejectReason::Codec
    );
}

#[test]
fn claims_are_checked_for_every_codec() {
    let clock = Arc::new(ManualClock::new(T0));
    let sealer = RequestStateSecurity::codec(IdentityCodec)
        .clock(clock.clone())
        .build(Some("svc"))
        .unwrap();
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    assert_eq!(sealer.verify(&token, &request).unwrap(), b"s");
    assert_eq!(
        reason(sealer.verify(&token, &RequestBinding::tool("u", None))),
        RejectReason::RequestBinding
    );
    assert_eq!(
        reason(sealer.verify("00", &request)),
        RejectReason::Malformed
    );
    clock.advance(Duration::from_secs(601));
    assert_eq!(
        reason(sealer.verify(&token, &request)),
        RejectReason::Expired
    );
}

#[test]
fn the_wire_error_never_varies_by_cause() {
    let (sealer, clock) = keyed_sealer("svc");
    let (other_audience, _) = keyed_sealer("other");
    let a = alice();
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    let mut rejections = vec![
        sealer.verify("garbage", &request),
        sealer.verify(&format!("{token}A"), &request),
        sealer.verify(&ring(&[SECRET_B]).seal(b"x").unwrap(), &request),
        sealer.verify(&token, &RequestBinding::tool("u", None)),
        sealer.verify(&token, &request.with_principal(Some(&a))),
        other_audience.verify(&token, &request),
        sealer.verify(&"A".repeat(DEFAULT_MAX_TOKEN_LEN + 1), &request),
        RequestStateSecurity::codec(PanickingCodec)
            .build(Some("svc"))
            .unwrap()
            .verify(&token, &request),
    ];
    clock.advance(Duration::from_secs(601));
    rejections.push(sealer.verify(&token, &request));
    let mut reasons = std::collections::HashSet::new();
    for rejection in rejections {
        let err = rejection.unwrap_err();
        reasons.insert(err.reason());
        assert_eq!(
            wire(err),
            json!({"code": -32602, "message": "Invalid or expired requestState"})
        );
        assert_eq!(err.to_string(), InvalidRequestState::MESSAGE);
        assert_eq!(format!("{err:?}"), "InvalidRequestState");
    }
    assert!(
        reasons.len() >= 8,
        "the causes really were different: {reasons:?}"
    );
}

#[test]
fn sealer_is_cheap_to_clone_and_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync::<Sealer>();
    let (sealer, _) = keyed_sealer("svc");
    let request = RequestBinding::tool("t", None);
    let token = sealer.seal(&request, b"s").unwrap();
    let clone = sealer.clone();
    let verified = std::thread::spawn(move || {
        clone
            .verify(&token, &RequestBinding::tool("t", None))
            .unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(verified, b"s");
}
