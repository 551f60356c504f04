//! The arguments digest: SHA-256 over a canonical JSON form, truncated to 16 bytes.
//!
//! Canonical means compact, with every object's keys sorted by code point (byte order of
//! their UTF-8), so two argument maps that differ only in key order bind the same token.
//! Missing arguments hash as `{}`. The resolvers' question digest is the same hash of any
//! JSON value ([`json_digest`]), so tern has one canonical form, not two. The JSON is streamed into the hash, never built as a
//! string, and walked with an explicit stack so no nesting depth can overflow ours.

use std::fmt::{self, Write as _};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::canonical_text::{Shape, shape, without_spacing};

use self::sha256::Sha256;

/// Length of the truncated digest kept in the claims.
pub(crate) const ARGS_DIGEST_LEN: usize = 16;

/// The digest of a text that is canonical JSON: the text hashed as it is.
pub(super) fn canonical_digest(text: &[u8]) -> [u8; ARGS_DIGEST_LEN] {
    let mut sink = HashSink::new();
    sink.put(text);
    truncate(&sink.finalize())
}

/// The digest of `arguments` (absent arguments digest like an empty object).
pub(crate) fn arguments_digest(arguments: Option<&Map<String, Value>>) -> [u8; ARGS_DIGEST_LEN] {
    let mut sink = HashSink::new();
    match arguments {
        Some(map) => {
            let root = open_object(&mut sink, map);
            write_canonical(&mut sink, root);
        }
        None => sink.put(b"{}"),
    }
    truncate(&sink.finalize())
}

/// [`arguments_digest`] of the map `arguments` (JSON text of an object) reads as,
/// computed from the text itself when it is canonical but for its spacing (see
/// [`canonical_text`](super::canonical_text)), from the map read now otherwise. Text no
/// map reads (a number out of range) is bound to as it was sent.
pub(crate) fn text_arguments_digest(arguments: Option<&RawValue>) -> [u8; ARGS_DIGEST_LEN] {
    let Some(raw) = arguments else {
        return arguments_digest(None);
    };
    let text = raw.get().as_bytes();
    let mut sink = HashSink::new();
    match shape(text) {
        Some(Shape::Compact) => sink.put(text),
        Some(Shape::Spaced) => without_spacing(text, |piece| sink.put(piece)),
        None => match serde_json::from_str::<Map<String, Value>>(raw.get()) {
            Ok(map) => return arguments_digest(Some(&map)),
            Err(_) => sink.put(text),
        },
    }
    truncate(&sink.finalize())
}

/// The digest of any JSON value's canonical form: what a resolver's recorded answer is
/// bound to (the question it answered).
pub(crate) fn json_digest(value: &Value) -> [u8; ARGS_DIGEST_LEN] {
    let mut sink = HashSink::new();
    match value {
        Value::Object(map) => {
            let root = open_object(&mut sink, map);
            write_canonical(&mut sink, root);
        }
        Value::Array(items) => {
            sink.put_byte(b'[');
            write_canonical(&mut sink, Frame::Array(items.iter(), true));
        }
        leaf => write_leaf(&mut sink, leaf),
    }
    truncate(&sink.finalize())
}

fn truncate(full: &[u8]) -> [u8; ARGS_DIGEST_LEN] {
    let mut digest = [0u8; ARGS_DIGEST_LEN];
    digest.copy_from_slice(&full[..ARGS_DIGEST_LEN]);
    digest
}

/// How many bytes of canonical JSON gather before they go to the hash.
const SINK_BUFFER_LEN: usize = 128;

/// Feeds the hash in chunks: the walk writes many pieces of a few bytes each, and one
/// `Sha256::update` per piece cost more than the compression itself.
struct HashSink {
    hash: Sha256,
    buffer: [u8; SINK_BUFFER_LEN],
    len: usize,
}

impl HashSink {
    fn new() -> Self {
        Self {
            hash: Sha256::default(),
            buffer: [0; SINK_BUFFER_LEN],
            len: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        if let Some(room) = self.buffer.get_mut(self.len..self.len + bytes.len()) {
            room.copy_from_slice(bytes);
            self.len += bytes.len();
            return;
        }
        self.flush();
        match self.buffer.get_mut(..bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len = bytes.len();
            }
            None => self.hash.update(bytes),
        }
    }

