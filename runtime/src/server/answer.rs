//! A complete result on its way out: written once from the handler's typed value, then
//! given the members the protocol adds (`resultType`, and for cacheable methods `ttlMs`
//! and `cacheScope`) when the handler set none, by splicing them into that text.

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
    let [result_type, ttl, scope] = members(&result, ["resultType", "ttlMs", "cacheScope"]);
    let mut added: [Option<&str>; 3] = [None; 3];
    if result_type.is_none() {
        added[0] = Some(RESULT_TYPE_COMPLETE);
    }
    if let Some(cache) = cache {
        added[1] = ttl.is_none().then_some(cache.ttl.as_str());
        added[2] = scope.is_none().then_some(cache.scope.as_str());
    }
    if added.iter().all(Option::is_none) {
        return result;
    }
    let spliced = prepend_members(&result, added.into_iter().flatten());
    spliced.unwrap_or(result)
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
        }
    }

    #[test]
    fn text_that_is_not_an_object_is_left_alone() {
        assert_eq!(complete("[1]".to_owned(), None), "[1]");
        assert_eq!(complete("null".to_owned(), None), "null");
    }
}
