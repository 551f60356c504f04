//! Reading unions: a value's text buffered (borrowed from the input when it can be),
//! a tagged union read in one pass, and the byte scan that finds an object's members.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer};

use super::MemberName;

/// A union's value buffered as JSON text, to read its discriminator and then the
/// variant it names: no tree is built. The text is borrowed from the input when the
/// deserializer reads borrowed text (`serde_json::from_str`, `from_slice`), so a union
/// nested in another is not copied once per level; it is copied otherwise (a reader,
/// a `serde_json::Value`).
#[doc(hidden)]
#[derive(Debug)]
pub struct Buffered<'de>(Cow<'de, str>);

impl Buffered<'_> {
    /// The value's JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Buffered<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        buffer(deserializer)
    }
}

/// The name under which serde_json hands over a value's raw text (its `RawValue`
/// protocol): asked for as a newtype struct of this name, serde_json's deserializers
/// visit a map of one member whose value is the text, borrowed when they can. A
/// deserializer that does not know the name visits the newtype instead, and the text is
/// then taken through `Box<RawValue>` (a copy), so decoding never depends on the name.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Buffers a union's value as JSON text ([`Buffered`]). Reads from serde_json's
/// deserializers (text or `serde_json::Value`).
#[doc(hidden)]
pub fn buffer<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Buffered<'de>, D::Error> {
    struct Raw;
    impl<'de> serde::de::Visitor<'de> for Raw {
        type Value = Buffered<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            match map.next_key::<MemberName<'de>>()? {
                Some(key) if key.as_str() == RAW_VALUE_TOKEN => {
                    map.next_value::<MemberName<'de>>().map(|text| Buffered(text.0))
                }
                // A map that is not serde_json's raw text (a deserializer that forwards
                // every request to `deserialize_any`): written out from a tree.
                first => {
                    let mut object = serde_json::Map::new();
                    let mut key = first;
                    while let Some(name) = key {
                        object.insert(name.into_string(), map.next_value::<serde_json::Value>()?);
                        key = map.next_key::<MemberName<'de>>()?;
                    }
                    Ok(Buffered(Cow::Owned(serde_json::Value::Object(object).to_string())))
                }
            }
        }
        fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
            <Box<serde_json::value::RawValue>>::deserialize(deserializer)
                .map(|raw| Buffered(Cow::Owned(String::from(raw.get()))))
        }
    }
    deserializer.deserialize_newtype_struct(RAW_VALUE_TOKEN, Raw)
}

/// A union told apart by one member, its tag (`method`, `type`, `mode`, ...).
#[doc(hidden)]
pub trait TaggedUnion: Sized {
    /// The member that names the variant.
    const TAG: &'static str;
    /// The tag's JSON text to give the variant when the member is absent (`None`: the
    /// variant reads the object as it is).
    const IMPLIED: Option<&'static str> = None;
    /// Reads the variant `tag` names (`None`: the member is absent, or not a string)
    /// from `deserializer`, which holds the whole object, the tag included.
    fn variant<'de, X: Deserializer<'de>>(tag: Option<&str>, deserializer: X) -> Result<Self, X::Error>;
}

/// Reads a [`TaggedUnion`] in one pass over its object: the members before the tag are
/// kept as text borrowed from the input (none when the tag comes first, as tern writes
/// it), the tag is read, and the variant it names reads the kept members again and then
/// the rest straight from the input. No tree is built and the object is not scanned a
/// second time to find its tag.
#[doc(hidden)]
pub fn tagged<'de, D: Deserializer<'de>, U: TaggedUnion>(deserializer: D) -> Result<U, D::Error> {
    deserializer.deserialize_map(Tagged::<U>(std::marker::PhantomData))
}

struct Tagged<U>(std::marker::PhantomData<U>);

