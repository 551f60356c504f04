//! A head's header fields as tern reads them: by name, each value as bytes.
//!
//! Two kinds of request reach the serving code: those tern's own HTTP/1.1 server read,
//! whose fields stay where they arrived, in the head's bytes ([`HeadFields`]), and those
//! the embeddable router hands over in an `http::HeaderMap`. A request is asked about a
//! handful of fields, so building a map of all of them (a name and a value made for each,
//! each hashed and inserted) cost more than every question asked of it. The client reads
//! its responses' fields the same way, for the same reason.

use std::ops::Range;

use bytes::Bytes;
use http::{HeaderMap, HeaderName};

use super::visible;

/// Header fields, looked up by name (names ignore case).
// A client asks fewer questions than a server: without the server, some go unasked.
#[cfg_attr(not(feature = "http-server"), allow(dead_code))]
pub(crate) trait Fields {
    /// The values of the fields named `name`, in the order they came.
    fn values<'a>(&'a self, name: &'a HeaderName) -> impl Iterator<Item = &'a [u8]> + 'a;

    /// A field name that comes more than once and that `watched` picks (given the name
    /// in lower case), in lower case.
    fn repeated(&self, watched: impl Fn(&str) -> bool) -> Option<String>;

    /// The first value of `name`.
    fn get(&self, name: &HeaderName) -> Option<&[u8]>;

    /// Whether a field named `name` came.
    fn contains(&self, name: &HeaderName) -> bool {
        self.get(name).is_some()
    }

    /// The first value of `name` as text, when it is visible ASCII (spaces and tabs
    /// allowed), as `HeaderValue::to_str` reads it.
    fn text(&self, name: &HeaderName) -> Option<&str> {
        self.get(name).and_then(visible)
    }
}

impl Fields for HeaderMap {
    fn get(&self, name: &HeaderName) -> Option<&[u8]> {
        HeaderMap::get(self, name).map(http::HeaderValue::as_bytes)
    }

    fn values<'a>(&'a self, name: &'a HeaderName) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.get_all(name)
            .into_iter()
            .map(http::HeaderValue::as_bytes)
    }

    fn repeated(&self, watched: impl Fn(&str) -> bool) -> Option<String> {
        if self.len() == self.keys_len() {
            // No name repeats at all (the usual request).
            return None;
        }
        self.keys()
            .find(|name| watched(name.as_str()) && self.get_all(*name).iter().nth(1).is_some())
            .map(|name| name.as_str().to_owned())
    }
}

/// The fields of a head (a request's the server read, a response's the client read), as
/// ranges of the head's bytes: nothing is copied or made per field. Names and values
/// were checked by the head's parser (`httparse`), which holds them to what
/// `HeaderName` and `HeaderValue` accept.
#[derive(Debug, Default)]
pub(crate) struct HeadFields {
    head: Bytes,
    /// Each field, in order.
    fields: Vec<Field>,
    /// One bit of 64 set for each field's fingerprint ([`mark`]): a name whose bit is
    /// not set did not come, which settles most lookups of fields a request rarely has
    /// without a scan. (64 bits, not more: a head is moved, and the client's whole
    /// exchange with it must stay small.)
    seen: u64,
}

/// One field of a head: where its name and value are, and its name's [`fingerprint`].
#[derive(Debug)]
pub(crate) struct Field {
    name: Range<usize>,
    value: Range<usize>,
    fingerprint: u32,
}

impl Field {
    /// The field whose name `name` is at `name_at` of the head and whose value is at
    /// `value_at`.
    fn new(name: &[u8], name_at: Range<usize>, value_at: Range<usize>) -> Self {
        Self {
            name: name_at,
            value: value_at,
            fingerprint: fingerprint(name),
        }
    }
}

/// A name's length with its first, middle and last bytes, each with its `0x20` bit set
/// (which lowers a letter's case and leaves a lower one as it is): two names with
/// different fingerprints differ, whatever their case, so a lookup compares a name's
/// bytes only when the fingerprints agree, which among a request's fields is nearly
/// always the name sought. (Two token characters may share a folded byte, `^` and `~`:
/// the bytes compared settle it.)
fn fingerprint(name: &[u8]) -> u32 {
    let fold = |byte: Option<&u8>| byte.map_or(0, |b| b | 0x20);
    let len = name.len();
    // A longer name keeps only its low bits of length; the bytes compared settle it.
    u32::from_le_bytes([
        len.to_le_bytes()[0],
        fold(name.first()),
        fold(name.get(len / 2)),
        fold(name.last()),
    ])
}

/// A fingerprint's one bit among 64: its bits mixed (Fibonacci hashing), the top six
/// kept.
fn mark(fingerprint: u32) -> u64 {
    1 << (fingerprint.wrapping_mul(0x9e37_79b9) >> 26)
}

/// Whether two of `fields` may share a name: a [`mark`] set twice says "maybe". Fields
/// with one name share a fingerprint, so "no" is certain; the usual request's seven or
/// eight fields say "maybe" about one time in three, and then their fingerprints are
/// compared pair by pair.
fn may_repeat(fields: &[Field]) -> bool {
    let mut seen = 0u64;
    fields.iter().any(|field| {
        let mark = mark(field.fingerprint);
        let again = seen & mark != 0;
        seen |= mark;
        again
    })
}

