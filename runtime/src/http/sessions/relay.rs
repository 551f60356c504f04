//! Answers that reach the wrong instance: the requests this instance sends on a shared
//! session carry its name in their ids; an answer POSTed to another instance is relayed
//! here through the session store, and handed to the request waiting for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::super::session_store::{Relay, SessionStore, follow, instance_of};
use super::HttpSession;
use crate::StoreError;
use crate::jsonrpc::RpcError;
use crate::types::v2026_07_28::RequestId;
use crate::util::lock;

/// The sessions live in this process, by name.
pub(super) type Live = Arc<Mutex<HashMap<String, Arc<HttpSession>>>>;

/// This instance's name in the fleet, and its listener for relayed answers.
pub(super) struct Relayer {
    store: Arc<dyn SessionStore>,
    pub(super) instance: Arc<str>,
    listener: tokio::sync::OnceCell<Listener>,
}

/// A listening task, stopped when the sessions go.
pub(super) struct Listener(pub(super) tokio::task::JoinHandle<()>);

impl Drop for Listener {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Relayer {
    pub(super) fn new(store: Arc<dyn SessionStore>) -> Self {
        Self {
            store,
            instance: crate::util::random_hex::<8>().into(),
            listener: tokio::sync::OnceCell::new(),
        }
    }

    /// Listens for the answers relayed to this instance (subscribed before this returns,
    /// the first time: no request goes out before its answer can come back).
    pub(super) async fn ensure_listening(&self, live: &Live) -> Result<(), StoreError> {
        self.listener
            .get_or_try_init(|| async {
                let channel = channel(&self.instance);
                let relayed = self.store.listen(&channel).await?;
                let live = Arc::downgrade(live);
                let task = tokio::spawn(follow(
                    Arc::clone(&self.store),
                    channel,
                    relayed,
                    move |message: String| deliver(&live, &message),
                ));
                Ok::<_, StoreError>(Listener(task))
            })
            .await
            .map(|_| ())
    }

    /// Relays `answer` (to request `id` of `session`, waiting nowhere here) to the
    /// instance the id names; `false` when that instance has gone. An answer to a
    /// request of this instance's (it gave up waiting) or of none is dropped.
    pub(super) async fn relay(
        &self,
        session: &str,
        id: RequestId,
        answer: Result<Value, RpcError>,
    ) -> Result<bool, StoreError> {
        let Some(instance) = instance_of(&id).filter(|i| **i != *self.instance) else {
            tracing::debug!(?id, "a client response to no pending request");
            return Ok(true);
        };
        let instance = instance.to_owned();
        let relay = Relay {
            session: session.to_owned(),
            id,
            answer,
        };
        let message = serde_json::to_string(&relay)
            .map_err(|e| StoreError::new(super::super::session_store::STORE, e.to_string()))?;
        self.store.publish(&channel(&instance), message).await
    }
}

/// The channel the answers for `instance` are published on.
fn channel(instance: &str) -> String {
    format!("answers:{instance}")
}

fn deliver(live: &Weak<Mutex<HashMap<String, Arc<HttpSession>>>>, message: &str) {
    let Some(live) = live.upgrade() else {
        return;
    };
    let relay: Relay = match serde_json::from_str(message) {
        Ok(relay) => relay,
        Err(e) => {
            tracing::warn!(error = %e, "an unreadable relayed answer");
            return;
        }
    };
    let session = lock(&live).get(&relay.session).cloned();
    let Some(session) = session else {
        tracing::debug!("a relayed answer for a session not served here");
        return;
    };
    if session.session.answer(&relay.id, relay.answer).is_err() {
        tracing::debug!(id = ?relay.id, "a relayed answer to no pending request");
    }
}