impl<'de, U: TaggedUnion> serde::de::Visitor<'de> for Tagged<U> {
    type Value = U;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a JSON object with its `{}` member", U::TAG)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<U, A::Error> {
        let mut before = Vec::new();
        while let Some(key) = map.next_key::<MemberName<'de>>()? {
            let value = map.next_value::<Buffered<'de>>()?;
            if key.as_str() != U::TAG {
                before.push((key.0, value));
                continue;
            }
            let name: Option<Cow<'de, str>> = match &value.0 {
                Cow::Borrowed(text) => serde_json::from_str::<MemberName<'de>>(text).ok().map(|n| n.0),
                Cow::Owned(text) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
            };
            let replay = Replay { before: before.into_iter(), tag: Some((key.0, value)), value: None, rest: Some(map) };
            return U::variant(name.as_deref(), serde::de::value::MapAccessDeserializer::new(replay));
        }
        let tag = U::IMPLIED.map(|text| (Cow::Borrowed(U::TAG), Buffered(Cow::Borrowed(text))));
        let replay = Replay { before: before.into_iter(), tag, value: None, rest: None::<A> };
        U::variant(None, serde::de::value::MapAccessDeserializer::new(replay))
    }
}

/// An object whose first members were already read: replays them (kept as text), then
/// the tag, then reads on.
struct Replay<'de, A> {
    before: std::vec::IntoIter<(Cow<'de, str>, Buffered<'de>)>,
    tag: Option<(Cow<'de, str>, Buffered<'de>)>,
    /// The value of the member just replayed.
    value: Option<Buffered<'de>>,
    /// The input's own map, `None` once it has ended.
    rest: Option<A>,
}

impl<'de, A: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for Replay<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        if let Some((key, value)) = self.before.next().or_else(|| self.tag.take()) {
            self.value = Some(value);
            return seed.deserialize(serde::de::value::CowStrDeserializer::new(key)).map(Some);
        }
        match &mut self.rest {
            Some(rest) => rest.next_key_seed(seed),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        if let Some(value) = self.value.take() {
            return match value.0 {
                Cow::Borrowed(text) => seed
                    .deserialize(&mut serde_json::Deserializer::from_str(text))
                    .map_err(serde::de::Error::custom),
                // Text that could not be borrowed from the input (read from a
                // `serde_json::Value`): read through a tree, which borrows nothing.
                Cow::Owned(text) => {
                    let tree: serde_json::Value = serde_json::from_str(&text).map_err(serde::de::Error::custom)?;
                    seed.deserialize(tree).map_err(serde::de::Error::custom)
                }
            };
        }
        match &mut self.rest {
            Some(rest) => rest.next_value_seed(seed),
            None => Err(serde::de::Error::custom("a member's value was asked for twice")),
        }
    }
}

/// The top-level members `keys` of the JSON object written in `object`, as text (the
/// last of a repeated member wins, as in a parsed object); `None` for each one absent,
/// and for all when `object` is not an object.
///
/// `object` is text a JSON parser has already read whole (a buffered value, a message's
/// params): the members are found by one scan of its bytes, strings and nesting skipped,
/// no value decoded and nothing allocated. Text that is not well-formed gives no members
/// rather than a panic; what is found in it is checked again when it is decoded.
#[doc(hidden)]
pub fn members<'a, const N: usize>(object: &'a str, keys: [&str; N]) -> [Option<&'a str>; N] {
    scan::members(object, keys).unwrap_or([None; N])
}

/// The byte scan behind [`members`], whose walk over an object's members
/// ([`each_member`](scan::each_member)) tern's message reader shares: `None` when the
/// text is not what it should be.
#[doc(hidden)]
pub mod scan {
    use std::ops::Range;

