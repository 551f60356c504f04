//! The server's seam for transports that hold 2025-11-25 sessions: `initialize` opens
//! a [`Session`], the session's requests are served on it (the few the session answers
//! itself first: `ping`, `logging/setLevel`, `resources/subscribe` and `unsubscribe`),
//! the server's events become the session's notifications, and the client's answers to
//! the server's own requests are handed back to it.

mod channel;
mod fulfil;
mod own;
mod route;
mod state;

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

pub(crate) use fulfil::ask_all;
pub(crate) use own::Own;
pub(crate) use route::OnSession;
pub use state::SessionInput;
pub(crate) use state::SessionState;

use super::{Server, ServerEvent, Stamped};
use crate::jsonrpc::{self, RawParams, RpcError};
use crate::types::rpc::Notification;
use crate::types::v2025_11_25::method as session_method;
#[cfg(feature = "http-server")]
use crate::types::v2026_07_28::LoggingLevel;
use crate::types::v2026_07_28::{LoggingMessageNotificationParams, RequestId, method};
use state::Offers;

/// One client's 2025-11-25 session, as a transport holds it: cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    state: Arc<SessionState>,
}

impl Session {
    /// The session as the core sees a request's channel.
    pub(crate) fn channel(&self) -> Arc<dyn crate::server::context::Channel> {
        self.state.clone()
    }

    /// Hands the client's response (to a request the server sent on this session) to
    /// the handler waiting for it here; the response back when none is.
    pub(crate) fn answer(
        &self,
        id: &RequestId,
        result: Result<Value, RpcError>,
    ) -> Result<(), Result<Value, RpcError>> {
        self.state.resolve(id, result)
    }

    /// In a fleet: the requests this session sends from here carry `instance` in their
    /// ids, so an answer that reaches another instance finds its way back.
    #[cfg(feature = "http-server")]
    pub(crate) fn name_requests(&self, instance: Arc<str>) {
        self.state.name_requests(instance);
    }

    /// What the client chose on this session: its log level and the resources it
    /// subscribed to (for a record another instance reads).
    #[cfg(feature = "http-server")]
    pub(crate) fn choices(&self) -> (Option<LoggingLevel>, Vec<String>) {
        self.state.choices()
    }

    /// Takes on the choices the client made through another instance.
    #[cfg(feature = "http-server")]
    pub(crate) fn restore(&self, log_level: Option<LoggingLevel>, subscriptions: Vec<String>) {
        self.state.restore(log_level, subscriptions);
    }

    /// Ends the session: every request the server is waiting on fails.
    pub(crate) fn close(&self) {
        self.state.close();
    }

    /// Answers a request the session answers itself ([`own::ROUTES`]), or `None` for a
    /// request the server's handlers serve.
    pub(crate) fn answer_own(&self, method: &str, params: Option<&RawParams>) -> Option<Own> {
        let (_, route) = own::ROUTES.iter().find(|(routed, _)| *routed == method)?;
        route(&self.state, params)
    }

    /// The notification `event` makes for this session's client, as a JSON-RPC message,
    /// if the client is to hear it: list changes the server offers, updates of the
    /// resources it subscribed to, log messages at or above its level.
    pub(crate) fn message_for(&self, event: &ServerEvent) -> Option<String> {
        let offers = self.state.offers;
        let bare = |name: &str| Some(jsonrpc::notification(name, None));
        match event {
            ServerEvent::ToolsChanged if offers.tools_changed => {
                bare(session_method::ToolListChanged::METHOD)
            }
            ServerEvent::PromptsChanged if offers.prompts_changed => {
                bare(session_method::PromptListChanged::METHOD)
            }
            ServerEvent::ResourcesChanged if offers.resources_changed => {
                bare(session_method::ResourceListChanged::METHOD)
            }
            ServerEvent::ResourceUpdated(uri) if self.state.subscribed(uri) => {
                Some(jsonrpc::notification(
                    session_method::ResourceUpdated::METHOD,
                    Some(serde_json::json!({ "uri": &**uri })),
                ))
            }
            ServerEvent::Log {
                level,
                logger,
                data,
            } if self.state.logs(*level) => {
                let mut params = LoggingMessageNotificationParams::new((**data).clone(), *level);
                params.logger = logger.as_deref().map(str::to_owned);
                let params = serde_json::to_value(params).ok()?;
                Some(jsonrpc::notification(
                    <method::LoggingMessage as Notification>::METHOD,
                    Some(params),
                ))
            }
            _ => None,
        }
    }
}

impl Session {
    /// Carries the server's `events` to this session's client: each notification
    /// [`message_for`](Self::message_for) makes of one goes to `deliver`, until it
    /// returns `false` (the client is gone) or the server is. A transport spawns it
    /// when the session opens and aborts it when the session ends.
    pub(crate) async fn forward_events<F>(
        self,
        mut events: broadcast::Receiver<Stamped>,
        mut deliver: impl FnMut(&Stamped, String) -> F + Send,
    ) where
        F: Future<Output = bool> + Send,
    {
        loop {
            match events.recv().await {
                Ok(stamped) => {
                    if let Some(message) = self.message_for(&stamped.event) {
                        if !deliver(&stamped, message).await {
                            break;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "a session fell behind the server's events and missed some"
                    );
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    }
}

/// Answers a 2025-11-25 `initialize` to `server`: the new session, and the result to
/// send ([`Server::open_session`]).
pub(crate) fn open(server: &Server, params: Option<&Value>) -> Result<(Session, Value), RpcError> {
    let offers = Offers::of(&server.inner.capabilities);
    let state = SessionState::open(
        params,
        server.inner.session_state_limit,
        offers,
        server.inner.session_input,
    )?;
    let result = state::session_result(
        &server.inner.info,
        &server.inner.capabilities,
        server.inner.instructions.as_deref(),
    )?;
    Ok((
        Session {
            state: Arc::new(state),
        },
        result,
    ))
}
