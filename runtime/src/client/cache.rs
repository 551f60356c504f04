//! The client's response cache: results the server said may be reused (`ttlMs`,
//! `cacheScope`) served again without a request while fresh.
//!
//! Only the methods the table marks cacheable are kept (the lists, `resources/read`,
//! `server/discover`), only complete first-round answers, only with a positive `ttlMs`
//! (clamped to a day). A `private` answer is kept for the authorization context that
//! received it ([`HttpHooks::cache_identity`]: the bearer token and extra headers,
//! digested) and never served to another; a `public` one is shared by every client of
//! the same server that shares the cache. A list-changed or resource-updated
//! notification the client hears (on a listen stream or a call's stream) drops what it
//! makes stale. The cache is bounded in entries and bytes; the oldest go first.
//!
//! [`HttpHooks::cache_identity`]: crate::transport::HttpHooks::cache_identity

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::Notice;
use crate::jsonrpc::RawResult;
use crate::types::rpc::Request;
use crate::types::v2026_07_28::{CacheScope, method};
use crate::util::lock;

/// The default of [`ResponseCache::new`]'s entry cap.
pub(crate) const DEFAULT_CACHE_ENTRIES: usize = 1024;
/// The default cap on the bytes of results a cache holds: 16 MiB.
pub(crate) const DEFAULT_CACHE_BYTES: usize = 16 * 1024 * 1024;
/// The longest a result is kept, whatever `ttlMs` says.
const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// A bounded cache of the results servers said may be reused. Cheap to clone: clones
/// share the entries, so clients given the same cache
/// ([`ClientBuilder::response_cache`](super::ClientBuilder::response_cache)) share its
/// `public` entries.
#[derive(Clone)]
pub struct ResponseCache {
    inner: Arc<Mutex<Entries>>,
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = lock(&self.inner);
        f.debug_struct("ResponseCache")
            .field("entries", &entries.map.len())
            .field("bytes", &entries.bytes)
            .finish()
    }
}

impl Default for ResponseCache {
    fn default() -> Self {
        Self::new(DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES)
    }
}

struct Entries {
    map: HashMap<Key, Entry>,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
    /// The insertion counter: the lowest is the oldest.
    next: u64,
}

/// What an entry answers: a method's request with these params (`_meta` aside), to
/// this server, in this authorization context (`None`: any, for a `public` answer).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    server: Arc<str>,
    method: &'static str,
    params: String,
    context: Option<[u8; 32]>,
}

struct Entry {
    result: RawResult,
    /// What the request named (the resource a `resources/read` answer is of, for its
    /// updates).
    uri: Option<String>,
    expires: Instant,
    seq: u64,
}

/// Where one client's requests sit in a cache: the server, and the context a `private`
/// answer is kept for.
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    pub(crate) server: Arc<str>,
    pub(crate) context: [u8; 32],
}

impl Partition {
    /// The partition of a client whose transport says nothing of its identity: its own,
    /// shared with no other client.
    pub(crate) fn own() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self {
            server: Arc::from(format!("client#{n}")),
            context: [0; 32],
        }
    }

    /// The partition of a transport's identity.
    pub(crate) fn of(identity: crate::transport::CacheIdentity) -> Self {
        Self {
            server: Arc::from(identity.server),
            context: identity.credential.unwrap_or([0; 32]),
        }
    }
}

/// The caching members of a result, read on their own.
#[derive(Deserialize)]
struct Freshness {
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope")]
    cache_scope: Option<CacheScope>,
    #[serde(rename = "resultType")]
    result_type: Option<String>,
}

