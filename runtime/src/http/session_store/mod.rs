//! 2025-11-25 sessions kept where every instance of a fleet reads them: the
//! [`SessionStore`] trait and, with the `redis` feature, [`RedisSessionStore`](crate::fleet::RedisSessionStore).
//!
//! Without a store, a session lives in the instance that opened it (the default: the
//! bounded in-memory sessions of one process). With one, `initialize` also writes the
//! session's record there: what the client said in `initialize`, its owner (a digest of
//! the caller's principal), its log level and its resource subscriptions. An instance
//! that meets a session it did not open reads the record and serves it; each use reads
//! it again (so a level set or a subscription made through another instance holds
//! here, and a session ended anywhere is gone everywhere) and keeps it alive for the
//! idle timeout; a change writes it back; DELETE removes it.
//!
//! The requests a handler sends the client on a session (`elicitation/create`, ...)
//! carry the name of the instance that sent them in their ids. The client may POST its
//! answer to any instance: one that does not hold the waiting request relays the
//! answer to the instance its id names ([`SessionStore::publish`] on that instance's
//! channel), which listens for them ([`SessionStore::listen`]); when that instance has
//! gone, the client is told, and the session lives on. The same channels carry the
//! server's events (list changes, resource updates, log messages) to every instance.

use std::sync::Arc;
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
    /// Hands `message` to the instances listening on `channel` now, if any; whether
    /// one was. Nothing is kept for an instance that listens later.
    fn publish(&self, channel: &str, message: String) -> BoxFuture<'_, Result<bool, StoreError>>;
    /// The messages published on `channel` from now on, as they come; the stream ends
    /// if the store's link does (the caller listens again).
    fn listen(&self, channel: &str) -> BoxFuture<'_, Result<Published, StoreError>>;
}

/// The messages published on one channel.
pub type Published = futures_util::stream::BoxStream<'static, String>;

/// An answer relayed to the instance waiting for it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Relay {
    /// The session it belongs to.
    pub(crate) session: String,
    /// The id of the request it answers.
    pub(crate) id: crate::types::v2026_07_28::RequestId,
    /// The client's result, or its error.
    pub(crate) answer: Result<Value, crate::jsonrpc::RpcError>,
}

/// How long a listener waits before listening again after the store's link dropped.
const RELISTEN_AFTER: Duration = Duration::from_secs(1);

/// Hands each message published on `channel` (from `published`, the stream already
/// listening) to `handle`, listening again whenever the store's link drops; runs until
/// its task is stopped.
pub(crate) async fn follow(
    store: Arc<dyn SessionStore>,
    channel: String,
    published: Published,
    mut handle: impl FnMut(String) + Send,
) {
    let listen = move || {
        let (store, channel) = (Arc::clone(&store), channel.clone());
        Box::pin(async move { store.listen(&channel).await }) as ListenFuture
    };
    follow_with(listen, published, move |message| {
        if let Some(message) = message {
            handle(message);
        }
    })
    .await;
}

/// What listening again answers.
pub(crate) type ListenFuture = BoxFuture<'static, Result<Published, StoreError>>;

/// [`follow`] for any source: `listen` listens again when the link drops; `handle`
/// gets each message, and `None` after listening again (what was published while the
/// link was down is lost: the handler looks again for itself).
pub(crate) async fn follow_with(
    listen: impl Fn() -> ListenFuture + Send,
    mut published: Published,
    mut handle: impl FnMut(Option<String>) + Send,
) {
    use futures_util::StreamExt as _;
    loop {
        while let Some(message) = published.next().await {
            handle(Some(message));
        }
        tracing::warn!("a store's link dropped: listening again");
        loop {
            tokio::time::sleep(RELISTEN_AFTER).await;
            match listen().await {
                Ok(again) => {
                    published = again;
                    break;
                }
                Err(e) => tracing::warn!(error = %e, "could not listen again"),
            }
        }
        handle(None);
    }
}

/// The instance a request id names (`INSTANCE.N`), if it names one.
pub(crate) fn instance_of(id: &crate::types::v2026_07_28::RequestId) -> Option<&str> {
    match id {
        crate::types::v2026_07_28::RequestId::String(text) => {
            text.rsplit_once('.').map(|(instance, _)| instance)
        }
        crate::types::v2026_07_28::RequestId::Integer(_) => None,
    }
}

/// What any instance needs to serve a session it did not open.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The `initialize` request's params, as the client sent them: kept as text, read
    /// into a tree only by an instance that adopts the session (every use reads the
    /// record; few adopt it).
    pub(crate) initialize: Box<serde_json::value::RawValue>,
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
            initialize: serde_json::value::to_raw_value(
                &serde_json::json!({"protocolVersion": "2025-11-25"}),
            )
            .unwrap(),
            owner: Some("ab".into()),
            log_level: Some(LoggingLevel::Warning),
            subscriptions: vec!["note://a".into()],
        };
        let text = record.to_text();
        assert_eq!(Record::from_text(&text).unwrap().to_text(), text);
        assert!(Record::from_text("not json").is_err());
    }
}
