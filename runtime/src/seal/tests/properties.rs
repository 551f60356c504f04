//! Property: every single-byte mutation of a token is rejected, every original verifies.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::*;

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z0-9 é日]{0,12}".prop_map(Value::String),
    ];
    let value = leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-z]{1,8}", value, 0..5).prop_map(|map| map.into_iter().collect())
}

/// Printable ASCII plus a few characters that matter to base64 and to UTF-8 handling.
fn replacement() -> impl Strategy<Value = char> {
    prop_oneof![
        (0x20u8..0x7f).prop_map(char::from),
        Just('\n'),
        Just('é'),
        Just('\u{0}'),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_single_byte_mutation_is_rejected_and_every_original_verifies(
        state in prop::collection::vec(any::<u8>(), 0..300),
        args in arguments(),
        position in any::<prop::sample::Index>(),
        substitute in replacement(),
    ) {
        let (sealer, _) = keyed_sealer("svc");
        let request = RequestBinding::tool("t", Some(&args));
        let token = sealer.seal(&request, &state).unwrap();
        prop_assert_eq!(sealer.verify(&token, &request).unwrap(), state);

        let index = position.index(token.len());
        let original = char::from(token.as_bytes()[index]);
        prop_assume!(original != substitute);
        let mut mutated = token.clone();
        mutated.replace_range(index..=index, substitute.encode_utf8(&mut [0; 4]));
        prop_assert!(sealer.verify(&mutated, &request).is_err());
    }
}

/// Arguments with what the text digest must leave to the map walk too: fractions,
/// escapes, keys out of order once written reversed, spacing once written pretty.
fn any_arguments() -> impl Strategy<Value = Map<String, Value>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z0-9 é日\"\\\\\n\u{1}/]{0,12}".prop_map(Value::String),
    ];
    let value = leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\"é]{1,6}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-zA-Z_]{1,8}", value, 0..5)
        .prop_map(|map| map.into_iter().collect())
}

/// `value` written with every object's members in reverse order.
fn reversed(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arguments_digested_from_their_text_match_the_map_they_read_as(args in any_arguments()) {
        use crate::seal::digest::{arguments_digest, text_arguments_digest};
        let value = Value::Object(args);
        for text in [
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap(),
            serde_json::to_string(&reversed(&value)).unwrap(),
            serde_json::to_string_pretty(&reversed(&value)).unwrap(),
        ] {
            // What a server that read the text into a map digested: the same bytes.
            let read: Map<String, Value> = serde_json::from_str(&text).unwrap();
            let raw = serde_json::value::RawValue::from_string(text.clone()).unwrap();
            prop_assert_eq!(text_arguments_digest(Some(&raw)), arguments_digest(Some(&read)), "{}", text);
        }
    }
}

#[test]
fn absent_arguments_and_an_empty_object_digest_alike_from_text() {
    use crate::seal::digest::{arguments_digest, text_arguments_digest};
    let empty = serde_json::value::RawValue::from_string(" { } ".into()).unwrap();
    assert_eq!(text_arguments_digest(None), arguments_digest(None));
    assert_eq!(text_arguments_digest(Some(&empty)), arguments_digest(None));
    // A number no map reads is bound to the text as sent, not refused.
    let huge = serde_json::value::RawValue::from_string(r#"{"n":1e999}"#.into()).unwrap();
    let other = serde_json::value::RawValue::from_string(r#"{"n":2e999}"#.into()).unwrap();
    assert_ne!(
        text_arguments_digest(Some(&huge)),
        text_arguments_digest(Some(&other))
    );
}
