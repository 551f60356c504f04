//! The resolvers' state from round to round, inside the (sealed) `requestState`:
//! `{"v":1,"answers":{key:{"q":digest,"a":answer}},"asked":{key:digest}}`, written by
//! hand from borrowed parts and read back in place, each answer the text the client
//! sent.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Asked;
use crate::jsonrpc::RpcError;
use crate::mcp::tool::ToolError;

/// What the resolvers kept from the previous round (sealed by the server like any
/// state), read in place: each answer stays the text the client sent. The format is
/// `{"v":1,"answers":{key:{"q":digest,"a":answer}},"asked":{key:digest}}`.
#[derive(Default, Deserialize)]
pub(super) struct Previous<'a> {
    /// Answers kept: key -> the digest of the question answered and the answer.
    #[serde(default, borrow)]
    answers: Members<'a, Recorded<'a>>,
    /// The questions asked in the previous round: key -> digest.
    #[serde(default, borrow)]
    asked: Members<'a, &'a str>,
}

impl<'a> Previous<'a> {
    /// The answer kept under `key`.
    pub(super) fn answer(&self, key: &str) -> Option<&Recorded<'a>> {
        self.answers.get(key)
    }

    /// The digest of the question asked under `key` in the previous round.
    pub(super) fn asked(&self, key: &str) -> Option<&'a str> {
        self.asked.get(key).copied()
    }
}

#[derive(Deserialize)]
pub(super) struct Recorded<'a> {
    pub(super) q: &'a str,
    #[serde(borrow)]
    pub(super) a: &'a RawValue,
}

/// An object's members in order, read without a map: a round keeps a handful. A
/// member named twice counts as its last, as a map would keep it.
struct Members<'a, V>(Vec<(Cow<'a, str>, V)>);

impl<V> Default for Members<'_, V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> Members<'_, V> {
    fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'de: 'a, 'a, V: Deserialize<'de>> Deserialize<'de> for Members<'a, V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a, V>(std::marker::PhantomData<(&'a (), V)>);
        impl<'de: 'a, 'a, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<'a, V> {
            type Value = Members<'a, V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some(Key(key)) = map.next_key()? {
                    out.push((key, map.next_value()?));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A member's name, borrowed from the text unless it had to be unescaped.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(Visit(std::marker::PhantomData))
    }
}

/// The state for the next round, in [`Previous`]'s format.
#[derive(Default)]
pub(super) struct Next<'a> {
    /// key -> the question answered and the answer's text.
    pub(super) answers: Vec<(&'a str, (Arc<Asked>, &'a str))>,
    /// key -> the question asked now.
    pub(super) asked: Vec<(&'a str, Arc<Asked>)>,
}

impl Next<'_> {
    /// The state written as JSON, by hand: keys quoted, digests (hex) and answers (JSON
    /// the client sent, read once already) as they are.
    pub(super) fn state(&self) -> Result<String, ToolError> {
        let room = 40
            + self
                .answers
                .iter()
                .map(|(k, (_, a))| k.len() + a.len() + 60)
                .sum::<usize>()
            + self.asked.iter().map(|(k, _)| k.len() + 40).sum::<usize>();
        let mut out = Vec::with_capacity(room);
        out.extend_from_slice(br#"{"v":1,"answers":{"#);
        for (i, (key, (asked, answer))) in self.answers.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            crate::jsonrpc::push_quoted(&mut out, key);
            out.extend_from_slice(br#":{"q":"#);
            crate::jsonrpc::push_quoted(&mut out, &asked.digest);
            out.extend_from_slice(br#","a":"#);
            out.extend_from_slice(answer.as_bytes());
            out.push(b'}');
        }
        out.extend_from_slice(br#"},"asked":{"#);
        for (i, (key, asked)) in self.asked.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            crate::jsonrpc::push_quoted(&mut out, key);
            out.push(b':');
            crate::jsonrpc::push_quoted(&mut out, &asked.digest);
        }
        out.extend_from_slice(b"}}");
        String::from_utf8(out).map_err(|e| {
            tracing::error!(error = %e, "could not encode resolver state");
            ToolError::protocol(RpcError::internal("Internal error"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_reads_back_as_written_whatever_its_keys_hold() {
        let asked = Arc::new(Asked {
            request: crate::ask::elicit_url("Sign in", "https://example.com"),
            digest: "00ff".into(),
        });
        let next = Next {
            answers: vec![
                ("plain", (Arc::clone(&asked), r#"{"action":"accept"}"#)),
                ("quo\"te\\d", (Arc::clone(&asked), "[1, 2]")),
            ],
            asked: vec![("n\u{e9}e\n", Arc::clone(&asked))],
        };
        let state = next.state().unwrap();
        let written: serde_json::Value = serde_json::from_str(&state).unwrap();
        let expected = serde_json::json!({
            "v": 1,
            "answers": {
                "plain": {"q": "00ff", "a": {"action": "accept"}},
                "quo\"te\\d": {"q": "00ff", "a": [1, 2]},
            },
            "asked": {"n\u{e9}e\n": "00ff"},
        });
        assert_eq!(written, expected);
        let previous: Previous<'_> = serde_json::from_str(&state).unwrap();
        assert_eq!(previous.answer("plain").map(|r| r.q), Some("00ff"));
        assert_eq!(
            previous.answer("quo\"te\\d").map(|r| r.a.get()),
            Some("[1, 2]")
        );
        assert_eq!(previous.asked("n\u{e9}e\n"), Some("00ff"));
        assert_eq!(previous.asked("plain"), None);
    }

    #[test]
    fn a_member_named_twice_in_the_state_counts_as_its_last() {
        let previous: Previous<'_> =
            serde_json::from_str(r#"{"v":1,"asked":{"k":"one","k":"two"}}"#).unwrap();
        assert_eq!(previous.asked("k"), Some("two"));
    }
}
