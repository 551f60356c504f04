//! Small pieces the client and server share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
#[cfg(test)]
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::types::v2026_07_28::RequestId;

/// Request ids as map keys (`1` and `"1"` are different ids).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    Int(i64),
    Str(String),
}

impl From<&RequestId> for IdKey {
    fn from(id: &RequestId) -> Self {
        match id {
            RequestId::Integer(i) => Self::Int(*i),
            RequestId::String(s) => Self::Str(s.clone()),
        }
    }
}

impl IdKey {
    pub(crate) fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Number(n) => n.as_i64().map(Self::Int),
            Value::String(s) => Some(Self::Str(s.clone())),
            _ => None,
        }
    }
}

/// `text` cut to at most `max` bytes (on a character boundary), saying how long it
/// was: what an error message may echo of a peer's value.
pub(crate) fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len()))
}

/// Locks a mutex, recovering the data if a panicking holder poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The last `N` items kept, the oldest replaced first: the memories a server keeps of
/// what it read or wrote lately (`_meta` texts, questions).
#[derive(Debug)]
pub(crate) struct Recent<T, const N: usize> {
    items: Vec<T>,
    /// The item replaced next, once `items` is full.
    next: usize,
}

impl<T, const N: usize> Default for Recent<T, N> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            next: 0,
        }
    }
}

impl<T, const N: usize> Recent<T, N> {
    /// Keeps `item`, in place of the oldest once `N` are kept.
    pub(crate) fn push(&mut self, item: T) {
        if self.items.len() < N {
            self.items.push(item);
        } else if let Some(slot) = self.items.get_mut(self.next) {
            *slot = item;
            self.next = (self.next + 1) % N;
        }
    }

    /// The items kept, in no particular order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// How many are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// The requests a peer has in flight, by id, so `notifications/cancelled` can stop the
/// one it names and a closing connection or session can stop them all. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight(Arc<Mutex<HashMap<IdKey, CancellationToken>>>);

impl InFlight {
    /// Registers request `id`, cancelled through `cancel`; the returned guard forgets it
    /// when the request is done.
    pub(crate) fn track(&self, id: &RequestId, cancel: CancellationToken) -> Tracked {
        let key = IdKey::from(id);
        lock(&self.0).insert(key.clone(), cancel);
        Tracked {
            in_flight: self.clone(),
            key,
        }
    }

    /// Cancels the request the peer withdrew (`params.requestId` of
    /// `notifications/cancelled`), if it is still running.
    pub(crate) fn cancel(&self, params: Option<&Value>) {
        let key = params
            .and_then(|p| p.get("requestId"))
            .and_then(IdKey::from_value);
        if let Some(token) = key.and_then(|k| lock(&self.0).remove(&k)) {
            token.cancel();
        }
    }

    /// Cancels every request in flight.
    pub(crate) fn cancel_all(&self) {
        for (_, token) in lock(&self.0).drain() {
            token.cancel();
        }
    }

    /// Whether no request is in flight.
    #[cfg(feature = "http-server")]
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.0).is_empty()
    }
}

/// Forgets a tracked request when dropped.
#[derive(Debug)]
pub(crate) struct Tracked {
    in_flight: InFlight,
    key: IdKey,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        lock(&self.in_flight.0).remove(&self.key);
    }
}

/// `value` written as JSON text (a parsed value always writes back out).
#[cfg(test)]
pub(crate) fn raw_json(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|e| {
        tracing::error!(error = %e, "could not write a JSON value");
        RawValue::NULL.to_owned()
    })
}

