//! Readers woken by the other instances of a fleet: with an event store they share,
//! an event another instance keeps for a session wakes the readers of that session's
//! streams here, which look in the store again.

use std::sync::{Arc, Weak};

use super::super::events::EventStore;
use super::super::session_store::{ListenFuture, follow_with};
use super::relay::{Listener, Live};
use crate::StoreError;
use crate::util::lock;

/// Listens, once, for the sessions whose events other instances keep.
pub(super) struct Waker {
    store: Arc<dyn EventStore>,
    listener: tokio::sync::OnceCell<Option<Listener>>,
}

impl Waker {
    pub(super) fn new(store: Arc<dyn EventStore>) -> Self {
        Self {
            store,
            listener: tokio::sync::OnceCell::new(),
        }
    }

    /// Listens from now on, if the store is one other processes write (tried again by
    /// the next caller if the store failed).
    pub(super) async fn ensure_listening(&self, live: &Live) -> Result<(), StoreError> {
        self.listener
            .get_or_try_init(|| async {
                let Some(published) = self.store.listen().await? else {
                    return Ok(None);
                };
                let store = Arc::clone(&self.store);
                let listen = move || {
                    let store = Arc::clone(&store);
                    Box::pin(async move {
                        store.listen().await?.ok_or_else(|| {
                            StoreError::new("event store", "it stopped telling its events")
                        })
                    }) as ListenFuture
                };
                let live = Arc::downgrade(live);
                let task = tokio::spawn(follow_with(listen, published, move |session| {
                    wake(&live, session.as_deref());
                }));
                Ok::<_, StoreError>(Some(Listener(task)))
            })
            .await
            .map(|_| ())
    }
}

/// Wakes the readers of `session` here, or of every session (`None`: the link dropped,
/// and some events may have gone unheard).
fn wake(
    live: &Weak<std::sync::Mutex<std::collections::HashMap<String, Arc<super::HttpSession>>>>,
    session: Option<&str>,
) {
    let Some(live) = live.upgrade() else {
        return;
    };
    let live = lock(&live);
    match session {
        Some(name) => {
            if let Some(session) = live.get(name) {
                session.streams.wake();
            }
        }
        None => live.values().for_each(|session| session.streams.wake()),
    }
}