    fn put_byte(&mut self, byte: u8) {
        if self.len == SINK_BUFFER_LEN {
            self.flush();
        }
        match self.buffer.get_mut(self.len) {
            Some(slot) => {
                *slot = byte;
                self.len += 1;
            }
            None => self.hash.update([byte]),
        }
    }

    /// `"` + `text` + `"`, for text that needs no escape, as one copy when it fits.
    fn put_quoted(&mut self, text: &[u8]) {
        let end = self.len + text.len() + 2;
        match self.buffer.get_mut(self.len..end) {
            Some([open, middle @ .., close]) => {
                *open = b'"';
                middle.copy_from_slice(text);
                *close = b'"';
                self.len = end;
            }
            _ => {
                self.put_byte(b'"');
                self.put(text);
                self.put_byte(b'"');
            }
        }
    }

    fn flush(&mut self) {
        self.hash.update(&self.buffer[..self.len]);
        self.len = 0;
    }

    // By reference: the sink is ~0.25 KiB, and taking it by value copied it.
    fn finalize(&mut self) -> [u8; 32] {
        self.flush();
        std::mem::take(&mut self.hash).finish()
    }
}

impl fmt::Write for HashSink {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
    }
}

/// Where the walk is inside one container: what is left of it, and whether nothing of
/// it has been written yet (so no comma is due).
enum Frame<'a> {
    Array(std::slice::Iter<'a, Value>, bool),
    Object(Members<'a>, bool),
}

/// An object's members in code point order of their keys.
enum Members<'a> {
    /// The map's own order, when it already is the canonical one: no copy to sort.
    InOrder(serde_json::map::Iter<'a>),
    /// A sorted copy of the member references.
    Sorted(std::vec::IntoIter<(&'a String, &'a Value)>),
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Members::InOrder(members) => members.next(),
            Members::Sorted(members) => members.next(),
        }
    }
}

/// Writes the rest of the container `root` was opened for (its opening bracket is
/// already written) and everything inside it.
fn write_canonical<'a>(sink: &mut HashSink, root: Frame<'a>) {
    // The container being walked; the ones it interrupted wait in `parents`, which is
    // never allocated for arguments with no nested arrays or objects.
    let mut current = root;
    let mut parents: Vec<Frame<'_>> = Vec::new();
    loop {
        let next = match &mut current {
            Frame::Array(items, first) => items.next().inspect(|_| {
                if !std::mem::take(first) {
                    sink.put_byte(b',');
                }
            }),
            Frame::Object(members, first) => members.next().map(|(key, value)| {
                if !std::mem::take(first) {
                    sink.put_byte(b',');
                }
                write_string(sink, key);
                sink.put_byte(b':');
                value
            }),
        };
        match next {
            Some(Value::Object(map)) => {
                let inner = open_object(sink, map);
                parents.push(std::mem::replace(&mut current, inner));
            }
            Some(Value::Array(items)) => {
                sink.put_byte(b'[');
                parents.push(std::mem::replace(
                    &mut current,
                    Frame::Array(items.iter(), true),
                ));
            }
            Some(leaf) => write_leaf(sink, leaf),
            None => {
                sink.put_byte(match current {
                    Frame::Array(..) => b']',
                    Frame::Object(..) => b'}',
                });
                match parents.pop() {
                    Some(parent) => current = parent,
                    None => return,
                }
            }
        }
    }
}

fn open_object<'a>(sink: &mut HashSink, map: &'a Map<String, Value>) -> Frame<'a> {
    sink.put_byte(b'{');
    if map.keys().is_sorted() {
        return Frame::Object(Members::InOrder(map.iter()), true);
    }
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    // Keys are unique, so stability is moot; the stable sort's insertion sort is simply
    // the cheaper one for the handful of keys arguments usually have.
    members.sort_by(|a, b| a.0.cmp(b.0));
    Frame::Object(Members::Sorted(members.into_iter()), true)
}

