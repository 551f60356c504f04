//! The era routing every transport that holds 2025-11-25 sessions shares, written once:
//! whether a request is stateless, whether it opens a session, and, on a session, whether
//! the session answers it itself or the server's handlers serve it there. Each transport
//! finds the session its own way (the connection's, over a message transport; the one
//! `Mcp-Session-Id` names, over HTTP) and asks these in that order.

use serde_json::Value;

use super::{Own, Session};
use crate::protocol::era::session_says;
use crate::server::Accepted;
use crate::types::v2026_07_28::RequestId;

/// Where a request on a 2025-11-25 session goes.
pub(crate) enum OnSession {
    /// The session answers it itself (`ping`, `logging/setLevel`, a subscription): the
    /// request's id, and the answer.
    Own(RequestId, Own),
    /// The server's handlers serve it, on the session.
    Serve(Accepted),
}

impl Accepted {
    /// Whether this is a stateless 2026-07-28 request: its `_meta` names the protocol
    /// version and no session holds it. A session's requests belong to it whatever their
    /// `_meta` says; before `initialize` a request carrying that `_meta` is stateless.
    pub(crate) fn is_stateless(&self, in_session: bool) -> bool {
        self.names_protocol_version() && !in_session
    }

    /// `Some` (with its params, as JSON, when they read) when the request opens a
    /// 2025-11-25 session (`initialize`).
    pub(crate) fn opens_session(&self) -> Option<Option<Value>> {
        session_says(self.method(), |m| m.opens_session).then(|| {
            self.params()
                .and_then(|p| serde_json::from_str(p.get()).ok())
        })
    }
}

impl Session {
    /// A request the session holds: answered by the session itself, or made the
    /// session's for the server's handlers.
    pub(crate) fn route(&self, accepted: Accepted) -> OnSession {
        match self.answer_own(accepted.method(), accepted.params()) {
            Some(own) => OnSession::Own(accepted.id().clone(), own),
            None => OnSession::Serve(accepted.on_session(self)),
        }
    }
}
