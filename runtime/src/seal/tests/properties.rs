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
