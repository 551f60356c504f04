//! Which era each endpoint was found to speak, kept by the transports that share one
//! cache, so that later clients of the same server skip the probe.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::Uri;

use crate::Era;
use crate::util::lock;

/// The protocol era found at each MCP endpoint, by URL, so that
/// [`EraMode::Auto`](crate::client::EraMode::Auto) probes an endpoint once per cache.
///
/// Cheap to clone; clones share the entries. Every [`HttpClientBuilder`] starts with
/// a new cache, which the transports built from it (clones of the builder included)
/// share; hand one cache to several builders with
/// [`HttpClientBuilder::era_cache`] to share it wider.
///
/// [`HttpClientBuilder`]: super::HttpClientBuilder
/// [`HttpClientBuilder::era_cache`]: super::HttpClientBuilder::era_cache
#[derive(Debug, Clone, Default)]
pub struct EraCache {
    eras: Arc<Mutex<HashMap<String, Era>>>,
}

impl EraCache {
    /// Forgets the era found at the endpoint `url`, so the next client of it probes
    /// again (after the server there was replaced by one of another era, say).
    pub fn forget(&self, url: &str) {
        if let Some(k) = key(url) {
            lock(&self.eras).remove(&k);
        }
    }

    pub(super) fn get(&self, endpoint: &Uri) -> Option<Era> {
        lock(&self.eras).get(&endpoint.to_string()).copied()
    }

    pub(super) fn remember(&self, endpoint: &Uri, era: Era) {
        lock(&self.eras).insert(endpoint.to_string(), era);
    }
}

/// The key of `url`: as a transport spells its URI, which may differ from the text it
/// was given (`http://h` is `http://h/`).
fn key(url: &str) -> Option<String> {
    url.parse::<Uri>().ok().map(|uri| uri.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_era_is_found_by_any_spelling_of_its_url_and_forgotten_the_same_way() {
        let cache = EraCache::default();
        let endpoint: Uri = "http://example.test".parse().unwrap();
        cache.remember(&endpoint, Era::Session);
        let spelled: Uri = "http://example.test/".parse().unwrap();
        assert_eq!(cache.get(&spelled), Some(Era::Session));
        assert_eq!(
            cache.clone().get(&endpoint),
            Some(Era::Session),
            "clones share"
        );
        cache.forget("http://example.test");
        assert_eq!(cache.get(&endpoint), None);
    }
}
