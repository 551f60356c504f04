//! The `_meta` texts a server has read lately, each kept with what was read from it.
//!
//! A 2026-07-28 client sends its capabilities and its client info in every request's
//! `_meta`, the same bytes each time, and reading them into their types (objects of
//! objects, maps, strings) was the largest part of reading a tools/call. So the params
//! are read without their `_meta` member, and the `_meta` text is looked up here: a
//! text seen before, byte for byte and from the same authenticated caller, is not read
//! again. What a `_meta` says depends on its text alone, so a text that matches reads
//! the same; any doubt (no `_meta`, one that is not an object or not accepted, a repeated
//! member, text that is not what it should be) reads the request the general way.
//!
//! Bounded: a few texts, each a few KiB at most, the oldest replaced first; a text with
//! a progress token or a trace context (the request's own) is not kept. A caller
//! sending a new `_meta` on each request only ever misses, and pays one scan of its params
//! for it; one caller cannot tell, by timing, what another one sent, since a text is only
//! found for the caller that sent it.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::auth::AuthInfo;
use crate::protocol::{META, MetaRead};
use crate::types::rpc::scan::{blank, string_end, value_end};
use crate::types::v2026_07_28::RequestMetaObject;
use crate::util::{Recent, lock};

/// How many `_meta` texts are kept: a server's clients at once, roughly.
const KEPT: usize = 16;

/// The longest `_meta` text kept. A client's own is a few hundred bytes.
const LONGEST: usize = 4 * 1024;

/// The `_meta` texts a server read lately. Shared by every request the server serves.
#[derive(Default)]
pub(crate) struct KnownMetas {
    kept: Mutex<Recent<Arc<Known>, KEPT>>,
}

/// One `_meta` text and what was read from it.
pub(crate) struct Known {
    text: Box<str>,
    /// Who sent it: a text is found only for the same caller.
    auth: Option<AuthInfo>,
    /// The reading: the request's version, its client's capabilities and info.
    read: MetaRead,
    /// What the params keep of their `_meta` once the reading has taken its parts
    /// ([`MetaRead::take`]), boxed as the params hold it: usually nothing.
    left: Option<Box<RequestMetaObject>>,
}

impl Known {
    /// The reading, for the request that sent this text.
    pub(crate) fn read(&self) -> MetaRead {
        self.read.clone()
    }

    /// What the request's params keep as their `_meta`.
    pub(crate) fn left(&self) -> Option<Box<RequestMetaObject>> {
        self.left.clone()
    }
}

impl std::fmt::Debug for KnownMetas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownMetas").finish_non_exhaustive()
    }
}

/// A request's params with their `_meta` member taken out, and what that `_meta` says.
pub(crate) struct Split {
    /// The params text without the `_meta` member.
    pub(crate) rest: String,
    /// The `_meta` as read, from this server's memory or read now.
    pub(crate) meta: Arc<Known>,
}

impl KnownMetas {
    /// `params` split into their `_meta` (known, or read now and remembered) and the
    /// rest; `None` when the request is better read whole (see the module's doc).
    pub(crate) fn split(
        &self,
        params: &str,
        auth: Option<&AuthInfo>,
        supported: &[&str],
    ) -> Option<Split> {
        let bytes = params.as_bytes();
        let at = find(bytes)?;
        let meta = match self.known(&bytes[at.value..], auth) {
            Some(known) => known,
            None => {
                let end = value_end(bytes, at.value)?;
                let text = params.get(at.value..end)?;
                self.learn(text, auth, supported)?
            }
        };
        let end = at.value + meta.text.len();
        Some(Split {
            rest: without(params, &at, end)?,
            meta,
        })
    }

    /// The entry whose text opens `rest`, sent by `auth`.
    fn known(&self, rest: &[u8], auth: Option<&AuthInfo>) -> Option<Arc<Known>> {
        lock(&self.kept)
            .iter()
            .find(|k| rest.starts_with(k.text.as_bytes()) && k.auth.as_ref() == auth)
            .cloned()
    }

    /// Reads `text` as a `_meta` on its own, and remembers it when it serves a request.
    fn learn(&self, text: &str, auth: Option<&AuthInfo>, supported: &[&str]) -> Option<Arc<Known>> {
        if !text.starts_with('{') {
            return None;
        }
        let mut left = Some(serde_json::from_str(text).ok()?);
        let read = MetaRead::take(Some(&mut left), supported);
        read.meta.as_ref().ok()?;
        let known = Arc::new(Known {
            text: text.into(),
            auth: auth.cloned(),
            read,
            left,
        });
        // A progress token or a trace context is the request's own: a text carrying one
        // is not seen again, and would only push out those that are.
        let per_request = known.read.progress_token.is_some() || known.read.trace.is_some();
        if text.len() <= LONGEST && !per_request {
            lock(&self.kept).push(known.clone());
        }
        Some(known)
    }
}

/// Where a params object's `_meta` member is.
struct MetaAt {
    /// Where its name starts.
    name: usize,
    /// Where its value starts.
    value: usize,
    /// Where the value of the member before it ends, when it is not the first.
    previous: Option<usize>,
}