impl HeadFields {
    /// The fields of `head`.
    pub(crate) fn new(head: Bytes, fields: Vec<Field>) -> Self {
        let seen = fields
            .iter()
            .fold(0, |seen, field| seen | mark(field.fingerprint));
        Self { head, fields, seen }
    }

    /// The fields that may be named by the name whose fingerprint is `print`: none when
    /// its bit is not set, else all of them, to be compared.
    fn candidates(&self, print: u32) -> &[Field] {
        if self.seen & mark(print) == 0 {
            return &[];
        }
        &self.fields
    }

    /// Where each of `parsed` (fields `httparse` read from `head`) lies in `head`, in
    /// `room` (emptied first; a connection hands back the last head's): nothing copied
    /// per field. `httparse` held names to the token characters and values to visible
    /// bytes, spaces and tabs (and obs-text): what `HeaderName` and `HeaderValue` accept.
    pub(crate) fn locate(
        head: &[u8],
        parsed: &[httparse::Header<'_>],
        mut room: Vec<Field>,
    ) -> Vec<Field> {
        let start = head.as_ptr() as usize;
        let at = |part: &[u8]| {
            let from = part.as_ptr() as usize - start;
            from..from + part.len()
        };
        room.clear();
        room.extend(parsed.iter().map(|field| {
            let name = field.name.as_bytes();
            Field::new(name, at(name), at(field.value))
        }));
        room
    }

    /// The room the fields took, emptied, for the next head read on the connection.
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    pub(crate) fn into_room(self) -> Vec<Field> {
        let mut room = self.fields;
        room.clear();
        room
    }

    /// Whether `field` is named `wanted` (whose fingerprint is `print`), in any case.
    // Always inlined: a lookup is a few comparisons, and where the compiler chose to
    // call it instead, a flow paid 0.35k to 0.7k instructions more (measured in two
    // builds).
    #[inline(always)]
    fn is(&self, field: &Field, wanted: &[u8], print: u32) -> bool {
        field.fingerprint == print
            && self
                .head
                .get(field.name.clone())
                // Most clients send names in lower case, as `wanted` is: one comparison
                // of the bytes, not a folding of each.
                .is_some_and(|n| n == wanted || n.eq_ignore_ascii_case(wanted))
    }

    /// The values of the fields named `wanted` (in lower case, as `HeaderName`s are).
    fn named<'a>(&'a self, wanted: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        let print = fingerprint(wanted);
        self.candidates(print)
            .iter()
            .filter(move |field| self.is(field, wanted, print))
            .filter_map(|field| self.head.get(field.value.clone()))
    }
}

impl Fields for HeadFields {
    fn get(&self, name: &HeaderName) -> Option<&[u8]> {
        let wanted = name.as_str().as_bytes();
        let print = fingerprint(wanted);
        let field = self
            .candidates(print)
            .iter()
            .find(|f| self.is(f, wanted, print))?;
        self.head.get(field.value.clone())
    }

    fn values<'a>(&'a self, name: &'a HeaderName) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.named(name.as_str().as_bytes())
    }

    fn repeated(&self, watched: impl Fn(&str) -> bool) -> Option<String> {
        if !may_repeat(&self.fields) {
            return None;
        }
        self.fields.iter().enumerate().find_map(|(i, first)| {
            // A name that does not come again costs a comparison of fingerprints per
            // later field.
            let later = self.fields.get(i + 1..)?;
            if !later
                .iter()
                .any(|other| other.fingerprint == first.fingerprint)
            {
                return None;
            }
            let spelled = self.head.get(first.name.clone())?;
            let again = later
                .iter()
                .any(|other| self.is(other, spelled, first.fingerprint));
            // Only a name that does come again is spelled out (in lower case) to ask.
            let lower = again.then(|| String::from_utf8_lossy(spelled).to_ascii_lowercase())?;
            watched(&lower).then_some(lower)
        })
    }
}

#[cfg(test)]
#[cfg(feature = "http-server")]
mod tests {
    use super::*;

    fn head(text: &str) -> HeadFields {
        let mut fields = Vec::new();
        let mut at = 0;
        for line in text.split_inclusive("\r\n") {
            let (name, value) = line.trim_end().split_once(": ").expect("a field");
            let value_at = at + name.len() + 2;
            fields.push(Field::new(
                name.as_bytes(),
                at..at + name.len(),
                value_at..value_at + value.len(),
            ));
            at += line.len();
        }
        HeadFields::new(Bytes::copy_from_slice(text.as_bytes()), fields)
    }

    fn map(text: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        for line in text.split("\r\n").filter(|l| !l.is_empty()) {
            let (name, value) = line.split_once(": ").expect("a field");
            map.append(
                HeaderName::from_bytes(name.as_bytes()).expect("a name"),
                value.parse().expect("a value"),
            );
        }
        map
    }

