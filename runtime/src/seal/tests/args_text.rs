//! Short arguments, canonical as sent, bound by their text: no digest to seal with or to
//! check against, and a token bound either way opens for the same arguments, and only
//! for them.

use serde_json::value::RawValue;

use super::*;
use crate::seal::bound::{ARGS_TEXT_MAX, ArgsBound};
use crate::seal::claims::Claims;

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).unwrap()
}

/// The binding the server makes for arguments canonical as sent.
fn by_text<'a>(tool: &'a str, arguments: &'a RawValue) -> RequestBinding<'a> {
    let text = canonical_text(Some(arguments)).expect("canonical as sent");
    RequestBinding::tool(tool, None).with_arguments_text(text)
}

/// The binding the server makes for any other arguments (and tern before text binding).
fn by_digest<'a>(tool: &'a str, arguments: &'a RawValue) -> RequestBinding<'a> {
    RequestBinding::tool(tool, None).with_arguments_digest(text_arguments_digest(Some(arguments)))
}

#[test]
fn only_short_arguments_canonical_as_sent_are_bound_by_their_text() {
    assert_eq!(canonical_text(None), Some(b"{}".as_slice()));
    let compact = raw(r#"{"a":1,"b":"x"}"#);
    assert_eq!(
        canonical_text(Some(&compact)),
        Some(compact.get().as_bytes())
    );
    for other in [
        r#"{"b":1,"a":2}"#,
        r#"{"a": 1}"#,
        r#"{"a":"\n"}"#,
        r#"{"a":1.5}"#,
    ] {
        assert_eq!(canonical_text(Some(&raw(other))), None, "{other}");
    }
    let longest = format!(r#"{{"a":"{}"}}"#, "x".repeat(ARGS_TEXT_MAX - 8));
    assert_eq!(longest.len(), ARGS_TEXT_MAX);
    assert!(canonical_text(Some(&raw(&longest))).is_some());
    let longer = format!(r#"{{"a":"{}"}}"#, "x".repeat(ARGS_TEXT_MAX - 7));
    assert_eq!(canonical_text(Some(&raw(&longer))), None);
}

#[test]
fn a_token_bound_either_way_opens_for_its_arguments_in_either_form_and_no_others() {
    let (sealer, _) = keyed_sealer("svc");
    let arguments = raw(r#"{"name":"orders"}"#);
    let spaced = raw(r#"{ "name" : "orders" }"#);
    let other = raw(r#"{"name":"users"}"#);
    // By digest: a token of tern before text binding, or of arguments that are not short
    // and canonical.
    let forms: [for<'a> fn(&'a str, &'a RawValue) -> RequestBinding<'a>; 2] = [by_text, by_digest];
    for sealed_as in forms {
        let token = sealer
            .seal(&sealed_as("provision", &arguments), b"s")
            .unwrap();
        for same in [
            by_text("provision", &arguments),
            by_digest("provision", &spaced),
        ] {
            assert_eq!(sealer.verify(&token, &same).unwrap(), b"s", "{same:?}");
        }
        for replay in [
            by_text("provision", &other),
            by_digest("provision", &other),
            by_text("destroy", &arguments),
        ] {
            assert_eq!(
                reason(sealer.verify(&token, &replay)),
                RejectReason::RequestBinding,
                "{replay:?}"
            );
        }
    }
}

/// A codec that writes the payload as hex, so a test can read the claims it was given.
struct Hex;

impl StateCodec for Hex {
    fn seal(&self, payload: &[u8]) -> Result<String, SealFailure> {
        Ok(payload.iter().map(|b| format!("{b:02x}")).collect())
    }
    fn unseal(&self, token: &str) -> Result<Vec<u8>, InvalidRequestState> {
        (0..token.len())
            .step_by(2)
            .map(|i| {
                token
                    .get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect::<Option<_>>()
            .ok_or_default()
    }
}

trait OkOrDefault<T> {
    fn ok_or_default(self) -> Result<T, InvalidRequestState>;
}

impl<T> OkOrDefault<T> for Option<T> {
    fn ok_or_default(self) -> Result<T, InvalidRequestState> {
        self.ok_or_else(InvalidRequestState::default)
    }
}

#[test]
fn a_custom_codec_is_given_the_arguments_digest_never_their_text() {
    let sealer = RequestStateSecurity::codec(Hex).build(Some("svc")).unwrap();
    let arguments = raw(r#"{"secret":"hunter2"}"#);
    let token = sealer.seal(&by_text("t", &arguments), b"s").unwrap();
    let payload = Hex.unseal(&token).unwrap();
    let (claims, _) = Claims::decode(&payload).unwrap();
    assert_eq!(
        claims.args,
        ArgsBound::Digest(text_arguments_digest(Some(&arguments)))
    );
    assert_eq!(
        sealer.verify(&token, &by_text("t", &arguments)).unwrap(),
        b"s"
    );
}