impl ResponseCache {
    /// A cache of at most `max_entries` results and `max_bytes` of their text (a result
    /// larger than an eighth of that is not kept).
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Entries {
                map: HashMap::new(),
                bytes: 0,
                max_entries,
                max_bytes,
                next: 0,
            })),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.inner).map.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops everything.
    pub fn clear(&self) {
        let mut entries = lock(&self.inner);
        entries.map.clear();
        entries.bytes = 0;
    }

    /// A fresh answer to `method` with `params`, for `partition`: its own `private`
    /// entry first, then a `public` one.
    pub(crate) fn get(
        &self,
        partition: &Partition,
        method: &'static str,
        params: &str,
    ) -> Option<RawResult> {
        let mut entries = lock(&self.inner);
        let now = Instant::now();
        let mut key = Key {
            server: Arc::clone(&partition.server),
            method,
            params: params.to_owned(),
            context: Some(partition.context),
        };
        for context in [Some(partition.context), None] {
            key.context = context;
            match entries.map.get(&key) {
                Some(entry) if entry.expires > now => return Some(entry.result.clone()),
                Some(_) => entries.remove(&key),
                None => {}
            }
        }
        None
    }

    /// Keeps `result`, the answer to `method` with `params` in `partition`, if it says
    /// it may be reused.
    pub(crate) fn put(
        &self,
        partition: &Partition,
        method: &'static str,
        params: &str,
        uri: Option<&str>,
        result: &RawResult,
    ) {
        let Ok(fresh) = serde_json::from_str::<Freshness>(result.get()) else {
            return;
        };
        let complete = fresh.result_type.as_deref().is_none_or(|t| t == "complete");
        let ttl = match fresh.ttl_ms {
            Some(ms) if ms > 0 && complete => Duration::from_millis(ms).min(MAX_TTL),
            _ => return,
        };
        let context = match fresh.cache_scope {
            Some(CacheScope::Public) => None,
            // Private unless the server said otherwise: the safe reading.
            _ => Some(partition.context),
        };
        let size = result.get().len() + params.len();
        let mut entries = lock(&self.inner);
        if size > entries.max_bytes / 8 || entries.max_entries == 0 {
            return;
        }
        let key = Key {
            server: Arc::clone(&partition.server),
            method,
            params: params.to_owned(),
            context,
        };
        entries.remove(&key);
        entries.make_room(size);
        let seq = entries.next;
        entries.next += 1;
        entries.bytes += size;
        entries.map.insert(
            key,
            Entry {
                result: result.clone(),
                uri: uri.map(str::to_owned),
                expires: Instant::now() + ttl,
                seq,
            },
        );
    }

    /// Drops every answer of the server of `partition`.
    pub(crate) fn forget_server(&self, partition: &Partition) {
        let mut entries = lock(&self.inner);
        let gone: Vec<Key> = entries
            .map
            .keys()
            .filter(|k| k.server == partition.server)
            .cloned()
            .collect();
        for key in &gone {
            entries.remove(key);
        }
    }

    /// Drops the answers `stale` names, of the server of `partition`.
    pub(crate) fn drop_stale(&self, partition: &Partition, stale: &Stale<'_>) {
        let mut entries = lock(&self.inner);
        let gone: Vec<Key> = entries
            .map
            .iter()
            .filter(|(k, e)| {
                k.server == partition.server
                    && stale.methods.contains(&k.method)
                    && stale.uri.is_none_or(|u| e.uri.as_deref() == Some(u))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in &gone {
            entries.remove(key);
        }
    }
}

/// What a notice makes stale: the answers of these methods (of this resource).
pub(crate) struct Stale<'a> {
    methods: &'static [&'static str],
    uri: Option<&'a str>,
}

impl<'a> Stale<'a> {
    /// What `notice` makes stale, if anything.
    pub(crate) fn of(notice: &'a Notice) -> Option<Self> {
        let (methods, uri): (&'static [&'static str], _) = match notice {
            Notice::ToolsChanged => (&[method::ListTools::METHOD], None),
            Notice::PromptsChanged => (&[method::ListPrompts::METHOD], None),
            Notice::ResourcesChanged => (
                &[
                    method::ListResources::METHOD,
                    method::ListResourceTemplates::METHOD,
                ],
                None,
            ),
            Notice::ResourceUpdated(uri) => (&[method::ReadResource::METHOD], Some(uri.as_str())),
            _ => return None,
        };
        Some(Self { methods, uri })
    }
}