    /// Where each of `keys` is in `object`.
    pub(super) fn members<'a, const N: usize>(object: &'a str, keys: [&str; N]) -> Option<[Option<&'a str>; N]> {
        let mut found = [None; N];
        each_member(object.as_bytes(), |key, value| {
            if let Some(i) = slot(object.get(key)?, &keys) {
                found[i] = Some(object.get(value)?);
            }
            Some(())
        })?;
        Some(found)
    }

    /// Calls `each` with the byte ranges of every member's name (with its quotes) and
    /// value, in order, in the object that opens `bytes`; returns where the object
    /// ends (just past its `}`). `None` when the text is not an object there, or when
    /// `each` says `None`.
    pub fn each_member(
        bytes: &[u8],
        mut each: impl FnMut(Range<usize>, Range<usize>) -> Option<()>,
    ) -> Option<usize> {
        walk_members(
            bytes,
            |key, start| {
                let end = value_end(bytes, start)?;
                each(key, start..end)?;
                Some(end)
            },
        )
    }

    /// The walk behind [`each_member`], for a reader that decides where a value ends
    /// itself: `each` is given a member's name (with its quotes) and where its value
    /// starts, and says where the value ends (`None` stops the walk).
    #[inline]
    pub fn walk_members(
        bytes: &[u8],
        mut each: impl FnMut(Range<usize>, usize) -> Option<usize>,
    ) -> Option<usize> {
        let mut at = blank(bytes, 0);
        if bytes.get(at) != Some(&b'{') {
            return None;
        }
        at = blank(bytes, at + 1);
        if bytes.get(at) == Some(&b'}') {
            return Some(at + 1);
        }
        loop {
            let key_end = string_end(bytes, at)?;
            let key = at..key_end;
            at = blank(bytes, key_end);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            let start = blank(bytes, at + 1);
            let end = each(key, start)?;
            at = blank(bytes, end);
            match bytes.get(at) {
                Some(b',') => at = blank(bytes, at + 1),
                Some(b'}') => return Some(at + 1),
                _ => return None,
            }
        }
    }

    /// A member name (or any JSON string) as written, with its quotes: borrowed when it
    /// is plain; read by serde_json when it has an escape, or what JSON refuses in a
    /// string (a bare quote, a control character), so it is what serde_json reads or
    /// nothing.
    pub fn member_name(quoted: &str) -> Option<std::borrow::Cow<'_, str>> {
        let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
        if inner.bytes().all(|b| b >= 0x20 && b != b'\\' && b != b'"') {
            Some(std::borrow::Cow::Borrowed(inner))
        } else {
            serde_json::from_str::<String>(quoted).ok().map(std::borrow::Cow::Owned)
        }
    }

    /// Which of `keys` the member name `quoted` (with its quotes) is.
    fn slot(quoted: &str, keys: &[&str]) -> Option<usize> {
        let inner = quoted.get(1..quoted.len() - 1)?;
        if !inner.contains('\\') {
            return keys.iter().position(|k| *k == inner);
        }
        let name: String = serde_json::from_str(quoted).ok()?;
        keys.iter().position(|k| *k == name)
    }

    /// The first byte at or after `at` that is not JSON whitespace.
    pub fn blank(bytes: &[u8], mut at: usize) -> usize {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
            at += 1;
        }
        at
    }

    /// How many bytes [`string_end`] reads one at a time before a vector search.
    const SHORT_STRING: usize = 16;

    /// Just past the string that opens at `at`: a short one read a byte at a time, the
    /// rest of a longer one skipped a vector at a time.
    pub fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let mut from = at + 1;
        // Most strings in a message are short (member names, constants): a byte at a
        // time finds their end before a vector search is set up.
        let rest = bytes.get(from..)?;
        let short = rest.get(..SHORT_STRING).unwrap_or(rest);
        match short.iter().position(|&b| b == b'"' || b == b'\\') {
            Some(i) if short[i] == b'"' => return Some(from + i + 1),
            Some(i) => from += i,
            None => from += short.len(),
        }
        loop {
            let rest = bytes.get(from..)?;
            let found = memchr::memchr2(b'"', b'\\', rest)?;
            if rest[found] == b'"' {
                return Some(from + found + 1);
            }
            from += found + 2;
        }
    }

    /// Just past the value that starts at `at`: a string, a container (brackets
    /// matched, strings skipped, nothing else checked), or a bare word up to what must
    /// follow it.
    pub fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
        match *bytes.get(at)? {
            b'"' => string_end(bytes, at),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut i = at;
                loop {
                    match *bytes.get(i)? {
                        b'"' => {
                            i = string_end(bytes, i)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(i + 1);
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => {
                let len = bytes[at..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(bytes.len() - at);
                (len > 0).then_some(at + len)
            }
        }
    }
}