fn write_leaf(sink: &mut HashSink, leaf: &Value) {
    match leaf {
        Value::Null => sink.put(b"null"),
        Value::Bool(true) => sink.put(b"true"),
        Value::Bool(false) => sink.put(b"false"),
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
    let bytes = text.as_bytes();
    // Keys and values rarely need an escape; then the quoted text goes in as one piece.
    if !bytes
        .iter()
        .any(|&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
    {
        sink.put_quoted(bytes);
        return;
    }
    sink.put_byte(b'"');
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
        sink.put(&bytes[start..index]);
        if short.is_empty() {
            sink.put(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0x0f)],
            ]);
        } else {
            sink.put(short);
        }
        start = index + 1;
    }
    sink.put(&bytes[start..]);
    sink.put_byte(b'"');
}

/// SHA-256 for the digests: ring's (assembly that uses the CPU's SHA extensions, or its
/// vector units, whichever it finds) under `seal-ring`, the `sha2` crate's otherwise.
/// Both compute the same bytes; the tests pin them to `sha2`.
mod sha256 {
    /// A SHA-256 computation in progress.
    pub(super) struct Sha256(
        #[cfg(feature = "seal-ring")] ring::digest::Context,
        #[cfg(not(feature = "seal-ring"))] sha2::Sha256,
    );

    impl Default for Sha256 {
        #[cfg(feature = "seal-ring")]
        fn default() -> Self {
            Self(ring::digest::Context::new(&ring::digest::SHA256))
        }

        #[cfg(not(feature = "seal-ring"))]
        fn default() -> Self {
            Self(<sha2::Sha256 as sha2::Digest>::new())
        }
    }

    impl Sha256 {
        pub(super) fn update(&mut self, bytes: impl AsRef<[u8]>) {
            #[cfg(feature = "seal-ring")]
            self.0.update(bytes.as_ref());
            #[cfg(not(feature = "seal-ring"))]
            sha2::Digest::update(&mut self.0, bytes);
        }

        pub(super) fn finish(self) -> [u8; 32] {
            let mut out = [0u8; 32];
            #[cfg(feature = "seal-ring")]
            out.copy_from_slice(self.0.finish().as_ref());
            #[cfg(not(feature = "seal-ring"))]
            out.copy_from_slice(&sha2::Digest::finalize(self.0));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sha2::Digest as _;

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
        let full = sha2::Sha256::digest(text.as_bytes());
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
    fn pieces_straddling_the_sink_buffer_hash_as_one_text() {
        // Strings of every length up to past twice the buffer, each preceded by a key that
        // shifts where it starts, plain or with escapes placed so some straddle a flush.
        for len in 0..2 * SINK_BUFFER_LEN + 10 {
            let text: String = (0..len)
                .map(|i| match i % 37 {
                    0 => '"',
                    11 => '\n',
                    23 => '\u{1}',
                    29 => 'é',
                    _ => 'a',
                })
                .collect();
            // Plain text takes the unescaped path, the rest the escaping one.
            let args = json!({
                "k".repeat(len % 7 + 1): text,
                "n": [len, -1.5, {"b": null, "a": text}],
                "p": "p".repeat(len),
                "q": ["q".repeat(len % 131), "r".repeat(len / 2)],
            });
            assert_eq!(
                arguments_digest(args.as_object()),
                digest_of_text(&reference(&args)),
                "len {len}"
            );
        }
    }

    #[test]
    fn sorted_and_unsorted_objects_at_any_depth_hash_canonically() {
        let args = json!({
            "a": {"x": 1, "y": {"q": [], "p": {}}},
            "b": [{"d": 1, "c": 2}, {"c": 2, "d": 1}],
            "c": {"z": {"b": [1, {"y": 0, "x": 0}]}, "a": "sorted after"}
        });
        assert_eq!(
            arguments_digest(args.as_object()),
            digest_of_text(&reference(&args))
        );
    }

    #[test]
    fn any_json_value_hashes_its_canonical_form() {
        let object = json!({"b": [{"d": 1, "c": "x"}], "a": null});
        assert_eq!(json_digest(&object), arguments_digest(object.as_object()));
        for value in [
            object.clone(),
            json!([{"z": 1, "y": [2, {"b": 0, "a": 0}]}, "s", 1.5]),
            json!([]),
            json!("a \"quoted\" string"),
            json!(-7),
            json!(true),
            Value::Null,
        ] {
            assert_eq!(
                json_digest(&value),
                digest_of_text(&reference(&value)),
                "{value}"
            );
        }
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
