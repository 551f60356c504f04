//! The server's events across a fleet: what begins on one instance (a list change, a
//! resource update, a log message) is published on the session store's `events`
//! channel, and every other instance tells its own listeners (`subscriptions/listen`
//! streams, 2025-11-25 sessions' streams) as if it had begun there. Each message names
//! the instance it came from, which does not hear it twice.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::session_store::{SessionStore, follow};
use crate::StoreError;
use crate::server::{Server, ServerEvent, Stamped};
use crate::types::v2026_07_28::LoggingLevel;

/// The channel the events go on.
const CHANNEL: &str = "events";

/// One instance's end of the bus: started once, stopped when the endpoint goes.
pub(crate) struct Bus {
    store: Arc<dyn SessionStore>,
    started: tokio::sync::OnceCell<[AbortOnDrop; 2]>,
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An event as the bus carries it.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Message {
    from: String,
    /// The event's number on the instance it came from.
    n: u64,
    #[serde(flatten)]
    event: Wire,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Wire {
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    ResourceUpdated {
        uri: String,
    },
    Log {
        level: LoggingLevel,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logger: Option<String>,
        data: Value,
    },
}

impl Wire {
    fn of(event: &ServerEvent) -> Self {
        match event {
            ServerEvent::ToolsChanged => Self::ToolsChanged,
            ServerEvent::PromptsChanged => Self::PromptsChanged,
            ServerEvent::ResourcesChanged => Self::ResourcesChanged,
            ServerEvent::ResourceUpdated(uri) => Self::ResourceUpdated {
                uri: uri.to_string(),
            },
            ServerEvent::Log {
                level,
                logger,
                data,
            } => Self::Log {
                level: *level,
                logger: logger.as_deref().map(str::to_owned),
                data: (**data).clone(),
            },
        }
    }

    fn into_event(self) -> ServerEvent {
        match self {
            Self::ToolsChanged => ServerEvent::ToolsChanged,
            Self::PromptsChanged => ServerEvent::PromptsChanged,
            Self::ResourcesChanged => ServerEvent::ResourcesChanged,
            Self::ResourceUpdated { uri } => ServerEvent::ResourceUpdated(uri.into()),
            Self::Log {
                level,
                logger,
                data,
            } => ServerEvent::Log {
                level,
                logger: logger.map(Into::into),
                data: Arc::new(data),
            },
        }
    }
}

impl Bus {
    pub(crate) fn new(store: Arc<dyn SessionStore>) -> Self {
        Self {
            store,
            started: tokio::sync::OnceCell::new(),
        }
    }

    /// Carries `server`'s events both ways, from now on (listening before it returns,
    /// the first time; tried again by the next caller if the store failed).
    pub(crate) async fn ensure_started(&self, server: &Server) -> Result<(), StoreError> {
        self.started
            .get_or_try_init(|| async {
                let heard = self.store.listen(CHANNEL).await?;
                let inbound = {
                    let server = server.clone();
                    let origin = Arc::clone(server.event_origin());
                    follow(
                        Arc::clone(&self.store),
                        CHANNEL.to_owned(),
                        heard,
                        move |text| {
                            hear(&server, &origin, &text);
                        },
                    )
                };
                let outbound = tell(server.local_events(), Arc::clone(&self.store));
                Ok::<_, StoreError>([
                    AbortOnDrop(tokio::spawn(inbound)),
                    AbortOnDrop(tokio::spawn(outbound)),
                ])
            })
            .await
            .map(|_| ())
    }
}

/// An event published by another instance, told to the listeners here.
fn hear(server: &Server, origin: &str, text: &str) {
    match serde_json::from_str::<Message>(text) {
        Ok(message) if message.from != origin => server.deliver(Stamped {
            origin: message.from.into(),
            n: message.n,
            event: message.event.into_event(),
        }),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "an unreadable event on the fleet's bus"),
    }
}

/// Publishes the events that begin here.
async fn tell(mut local: tokio::sync::broadcast::Receiver<Stamped>, store: Arc<dyn SessionStore>) {
    loop {
        let stamped = match local.recv().await {
            Ok(event) => event,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "the fleet's bus fell behind this server's events");
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let message = Message {
            from: stamped.origin.to_string(),
            n: stamped.n,
            event: Wire::of(&stamped.event),
        };
        let text = serde_json::to_string(&message).unwrap_or_default();
        if let Err(e) = store.publish(CHANNEL, text).await {
            tracing::warn!(error = %e, "could not publish an event to the fleet");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_crosses_the_bus_as_it_was() {
        let events = [
            ServerEvent::ToolsChanged,
            ServerEvent::PromptsChanged,
            ServerEvent::ResourcesChanged,
            ServerEvent::ResourceUpdated("note://a".into()),
            ServerEvent::Log {
                level: LoggingLevel::Warning,
                logger: Some("db".into()),
                data: Arc::new(serde_json::json!({"slow": true})),
            },
        ];
        for event in events {
            let message = Message {
                from: "a".into(),
                n: 7,
                event: Wire::of(&event),
            };
            let text = serde_json::to_string(&message).unwrap();
            let back: Message = serde_json::from_str(&text).unwrap();
            assert_eq!(back.event.into_event(), event, "{text}");
        }
    }
}
