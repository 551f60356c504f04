//! A complete result on its way out: written once from the handler's typed value, then
//! given the members the protocol adds (`resultType`, and for cacheable methods `ttlMs`
//! and `cacheScope`) when the handler set none, by splicing them into that text. A
//! fixed result that many read (a static resource's contents) is written once and
//! shared: each answer writes only its own opening in front of it.

use std::sync::Arc;

use serde_json::Value;

use crate::types::rpc::{members, prepend_members};

/// The `resultType` member of a complete result, as written.
const RESULT_TYPE_COMPLETE: &str = r#""resultType":"complete""#;

/// The caching members a cacheable result gets when its handler set none, written once
/// when the server is built.
#[derive(Debug, Clone)]
pub(super) struct CacheMembers {
    ttl: String,
    scope: String,
}

impl CacheMembers {
    pub(super) fn new(ttl_ms: u64, scope: &str) -> Self {
        Self {
            ttl: format!(r#""ttlMs":{ttl_ms}"#),
            scope: format!(r#""cacheScope":{}"#, Value::from(scope)),
        }
    }
}

/// `result` (a JSON object's text) with `resultType` and, when `cache` is given, the
/// caching members, each added in front when the result lacks it. Text that is not an
/// object is left as it is.
pub(super) fn complete(result: String, cache: Option<&CacheMembers>) -> String {
    let lacks = members(&result, PROTOCOL_MEMBERS).map(|member| member.is_none());
    let added = added(lacks, cache);
    if added.iter().all(Option::is_none) {
        return result;
    }
    let spliced = prepend_members(&result, added.into_iter().flatten());
    spliced.unwrap_or(result)
}

/// The members the protocol adds to a complete result: `resultType`, then the caching
/// members.
const PROTOCOL_MEMBERS: [&str; 3] = ["resultType", "ttlMs", "cacheScope"];

/// The members to add to a result that `lacks` each of [`PROTOCOL_MEMBERS`] or not:
/// `resultType` always, the caching members when `cache` is given.
fn added(lacks: [bool; 3], cache: Option<&CacheMembers>) -> [Option<&str>; 3] {
    let [no_type, no_ttl, no_scope] = lacks;
    [
        no_type.then_some(RESULT_TYPE_COMPLETE),
        cache.filter(|_| no_ttl).map(|c| c.ttl.as_str()),
        cache.filter(|_| no_scope).map(|c| c.scope.as_str()),
    ]
}

/// A complete result written once as JSON text and shared by every answer that carries
/// it: readers slow to take a large one hold one copy between them, not one each.
#[derive(Debug)]
pub(crate) struct SharedResult {
    /// The result object's text.
    text: String,
    /// Which of `resultType`, `ttlMs` and `cacheScope` it lacks, found once.
    lacks: [bool; 3],
}

impl SharedResult {
    /// `text`, a JSON object's text, to be shared; `None` when it is not an object.
    pub(crate) fn new(text: String) -> Option<Arc<Self>> {
        if !text.starts_with('{') {
            return None;
        }
        let lacks = members(&text, PROTOCOL_MEMBERS).map(|member| member.is_none());
        Some(Arc::new(Self { lacks, text }))
    }

    /// The result's text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Its text after the object's opening brace: what an answer writes after its own.
    pub(crate) fn members(&self) -> &str {
        &self.text[1..]
    }
}

/// A complete result's JSON text as it goes out: written for one request, or an
/// opening written for this answer in front of a [`SharedResult`]'s members.
#[derive(Debug)]
pub(crate) struct ResultText {
    /// The text, or with `shared` its opening: `{` and the members this answer adds.
    head: String,
    /// The shared result, whose text after its own `{` follows `head`.
    shared: Option<Arc<SharedResult>>,
}

impl ResultText {
    /// The text in the two pieces that go out one after the other.
    #[cfg(any(test, feature = "http-server"))]
    pub(crate) fn pieces(&self) -> [&str; 2] {
        match &self.shared {
            None => [&self.head, ""],
            Some(shared) => [&self.head, shared.members()],
        }
    }

    /// The text as it was given: this answer's own, and the result it shares, if any.
    #[cfg(feature = "http-server")]
    pub(crate) fn into_parts(self) -> (String, Option<Arc<SharedResult>>) {
        (self.head, self.shared)
    }

    /// The text as one string: copied from the shared result when there is one.
    pub(crate) fn into_string(self) -> String {
        match self.shared {
            None => self.head,
            Some(shared) => {
                let mut text = self.head;
                text.push_str(shared.members());
                text
            }
        }
    }
}

impl From<String> for ResultText {
    fn from(head: String) -> Self {
        Self { head, shared: None }
    }
}

/// `shared` as [`complete`] would write its text, the members added written in front of
/// it for this answer alone.
pub(super) fn complete_shared(
    shared: Arc<SharedResult>,
    cache: Option<&CacheMembers>,
) -> ResultText {
    let mut head = String::from("{");
    for member in added(shared.lacks, cache).into_iter().flatten() {
        head.push_str(member);
        head.push(',');
    }
    if shared.members().trim_start().starts_with('}') && head.len() > 1 {
        // An empty object: no member follows the last one added.
        head.pop();
    }
    ResultText {
        head,
        shared: Some(shared),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).expect("JSON")
    }

    #[test]
    fn a_result_gets_the_members_it_lacks_and_keeps_those_it_has() {
        let cache = CacheMembers::new(5000, "public");
        let cases = [
            (
                r#"{"content":[]}"#,
                None,
                r#"{"resultType":"complete","content":[]}"#,
            ),
            ("{}", None, r#"{"resultType":"complete"}"#),
            (
                r#"{"tools":[]}"#,
                Some(&cache),
                r#"{"resultType":"complete","ttlMs":5000,"cacheScope":"public","tools":[]}"#,
            ),
            (
                r#"{"ttlMs":1,"x":{"resultType":"nested"}}"#,
                Some(&cache),
                r#"{"resultType":"complete","cacheScope":"public","ttlMs":1,"x":{"resultType":"nested"}}"#,
            ),
            (
                r#"{"resultType":"complete"}"#,
                None,
                r#"{"resultType":"complete"}"#,
            ),
        ];
        for (result, cache, expected) in cases {
            let spliced = complete(result.to_owned(), cache);
            assert_eq!(spliced, expected);
            assert!(parsed(&spliced).is_object());
            // Shared, the same text goes out: the opening written, the rest as it was.
            let shared = SharedResult::new(result.to_owned()).expect("an object");
            let text = complete_shared(Arc::clone(&shared), cache);
            assert_eq!(text.pieces().concat(), expected);
            assert_eq!(
                text.pieces()[1],
                &result[1..],
                "the shared text is not copied"
            );
            assert_eq!(text.into_string(), expected);
        }
    }

    #[test]
    fn text_that_is_not_an_object_is_left_alone() {
        assert_eq!(complete("[1]".to_owned(), None), "[1]");
        assert_eq!(complete("null".to_owned(), None), "null");
    }
}
