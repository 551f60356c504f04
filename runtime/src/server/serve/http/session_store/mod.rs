//! 2025-11-25 sessions kept where every instance of a fleet reads them: the
//! [`SessionStore`] trait and, with the `redis` feature, [`RedisSessionStore`].
//!
//! Without a store, a session lives in the instance that opened it (the default: the
//! bounded in-memory sessions of one process). With one, `initialize` also writes the
//! session's record there: what the client said in `initialize`, its owner (a digest of
//! the caller's principal), its log level and its resource subscriptions. An instance
//! that meets a session it did not open reads the record and serves it; each use reads
//! it again (so a level set or a subscription made through another instance holds
//! here, and a session ended anywhere is gone everywhere) and keeps it alive for the
//! idle timeout; a change writes it back; DELETE removes it.

#[cfg(feature = "redis")]
mod redis;

#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::RedisSessionStore;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::LoggingLevel;

/// The name a session store's failures carry.
pub(crate) const STORE: &str = "session store";

/// Where the records of 2025-11-25 sessions are kept, so that any instance serves any
/// session. A record is opaque text to the store (JSON, at most the session's
/// `initialize` budget and its subscriptions); implementations bound nothing else, and
/// expire a record `ttl` after it was last read or written.
pub trait SessionStore: Send + Sync + 'static {
    /// Keeps `record` as session `id`'s, for `ttl` from now.
    fn put(&self, id: &str, record: String, ttl: Duration)
    -> BoxFuture<'_, Result<(), StoreError>>;
    /// Session `id`'s record, if it is kept, now kept for `ttl` from now.
    fn get(&self, id: &str, ttl: Duration) -> BoxFuture<'_, Result<Option<String>, StoreError>>;
    /// Forgets session `id` (it ended).
    fn remove(&self, id: &str) -> BoxFuture<'_, Result<(), StoreError>>;
}

/// What any instance needs to serve a session it did not open.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Record {
    /// The `initialize` request's params, as the client sent them.
    pub(crate) initialize: Value,
    /// The digest of the principal that opened it
    /// ([`Principal::owner_key`](crate::seal::Principal)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    /// The level the client chose with `logging/setLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) log_level: Option<LoggingLevel>,
    /// The resources it subscribed to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) subscriptions: Vec<String>,
}

impl Record {
    pub(crate) fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub(crate) fn from_text(text: &str) -> Result<Self, StoreError> {
        serde_json::from_str(text)
            .map_err(|e| StoreError::new(STORE, format!("a session record is unreadable: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        let record = Record {
            initialize: serde_json::json!({"protocolVersion": "2025-11-25"}),
            owner: Some("ab".into()),
            log_level: Some(LoggingLevel::Warning),
            subscriptions: vec!["note://a".into()],
        };
        assert_eq!(Record::from_text(&record.to_text()).unwrap(), record);
        assert!(Record::from_text("not json").is_err());
    }
}
