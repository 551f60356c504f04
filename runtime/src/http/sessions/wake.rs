//! What the other instances of a fleet tell the sessions served here: with an event
//! store they share, an event another instance keeps for a session wakes the readers
//! of that session's streams here, which look in the store again; and a choice its
//! client made through another instance (a log level, a subscription) is the
//! session's here at once, so every instance filters the server's events for it alike.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde::{Deserialize, Serialize};

use super::super::events::EventStore;
use super::super::session_store::{ListenFuture, Record, SessionStore, follow, follow_with};
use super::HttpSession;
use super::relay::{Listener, Live};
use crate::StoreError;
use crate::types::v2026_07_28::LoggingLevel;
use crate::util::lock;

/// Listens, once, for the sessions whose events other instances keep, and for the
/// choices their clients make elsewhere.
pub(super) struct Waker {
    store: Arc<dyn EventStore>,
    listener: tokio::sync::OnceCell<Option<Listener>>,
    choices: tokio::sync::OnceCell<Listener>,
}

/// The channel a session's choices are told on.
const CHOICES: &str = "choices";

/// A session's choices, as the channel carries them.
#[derive(Serialize, Deserialize)]
struct Choices {
    session: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_level: Option<LoggingLevel>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    subscriptions: Vec<String>,
}

/// Tells every instance the choices in session `id`'s `record`.
pub(super) async fn tell_choices(
    store: &dyn SessionStore,
    id: &str,
    record: &Record,
) -> Result<(), StoreError> {
    let choices = Choices {
        session: id.to_owned(),
        log_level: record.log_level,
        subscriptions: record.subscriptions.clone(),
    };
    let text = serde_json::to_string(&choices).unwrap_or_default();
    store.publish(CHOICES, text).await.map(|_| ())
}

impl Waker {
    pub(super) fn new(store: Arc<dyn EventStore>) -> Self {
        Self {
            store,
            listener: tokio::sync::OnceCell::new(),
            choices: tokio::sync::OnceCell::new(),
        }
    }

    /// Hears, from now on, the choices clients make through other instances.
    pub(super) async fn ensure_hearing_choices(
        &self,
        store: &Arc<dyn SessionStore>,
        live: &Live,
    ) -> Result<(), StoreError> {
        self.choices
            .get_or_try_init(|| async {
                let heard = store.listen(CHOICES).await?;
                let live = Arc::downgrade(live);
                let task = follow(Arc::clone(store), CHOICES.to_owned(), heard, move |text| {
                    choose(&live, &text);
                });
                Ok::<_, StoreError>(Listener(tokio::spawn(task)))
            })
            .await
            .map(|_| ())
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

/// Makes the choices told the session's here, if it is served here.
fn choose(live: &Weak<Mutex<HashMap<String, Arc<HttpSession>>>>, text: &str) {
    let Some(live) = live.upgrade() else {
        return;
    };
    let Ok(choices) = serde_json::from_str::<Choices>(text) else {
        tracing::warn!("an unreadable session's choices on the fleet's channel");
        return;
    };
    let session = lock(&live).get(&choices.session).cloned();
    if let Some(session) = session {
        session
            .session
            .restore(choices.log_level, choices.subscriptions);
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