    #[test]
    fn both_kinds_answer_alike() {
        let text = "Host: a\r\nMcp-Name: t\r\nX-Two: 1\r\nx-two: 2\r\nAccept: caf\u{e9}\r\n";
        let (head, map) = (head(text), map(text));
        let x_two = HeaderName::from_static("x-two");
        let mcp_name = HeaderName::from_static("mcp-name");
        let accept = http::header::ACCEPT;
        let missing = HeaderName::from_static("x-missing");
        for fields in [&head as &dyn Probe, &map] {
            assert_eq!(fields.all(&x_two), vec![b"1".to_vec(), b"2".to_vec()]);
            assert_eq!(fields.first_text(&mcp_name), Some("t".to_owned()));
            assert_eq!(fields.first_text(&accept), None, "not visible ASCII");
            assert_eq!(fields.first_text(&missing), None);
            assert_eq!(fields.twice(), Some("x-two".to_owned()));
        }
        assert_eq!(head.fields.len(), 5);
    }

    #[test]
    fn names_alike_in_length_and_ends_are_told_apart() {
        // Same length, first, middle and last bytes: one fingerprint.
        let fields = head("X-aAb: 1\r\nx-aZb: 2\r\n");
        assert_eq!(fingerprint(b"x-aab"), fingerprint(b"X-aZB"));
        assert_eq!(
            fields.get(&HeaderName::from_static("x-azb")),
            Some(&b"2"[..])
        );
        assert_eq!(
            fields.get(&HeaderName::from_static("x-aab")),
            Some(&b"1"[..])
        );
        assert_eq!(fields.repeated(|_| true), None);
        // `^` and `~` fold to one byte.
        let fields = head("x-^: 1\r\nX-~: 2\r\n");
        assert_eq!(fingerprint(b"x-^"), fingerprint(b"x-~"));
        for (name, value) in [("x-^", b"1"), ("x-~", b"2")] {
            assert_eq!(fields.get(&HeaderName::from_static(name)), Some(&value[..]));
        }
        assert_eq!(fields.repeated(|_| true), None);
        let long = "x-".repeat(200);
        let fields = head(&format!("{long}a: 1\r\n{long}A: 2\r\n"));
        assert_eq!(fields.repeated(|_| true), Some(format!("{long}a")));
    }

    #[test]
    fn a_request_without_repeats_has_none() {
        let text = "Host: a\r\nMcp-Name: t\r\n";
        assert_eq!(head(text).repeated(|_| true), None);
        assert_eq!(map(text).repeated(|_| true), None);
        assert_eq!(head("A: 1\r\na: 2\r\n").repeated(|n| n == "b"), None);
        assert_eq!(
            head("A: 1\r\na: 2\r\n").repeated(|n| n == "a"),
            Some("a".to_owned())
        );
    }

    #[test]
    fn a_repeat_is_found_among_any_fields_and_none_claimed_without_one() {
        let names: Vec<String> = (0..40).map(|i| format!("x-field-{i}")).collect();
        for count in 1..names.len() {
            let distinct: String = names[..count]
                .iter()
                .map(|name| format!("{name}: v\r\n"))
                .collect();
            assert_eq!(head(&distinct).repeated(|_| true), None, "{count} fields");
            for (again, name) in names[..count].iter().enumerate() {
                let text = format!("{distinct}{}: w\r\n", name.to_uppercase());
                assert_eq!(
                    head(&text).repeated(|_| true),
                    map(&text).repeated(|_| true),
                    "{count} fields, the repeat of field {again}"
                );
                assert_eq!(head(&text).repeated(|_| true), Some(name.clone()));
            }
        }
    }

    #[test]
    fn a_name_that_did_not_come_is_not_found_whatever_bit_it_shares() {
        // 12 fields of 300 names: most absent names have a bit no field set, some share
        // one with a field that came; each is answered as the map answers it.
        let names: Vec<String> = (0..300).map(|i| format!("x-name-{i}")).collect();
        let text: String = names
            .iter()
            .step_by(25)
            .map(|name| format!("{}: {name}\r\n", name.to_uppercase()))
            .collect();
        let (head, map) = (head(&text), map(&text));
        for name in &names {
            let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(head.get(&name), Fields::get(&map, &name), "{name}");
            assert_eq!(head.all(&name), map.all(&name), "{name}");
        }
    }

    /// The trait's questions through one object, to ask both kinds the same.
    trait Probe {
        fn all(&self, name: &HeaderName) -> Vec<Vec<u8>>;
        fn first_text(&self, name: &HeaderName) -> Option<String>;
        fn twice(&self) -> Option<String>;
    }

    impl<F: Fields> Probe for F {
        fn all(&self, name: &HeaderName) -> Vec<Vec<u8>> {
            self.values(name).map(<[u8]>::to_vec).collect()
        }
        fn first_text(&self, name: &HeaderName) -> Option<String> {
            self.text(name).map(str::to_owned)
        }
        fn twice(&self) -> Option<String> {
            self.repeated(|_| true)
        }
    }
}
