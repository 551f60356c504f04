//! The server's seam for transports that hold 2025-11-25 sessions: `initialize` opens
//! a [`Session`], the session's requests are served on it, and the client's answers to
//! the server's own requests are handed back to it.

use std::sync::Arc;

use serde_json::Value;

use super::Server;
use crate::jsonrpc::RpcError;
use crate::legacy::{self, LegacySession};
use crate::types::v2026_07_28::RequestId;

/// One client's 2025-11-25 session, as a transport holds it: cheap to clone.
#[derive(Clone, Debug)]
pub struct Session {
    legacy: Arc<LegacySession>,
}

impl Session {
    pub(crate) fn legacy(&self) -> &Arc<LegacySession> {
        &self.legacy
    }

    /// Hands the client's response (to a request the server sent on this session) to
    /// the handler waiting for it.
    pub fn answer(&self, id: &RequestId, result: Result<Value, RpcError>) {
        self.legacy.resolve(id, result);
    }

    /// Ends the session: every request the server is waiting on fails.
    pub fn close(&self) {
        self.legacy.close();
    }
}

impl Server {
    /// Answers a 2025-11-25 `initialize`: the new session, and the result to send.
    pub fn open_session(&self, params: Option<&Value>) -> Result<(Session, Value), RpcError> {
        let legacy = LegacySession::open(params, self.inner.session_state_limit)?;
        let result = legacy::session_result(
            &self.inner.info,
            &self.inner.capabilities,
            self.inner.instructions.as_deref(),
        )?;
        Ok((
            Session {
                legacy: Arc::new(legacy),
            },
            result,
        ))
    }
}