/// Seconds since the Unix epoch (0 before it).
#[cfg(any(feature = "oauth", feature = "dpop", feature = "introspection"))]
pub(crate) fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `N` random bytes as lowercase hex.
#[cfg(feature = "http-server")]
pub(crate) fn random_hex<const N: usize>() -> String {
    use std::fmt::Write as _;
    let mut bytes = [0u8; N];
    rand::fill(&mut bytes[..]);
    bytes.iter().fold(String::with_capacity(N * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// 128 random bits, URL-safe base64 without padding (22 characters).
pub(crate) fn random_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    rand::fill(&mut bytes[..]);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// base64url(SHA-256(`text`)), no padding: a DPoP proof's `ath` (RFC 9449 §4.2).
#[cfg(any(feature = "oauth", feature = "dpop"))]
pub(crate) fn sha256_b64url(text: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(text.as_bytes()))
}

/// `Basic base64(id:secret)`, each half form-encoded first (RFC 6749 §2.3.1).
#[cfg(any(feature = "oauth", feature = "introspection"))]
pub(crate) fn basic_auth(id: &str, secret: &str) -> String {
    use base64::Engine as _;
    let credentials = format!("{}:{}", form_urlencoded(id), form_urlencoded(secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(credentials)
    )
}

/// `application/x-www-form-urlencoded` for one value.
#[cfg(any(feature = "oauth", feature = "introspection"))]
pub(crate) fn form_urlencoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// JSON Schema validation, as both sides use it (feature `schema-validation`): a
/// schema compiled once, and the place a failure names, written as the decoding
/// errors name fields (`a.b.0`, not `/a/b/0`).
#[cfg(feature = "schema-validation")]
pub(crate) mod schema {
    use std::sync::Arc;

    /// `schema` compiled, or `None` (logged, naming `what`) when it does not compile.
    pub(crate) fn compile(
        schema: &impl serde::Serialize,
        what: &str,
    ) -> Option<Arc<jsonschema::Validator>> {
        let schema = serde_json::to_value(schema).unwrap_or_default();
        match jsonschema::validator_for(&schema) {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => {
                tracing::warn!(error = %e, "{what} does not compile: it is not checked");
                None
            }
        }
    }

    /// Checks `value` against `validator`: the place and the failure, `whole` naming
    /// the value itself.
    pub(crate) fn check(
        validator: &jsonschema::Validator,
        value: &serde_json::Value,
        whole: &str,
    ) -> Result<(), String> {
        validator.validate(value).map_err(|e| {
            let pointer = e.instance_path().to_string();
            let path = pointer.trim_start_matches('/').replace('/', ".");
            if path.is_empty() {
                format!("{whole}: {e}")
            } else {
                format!("`{path}`: {e}")
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    #[test]
    fn members_are_found_as_text_in_one_pass() {
        let object = raw(r#"{"a":1,"_meta":{"x":[1,{"y":2}]},"name":"t\"q","z":null}"#);
        let [meta, name, missing] =
            crate::types::rpc::members(object.get(), ["_meta", "name", "nope"]);
        assert_eq!(meta, Some(r#"{"x":[1,{"y":2}]}"#));
        assert_eq!(name, Some(r#""t\"q""#));
        assert!(missing.is_none());
    }

    #[test]
    fn the_last_of_a_repeated_member_wins_and_a_non_object_has_none() {
        let object = raw(r#"{"name":"first","name":"last"}"#);
        assert_eq!(
            crate::types::rpc::members(object.get(), ["name"])[0],
            Some(r#""last""#)
        );
        assert!(crate::types::rpc::members(raw("[1,2]").get(), ["name"])[0].is_none());
        assert!(crate::types::rpc::members(raw(r#""text""#).get(), ["name"])[0].is_none());
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            "[a-z\\\\\"{}\\[\\],: \\u{e9}]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z\\\\\"]{0,3}", inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The byte scan finds what a parser finds: each member's value, compact or
        /// pretty-printed, escapes and nesting included.
        #[test]
        fn the_scan_finds_what_a_parser_finds(
            members in proptest::collection::vec(("[a-z\\\\\"]{0,3}", json_value()), 0..5),
            pretty in proptest::prelude::any::<bool>(),
        ) {
            let object: serde_json::Map<String, Value> = members.into_iter().collect();
            let text = if pretty {
                serde_json::to_string_pretty(&object).unwrap()
            } else {
                serde_json::to_string(&object).unwrap()
            };
            let keys: Vec<&str> = object.keys().map(String::as_str).chain(["absent"]).collect();
            for key in keys {
                let [found] = crate::types::rpc::members(&text, [key]);
                let found = found.map(|t| serde_json::from_str::<Value>(t).unwrap());
                proptest::prop_assert_eq!(found.as_ref(), object.get(key), "{} in {}", key, text);
            }
        }
    }
}