impl Entries {
    fn remove(&mut self, key: &Key) {
        if let Some(entry) = self.map.remove(key) {
            self.bytes -= entry.result.get().len() + key.params.len();
        }
    }

    /// Frees room for one more entry of `size` bytes: the expired first, then the
    /// oldest.
    fn make_room(&mut self, size: usize) {
        let full = |e: &Self| e.map.len() >= e.max_entries || e.bytes + size > e.max_bytes;
        if !full(self) {
            return;
        }
        let now = Instant::now();
        let expired: Vec<Key> = self
            .map
            .iter()
            .filter(|(_, e)| e.expires <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in &expired {
            self.remove(key);
        }
        while full(self) {
            let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, e)| e.seq)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            self.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &str = method::ListTools::METHOD;
    const PROMPTS: &str = method::ListPrompts::METHOD;
    const READ: &str = method::ReadResource::METHOD;

    fn raw(text: &str) -> RawResult {
        RawResult::unchecked(text.into())
    }

    fn partition(context: u8) -> Partition {
        Partition {
            server: Arc::from("http://a/mcp"),
            context: [context; 32],
        }
    }

    const LIST: &str = r#"{"tools":[],"ttlMs":60000,"cacheScope":"private"}"#;

    #[test]
    fn a_private_answer_is_served_to_its_context_only_and_a_public_one_to_all() {
        let cache = ResponseCache::default();
        let (alice, bob) = (partition(1), partition(2));
        cache.put(&alice, TOOLS, "{}", None, &raw(LIST));
        assert!(cache.get(&alice, TOOLS, "{}").is_some());
        assert!(cache.get(&bob, TOOLS, "{}").is_none());
        let public = LIST.replace("private", "public");
        cache.put(&alice, PROMPTS, "{}", None, &raw(&public));
        assert!(cache.get(&bob, PROMPTS, "{}").is_some());
    }

    #[test]
    fn answers_without_a_positive_ttl_or_not_complete_are_not_kept() {
        let cache = ResponseCache::default();
        let p = partition(1);
        for text in [
            r#"{"tools":[]}"#,
            r#"{"tools":[],"ttlMs":0,"cacheScope":"public"}"#,
            r#"{"resultType":"input_required","ttlMs":5000}"#,
            "not json",
        ] {
            cache.put(&p, TOOLS, "{}", None, &raw(text));
        }
        assert!(cache.is_empty());
    }

    #[test]
    fn the_oldest_go_first_at_the_caps_and_a_huge_answer_is_never_kept() {
        let cache = ResponseCache::new(2, 8 * 1024);
        let p = partition(1);
        for cursor in ["1", "2", "3"] {
            cache.put(&p, TOOLS, cursor, None, &raw(LIST));
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&p, TOOLS, "1").is_none());
        assert!(cache.get(&p, TOOLS, "3").is_some());
        let huge = format!(
            r#"{{"tools":[],"ttlMs":1000,"pad":"{}"}}"#,
            "x".repeat(2048)
        );
        cache.put(&p, TOOLS, "4", None, &raw(&huge));
        assert!(cache.get(&p, TOOLS, "4").is_none());
    }

    #[test]
    fn a_notice_drops_only_what_it_makes_stale() {
        let cache = ResponseCache::default();
        let p = partition(1);
        let read = r#"{"contents":[],"ttlMs":60000}"#;
        cache.put(&p, TOOLS, "{}", None, &raw(LIST));
        cache.put(&p, READ, "a", Some("file:///a"), &raw(read));
        cache.put(&p, READ, "b", Some("file:///b"), &raw(read));
        let updated = Notice::ResourceUpdated("file:///a".into());
        cache.drop_stale(&p, &Stale::of(&updated).unwrap());
        assert!(cache.get(&p, READ, "a").is_none());
        assert!(cache.get(&p, READ, "b").is_some());
        cache.drop_stale(&p, &Stale::of(&Notice::ToolsChanged).unwrap());
        assert!(Stale::of(&Notice::Relistened).is_none());
        assert!(cache.get(&p, TOOLS, "{}").is_none());
        assert_eq!(cache.len(), 1);
    }
}
