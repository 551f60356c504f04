//! The arguments digest: SHA-256 over a canonical JSON form, truncated to 16 bytes.
//!
//! Canonical means compact, with every object's keys sorted by code point (byte order of
//! their UTF-8), so two argument maps that differ only in key order bind the same token.
//! Missing arguments hash as `{}`. The JSON is streamed into the hash, never built as a
//! string, and walked with an explicit stack so no nesting depth can overflow ours.

use std::fmt::{self, Write as _};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// Length of the truncated digest kept in the claims.
pub(crate) const ARGS_DIGEST_LEN: usize = 16;

/// The digest of `arguments` (absent arguments digest like an empty object).
pub(crate) fn arguments_digest(arguments: Option<&Map<String, Value>>) -> [u8; ARGS_DIGEST_LEN] {
    let mut sink = HashSink(Sha256::new());
    match arguments {
        Some(map) => write_canonical(&mut sink, Entry::Object(map)),
        None => sink.0.update(b"{}"),
    }
    let full = sink.0.finalize();
    let mut digest = [0u8; ARGS_DIGEST_LEN];
    digest.copy_from_slice(&full[..ARGS_DIGEST_LEN]);
    digest
}

struct HashSink(Sha256);

impl fmt::Write for HashSink {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.update(s.as_bytes());
        Ok(())
    }
}

enum Entry<'a> {
    Value(&'a Value),
    Object(&'a Map<String, Value>),
}

/// Where the walk is inside one container.
enum Frame<'a> {
    Array(std::slice::Iter<'a, Value>, bool),
    Object(std::vec::IntoIter<(&'a String, &'a Value)>, bool),
}

fn write_canonical(sink: &mut HashSink, root: Entry<'_>) {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(entry) = next.take() {
            match entry {
                Entry::Object(map) => stack.push(open_object(sink, map)),
                Entry::Value(Value::Object(map)) => stack.push(open_object(sink, map)),
                Entry::Value(Value::Array(items)) => {
                    sink.0.update(b"[");
                    stack.push(Frame::Array(items.iter(), true));
                }
                Entry::Value(leaf) => write_leaf(sink, leaf),
            }
        }
        let Some(frame) = stack.last_mut() else {
            return;
        };
        match frame {
            Frame::Array(items, first) => match items.next() {
                Some(item) => {
                    if !std::mem::take(first) {
                        sink.0.update(b",");
                    }
                    next = Some(Entry::Value(item));
                }
                None => {
                    sink.0.update(b"]");
                    stack.pop();
                }
            },
            Frame::Object(members, first) => match members.next() {
                Some((key, value)) => {
                    if !std::mem::take(first) {
                        sink.0.update(b",");
                    }
                    write_string(sink, key);
                    sink.0.update(b":");
                    next = Some(Entry::Value(value));
                }
                None => {
                    sink.0.update(b"}");
                    stack.pop();
                }
            },
        }
    }
}

fn open_object<'a>(sink: &mut HashSink, map: &'a Map<String, Value>) -> Frame<'a> {
    sink.0.update(b"{");
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    // Keys are unique, so stability is moot; the stable sort's insertion sort is simply
    // the cheaper one for the handful of keys arguments usually have.
    members.sort_by(|a, b| a.0.cmp(b.0));
    Frame::Object(members.into_iter(), true)
}

fn write_leaf(sink: &mut HashSink, leaf: &Value) {
    match leaf {
        Value::Null => sink.0.update(b"null"),
        Value::Bool(true) => sink.0.update(b"true"),
        Value::Bool(false) => sink.0.update(b"false"),
        // `Number`'s Display is the same text serde_json serialises, and HashSink never
        // fails, so the fmt::Result carries nothing.
        Value::Number(number) => {
            let _infallible = write!(sink, "{number}");
        }
        Value::String(text) => write_string(sink, text),
        Value::Array(_) | Value::Object(_) => {}
    }
}

/// Writes a JSON string the way serde_json's compact serialiser does: only `"`, `\` and
/// control characters escaped, short escapes where JSON has them.
fn write_string(sink: &mut HashSink, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    sink.0.update(b"\"");
    let bytes = text.as_bytes();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        sink.0.update(&bytes[start..index]);
        if short.is_empty() {
            sink.0.update([
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0x0f)],
            ]);
        } else {
            sink.0.update(short);
        }
        start = index + 1;
    }
    sink.0.update(&bytes[start..]);
    sink.0.update(b"\"");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The reference canonical form, built the slow way through serde_json.
    fn reference(value: &Value) -> String {
        fn sorted(value: &Value) -> Value {
            match value {
                Value::Object(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    Value::Object(
                        keys.into_iter()
                            .map(|k| (k.clone(), sorted(&map[k])))
                            .collect(),
                    )
                }
                Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
                other => other.clone(),
            }
        }
        serde_json::to_string(&sorted(value)).unwrap()
    }

    fn digest_of_text(text: &str) -> [u8; ARGS_DIGEST_LEN] {
        let full = Sha256::digest(text.as_bytes());
        full[..ARGS_DIGEST_LEN].try_into().unwrap()
    }

    #[test]
    fn canonical_form_matches_sorted_compact_serde_json() {
        let args = json!({
            "z": [1, -2, 3.5, 1e300, null, true, false, {"b": 1, "a": [[], {}]}],
            "a": "quote \" backslash \\ newline \n tab \t bell \u{7} del \u{7f} é 日本 😀",
            "m": {"y": {"x": {}}, "é": 0, "e": -0.0},
            "": ""
        });
        let map = args.as_object().unwrap();
        assert_eq!(
            arguments_digest(Some(map)),
            digest_of_text(&reference(&args))
        );
    }

    #[test]
    fn missing_arguments_digest_like_an_empty_object() {
        assert_eq!(arguments_digest(None), arguments_digest(Some(&Map::new())));
        assert_eq!(arguments_digest(None), digest_of_text("{}"));
    }

    #[test]
    fn key_order_does_not_change_the_digest() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":{"c":2,"d":3}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":{"d":3,"c":2},"a":1}"#).unwrap();
        assert_eq!(
            arguments_digest(a.as_object()),
            arguments_digest(b.as_object())
        );
    }

    #[test]
    fn deeply_nested_arguments_do_not_overflow_the_stack() {
        let mut value = json!(0);
        for _ in 0..100_000 {
            value = Value::Array(vec![value]);
        }
        let mut map = Map::new();
        map.insert("deep".into(), value);
        let _ = arguments_digest(Some(&map));
        // Dropping a value this deep recurses inside serde_json itself; leak it instead.
        std::mem::forget(map);
    }
}
