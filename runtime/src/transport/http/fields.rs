//! A request's header fields as a server reads them: by name, each value as bytes.
//!
//! Two kinds of request reach the serving code: those tern's own HTTP/1.1 server read,
//! whose fields stay where they arrived, in the head's bytes ([`HeadFields`]), and those
//! the embeddable router hands over in an `http::HeaderMap`. A request is asked about a
//! handful of fields, so building a map of all of them (a name and a value made for each,
//! each hashed and inserted) cost more than every question asked of it.

#[cfg(feature = "http-server")]
use std::ops::Range;

#[cfg(feature = "http-server")]
use bytes::Bytes;
use http::{HeaderMap, HeaderName};

use super::visible;

/// Header fields, looked up by name (names ignore case).
// A client reads only a response's framing through it; the rest is the server's.
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

/// The fields of a request head, as ranges of the head's bytes: nothing is copied or
/// made per field. Names and values were checked by the head's parser (`httparse`),
/// which holds them to what `HeaderName` and `HeaderValue` accept.
#[cfg(feature = "http-server")]
#[derive(Debug, Default)]
pub(crate) struct HeadFields {
    head: Bytes,
    /// Each field's name and value, in order.
    fields: Vec<(Range<usize>, Range<usize>)>,
}

#[cfg(feature = "http-server")]
impl HeadFields {
    /// The fields whose names and values are at these ranges of `head`.
    pub(crate) fn new(head: Bytes, fields: Vec<(Range<usize>, Range<usize>)>) -> Self {
        Self { head, fields }
    }

    /// Whether the field name at `name` is `wanted`, in any case.
    fn is(&self, name: &Range<usize>, wanted: &[u8]) -> bool {
        // Most names are told apart by their length, before a byte is read.
        name.len() == wanted.len()
            && self
                .head
                .get(name.clone())
                .is_some_and(|n| n.eq_ignore_ascii_case(wanted))
    }

    /// The values of the fields named `wanted` (in lower case, as `HeaderName`s are).
    fn named<'a>(&'a self, wanted: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields
            .iter()
            .filter(move |(name, _)| self.is(name, wanted))
            .filter_map(|(_, value)| self.head.get(value.clone()))
    }
}

#[cfg(feature = "http-server")]
impl Fields for HeadFields {
    fn get(&self, name: &HeaderName) -> Option<&[u8]> {
        let wanted = name.as_str().as_bytes();
        let (_, value) = self.fields.iter().find(|(name, _)| self.is(name, wanted))?;
        self.head.get(value.clone())
    }

    fn values<'a>(&'a self, name: &'a HeaderName) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.named(name.as_str().as_bytes())
    }

    fn repeated(&self, watched: impl Fn(&str) -> bool) -> Option<String> {
        self.fields.iter().enumerate().find_map(|(i, (first, _))| {
            let spelled = self.head.get(first.clone())?;
            // Names are told apart by their length first: a name that does not come
            // again costs a comparison of lengths per later field.
            let again = self.fields[i + 1..]
                .iter()
                .any(|(other, _)| self.is(other, spelled));
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
            fields.push((at..at + name.len(), value_at..value_at + value.len()));
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