/// The first `_meta` member of the params object `bytes`, its name written plainly;
/// `None` when there is none or the text is not an object's.
fn find(bytes: &[u8]) -> Option<MetaAt> {
    let mut at = blank(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = blank(bytes, at + 1);
    let mut previous = None;
    loop {
        let name_end = string_end(bytes, at)?;
        let colon = blank(bytes, name_end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        let value = blank(bytes, colon + 1);
        if bytes.get(at + 1..name_end - 1) == Some(META.as_bytes()) {
            return Some(MetaAt {
                name: at,
                value,
                previous,
            });
        }
        let end = value_end(bytes, value)?;
        previous = Some(end);
        at = blank(bytes, end);
        if bytes.get(at) != Some(&b',') {
            return None;
        }
        at = blank(bytes, at + 1);
    }
}

/// `params` without the `_meta` member found `at`, whose value ends at `end`.
fn without(params: &str, at: &MetaAt, end: usize) -> Option<String> {
    let cut: Range<usize> = match at.previous {
        // `, "_meta": {..}` goes, from the end of the member before.
        Some(previous) => previous..end,
        // The first member: `"_meta": {..} ,` goes, up to the next member or the `}`.
        None => {
            let after = blank(params.as_bytes(), end);
            let after = match params.as_bytes().get(after)? {
                b',' => blank(params.as_bytes(), after + 1),
                b'}' => after,
                _ => return None,
            };
            at.name..after
        }
    };
    let mut rest = String::with_capacity(params.len() - cut.len());
    rest.push_str(params.get(..cut.start)?);
    rest.push_str(params.get(cut.end..)?);
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SUPPORTED_VERSIONS;

    const META_TEXT: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}"#;

    fn params(before: &str, after: &str) -> String {
        format!("{{{before}\"_meta\" : {META_TEXT}{after}}}")
    }

    fn split(metas: &KnownMetas, text: &str) -> Option<String> {
        metas.split(text, None, SUPPORTED_VERSIONS).map(|s| s.rest)
    }

    #[test]
    fn the_meta_member_is_cut_out_wherever_it_stands() {
        let metas = KnownMetas::default();
        for (text, rest) in [
            (params(r#""name":"t", "#, ""), r#"{"name":"t"}"#),
            (params("", r#" , "name":"t""#), r#"{"name":"t"}"#),
            (
                params(r#""a":[1,{"_meta":2}],"#, r#","b":"}""#),
                r#"{"a":[1,{"_meta":2}],"b":"}"}"#,
            ),
            (params("", ""), "{}"),
        ] {
            assert_eq!(split(&metas, &text).as_deref(), Some(rest), "{text}");
        }
    }

    #[test]
    fn a_text_seen_before_is_found_without_being_read_again() {
        let metas = KnownMetas::default();
        let first = metas
            .split(&params("", ""), None, SUPPORTED_VERSIONS)
            .expect("read");
        let again = metas
            .split(&params(r#""x":1,"#, ""), None, SUPPORTED_VERSIONS)
            .expect("found");
        assert!(Arc::ptr_eq(&first.meta, &again.meta));
        let read = again.meta.read();
        assert_eq!(read.version.as_deref(), Some("2026-07-28"));
        let meta = read.meta.expect("accepted");
        assert_eq!(meta.client_info.expect("info").name, "c");
    }

    #[test]
    fn the_params_keep_what_reading_the_meta_whole_leaves() {
        let metas = KnownMetas::default();
        for meta in [
            META_TEXT.to_owned(),
            format!(
                r#"{},"io.modelcontextprotocol/logLevel":"debug","x.y/z":[1]}}"#,
                &META_TEXT[..META_TEXT.len() - 1]
            ),
        ] {
            let mut whole = Some(serde_json::from_str(&meta).expect("a _meta"));
            let _ = MetaRead::take(Some(&mut whole), SUPPORTED_VERSIONS);
            let text = format!(r#"{{"_meta":{meta},"name":"t"}}"#);
            let split = metas.split(&text, None, SUPPORTED_VERSIONS).expect("split");
            assert_eq!(split.meta.left(), whole, "{meta}");
        }
    }

    #[test]
    fn a_text_is_found_only_for_the_caller_that_sent_it() {
        let metas = KnownMetas::default();
        let alice = AuthInfo::new("alice");
        let text = params("", "");
        let first = metas
            .split(&text, Some(&alice), SUPPORTED_VERSIONS)
            .expect("read");
        let other = metas.split(&text, None, SUPPORTED_VERSIONS).expect("read");
        assert!(!Arc::ptr_eq(&first.meta, &other.meta));
        let again = metas
            .split(&text, Some(&alice), SUPPORTED_VERSIONS)
            .expect("found");
        assert!(Arc::ptr_eq(&first.meta, &again.meta));
    }

    #[test]
    fn any_doubt_reads_the_request_whole() {
        let metas = KnownMetas::default();
        for text in [
            r#"{"name":"t"}"#.to_owned(),
            r#"{"_meta":[]}"#.to_owned(),
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}"#.to_owned(),
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#.to_owned(),
            r#"{"\u005fmeta":{}}"#.to_owned(),
            params("", " x"),
            params(r#""a" 1,"#, ""),
            "[]".to_owned(),
            String::new(),
        ] {
            assert!(split(&metas, &text).is_none(), "{text}");
        }
    }

    #[test]
    fn the_memory_holds_a_bounded_number_of_short_texts() {
        let metas = KnownMetas::default();
        for n in 0..3 * KEPT {
            let text = params("", "").replace(r#""c""#, &format!(r#""c{n}""#));
            split(&metas, &text).expect("read");
        }
        let long = params("", "").replace(r#""c""#, &format!(r#""{}""#, "c".repeat(LONGEST)));
        let first = metas.split(&long, None, SUPPORTED_VERSIONS).expect("read");
        let again = metas.split(&long, None, SUPPORTED_VERSIONS).expect("read");
        assert!(
            !Arc::ptr_eq(&first.meta, &again.meta),
            "a long text is not kept"
        );
        assert_eq!(lock(&metas.kept).len(), KEPT);
    }
}
