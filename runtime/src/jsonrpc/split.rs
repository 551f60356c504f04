//! A message's top-level members found by their extent, in one pass over its bytes and
//! with nothing built: what lets a well-formed request be parsed once, its params read
//! straight into their method's type by the server rather than first checked as JSON
//! here and then parsed again there.
//!
//! The split is strict where it decides and lenient nowhere: any doubt (a repeated
//! member, an escaped member name, a value that is not JSON, text after the object) is
//! `None`, and the caller reads the message the general way, which says what is wrong.
//! Every value but the params is checked as JSON here; the params' contents are checked
//! by whoever reads them ([`RawParams`](super::RawParams) says how).

use serde::de::IgnoredAny;

// The same steps as the generated member scan (`members`), which reads params.
use crate::types::rpc::scan::{blank, string_end, value_end};

/// The members of one JSON-RPC message, each as the bytes of its value.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Members<'a> {
    pub(super) jsonrpc: Option<&'a [u8]>,
    pub(super) id: Option<&'a [u8]>,
    pub(super) method: Option<&'a [u8]>,
    pub(super) params: Option<&'a [u8]>,
    pub(super) result: Option<&'a [u8]>,
    pub(super) error: Option<&'a [u8]>,
}

/// Splits `bytes`, a JSON object, into its members; `None` when in any doubt.
pub(super) fn split(bytes: &[u8]) -> Option<Members<'_>> {
    let mut members = Members::default();
    let mut at = blank(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = blank(bytes, at + 1);
    if bytes.get(at) != Some(&b'}') {
        loop {
            let key_start = at;
            let key_end = string_end(bytes, key_start)?;
            at = blank(bytes, key_end);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            let start = blank(bytes, at + 1);
            let end = value_end(bytes, start)?;
            let value = bytes.get(start..end)?;
            let slot = match bytes.get(key_start + 1..key_end - 1)? {
                b"jsonrpc" => Some(&mut members.jsonrpc),
                b"id" => Some(&mut members.id),
                b"method" => Some(&mut members.method),
                b"params" => Some(&mut members.params),
                b"result" => Some(&mut members.result),
                b"error" => Some(&mut members.error),
                // An escape could spell one of the names above: the general reader
                // decides.
                key if key.contains(&b'\\') => return None,
                // Another member: its name and its value must be JSON.
                _ => None,
            };
            match slot {
                Some(slot) => {
                    if slot.replace(value).is_some() {
                        return None;
                    }
                }
                None => {
                    if !is_json(bytes.get(key_start..key_end)?) || !is_json(value) {
                        return None;
                    }
                }
            }
            at = blank(bytes, end);
            match bytes.get(at) {
                Some(b',') => at = blank(bytes, at + 1),
                Some(b'}') => break,
                _ => return None,
            }
        }
    }
    (blank(bytes, at + 1) == bytes.len()).then_some(members)
}

/// Whether `text` is one JSON value (checked by serde_json, nothing built).
pub(crate) fn is_json(text: impl AsRef<[u8]>) -> bool {
    serde_json::from_slice::<IgnoredAny>(text.as_ref()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str) -> Option<Members<'_>> {
        split(text.as_bytes())
    }

    #[test]
    fn each_member_is_found_by_its_extent_whatever_the_spacing_and_order() {
        let text = " {\r\n\"params\" : {\"a\":[1,{\"b\":\"}]\"}]} ,\t\"id\":-7,\"method\":\"m\\\"x\",\"jsonrpc\":\"2.0\"}\n";
        let found = members(text).expect("split");
        assert_eq!(found.params, Some(&br#"{"a":[1,{"b":"}]"}]}"#[..]));
        assert_eq!(found.id, Some(&b"-7"[..]));
        assert_eq!(found.method, Some(&br#""m\"x""#[..]));
        assert_eq!(found.jsonrpc, Some(&br#""2.0""#[..]));
        assert_eq!((found.result, found.error), (None, None));
        assert_eq!(members("{}"), Some(Members::default()));
    }

    #[test]
    fn other_members_must_be_json_to_be_passed_over() {
        assert!(members(r#"{"id":1,"x":{"y":[true,null,1.5e3]},"z":"w"}"#).is_some());
        for text in [
            r#"{"id":1,"x":tru}"#,
            r#"{"id":1,"x":{"y":]}"#,
            "{\"id\":1,\"x\":\"a\u{1}b\"}",
            r#"{"id":1,"x":01}"#,
        ] {
            assert!(members(text).is_none(), "{text}");
        }
    }

    #[test]
    fn any_doubt_is_left_to_the_general_reader() {
        for text in [
            r#"{"id":1,"id":2}"#,
            r#"{"para\u006ds":{}}"#,
            r#"{"id":1}{}"#,
            r#"{"id":1} x"#,
            "{\"id\":1}\u{c}",
            r#"{"id":1,}"#,
            r#"{"id" 1}"#,
            r#"{"id":1"#,
            r#"{"params":{"a":"}"#,
            r#"[{"id":1}]"#,
            "",
        ] {
            assert!(members(text).is_none(), "{text}");
        }
    }
}
