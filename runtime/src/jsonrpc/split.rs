//! A message's top-level members found by their extent, in one pass over its bytes and
//! with nothing built: what lets a well-formed request be parsed once, its params read
//! straight into their method's type by the server rather than first checked as JSON
//! here and then parsed again there.
//!
//! The split is strict where it decides and lenient nowhere: any doubt (a repeated
//! member, an escaped member name, a value that is not JSON, text after the object) is
//! `None`, and the caller reads the message the general way, which says what is wrong.
//! Every value but the params is checked as JSON here; the params' contents are checked
//! by whoever reads them ([`RawParams`](super::RawParams) says how), and so is a
//! response's result. A reader may not even scan params or a result that closes the
//! message ([`Found::Closing`]): reading them checks that they are what closes it.

use serde::de::IgnoredAny;

// The generated member scan (behind `members`, which reads params), held stricter here.
use crate::types::rpc::scan::{blank, each_member, value_end, walk_members};

/// The members of one JSON-RPC message, each as the bytes of its value.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Members<'a> {
    pub(super) jsonrpc: Option<&'a [u8]>,
    pub(super) id: Option<&'a [u8]>,
    pub(super) method: Option<&'a [u8]>,
    pub(super) params: Option<&'a [u8]>,
    pub(super) result: Option<&'a [u8]>,
    pub(super) error: Option<&'a [u8]>,
    /// Whether `params` or `result` was taken as closing the message, not found by its
    /// extent ([`Found::Closing`]).
    pub(super) guessed: bool,
}

/// How [`split`] finds a message's params or result, when they are an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Found {
    /// By their extent, like every other member.
    Scanned,
    /// As closing the message when it ends `}}`: everything from where the value opens
    /// to the last `}` but one, not scanned. Right whenever it is the last member, which
    /// is where most peers write it; when it is not, that text is not one JSON value,
    /// and the read that checks it says so (the reader then splits the message again,
    /// [`Scanned`](Self::Scanned)). Text that is one JSON value there can only be the
    /// member's own: a JSON value is never followed by more of itself.
    Closing,
}

/// Splits `bytes`, a JSON object, into its members; `None` when in any doubt.
pub(super) fn split(bytes: &[u8], found: Found) -> Option<Members<'_>> {
    let mut members = Members::default();
    let close = match found {
        Found::Closing => closing_object(bytes),
        Found::Scanned => None,
    };
    let end = walk_members(bytes, |key, start| {
        let quoted = bytes.get(key)?;
        // Taken as closing the message: it ends at the last `}` but one, and the walk
        // then finds the object's own `}` straight after it.
        let end = match close.filter(|&close| {
            matches!(quoted, br#""params""# | br#""result""#)
                && bytes.get(start) == Some(&b'{')
                && close > start
        }) {
            Some(close) => {
                members.guessed = true;
                close + 1
            }
            None => value_end(bytes, start)?,
        };
        members.put(quoted, bytes.get(start..end)?)?;
        Some(end)
    })?;
    (blank(bytes, end) == bytes.len()).then_some(members)
}

impl<'a> Members<'a> {
    /// Keeps the member named `quoted` (with its quotes); `None` when in any doubt.
    fn put(&mut self, quoted: &[u8], value: &'a [u8]) -> Option<()> {
        let slot = match quoted.get(1..quoted.len() - 1)? {
            b"jsonrpc" => &mut self.jsonrpc,
            b"id" => &mut self.id,
            b"method" => &mut self.method,
            b"params" => &mut self.params,
            b"result" => &mut self.result,
            b"error" => &mut self.error,
            // An escape could spell one of the names above: the general reader decides.
            name if name.contains(&b'\\') => return None,
            // Another member: its name and its value must be JSON.
            _ => return (is_json(quoted) && is_json(value)).then_some(()),
        };
        // A repeated member: the general reader decides which one counts.
        slot.replace(value).is_none().then_some(())
    }
}

/// Where the object that is all of `bytes` closes an object-valued last member (the
/// last `}` but one, with only blanks after it), if it does.
fn closing_object(bytes: &[u8]) -> Option<usize> {
    let is_blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let last = bytes.iter().rposition(|b| !is_blank(b))?;
    let before = bytes.get(..last)?.iter().rposition(|b| !is_blank(b))?;
    (bytes[last] == b'}' && bytes[before] == b'}').then_some(before)
}

/// The bytes of the `id` member of the object that opens `bytes`, found by extent and
/// nothing else checked: how a message refused before it is parsed (too large, too
/// deep) is still answered to the request that sent it. `None` when there is no such
/// member, when a member name has an escape (it could spell `id`), or when `id` is
/// repeated: the answer then goes to `null`, as for a message that is not JSON.
pub(super) fn id_text(bytes: &[u8]) -> Option<&[u8]> {
    let mut id = None;
    each_member(bytes, |key, value| match bytes.get(key)? {
        br#""id""# => id.replace(value).is_none().then_some(()),
        quoted if quoted.contains(&b'\\') => None,
        _ => Some(()),
    })?;
    bytes.get(id?)
}

/// Whether `text` is one JSON value (checked by serde_json, nothing built).
pub(crate) fn is_json(text: impl AsRef<[u8]>) -> bool {
    serde_json::from_slice::<IgnoredAny>(text.as_ref()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str) -> Option<Members<'_>> {
        split(text.as_bytes(), Found::Scanned)
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

    /// Any JSON value: strings up to 40 characters, short and past a vector's width,
    /// with quotes, backslashes and control characters (written escaped) anywhere.
    fn json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let text = "[a\"\\\\/\u{1}é]{0,40}";
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<f64>().prop_map(Value::from),
            text.prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(text, inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn a_value_ends_where_its_text_ends_however_it_is_written(value in json()) {
            use crate::types::rpc::scan::value_end;
            for text in [value.to_string(), format!("{value:#}")] {
                let padded = format!("{text} ,");
                proptest::prop_assert_eq!(value_end(padded.as_bytes(), 0), Some(text.len()), "{}", text);
                // Cut short, a string or a container has no end.
                if text.len() > 1 && matches!(text.as_bytes()[0], b'"' | b'{' | b'[') {
                    let cut = &text.as_bytes()[..text.len() - 1];
                    proptest::prop_assert_eq!(value_end(cut, 0), None, "{}", text);
                }
            }
        }
    }
}
