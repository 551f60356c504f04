//! What a client transport that speaks both protocol eras offers the client: it
//! remembers the era its server was found to speak, and carries a 2025-11-25 server's
//! own requests to the client's callbacks. It reports facts (an error's HTTP status,
//! the JSON-RPC error in a body); the client decides the era from them.
//!
//! These live with the transports (not the client) so a transport can implement them
//! without depending on the client that drives it.

use std::sync::Arc;

use serde_json::Value;

use super::{BoxFuture, ClientTransport};
use crate::Era;
use crate::jsonrpc::RpcError;

/// Answers a server's requests on a 2025-11-25 session: takes the method and params,
/// resolves to the result or the JSON-RPC error to send back.
pub type ServerRequestHandler =
    Arc<dyn Fn(String, Option<Value>) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// A client transport that can speak both eras: it remembers its server's era, and
/// carries a 2025-11-25 server's requests to the client's callbacks.
pub trait EraTransport: ClientTransport {
    /// Sends the server's requests (2025-11-25 sessions) to `handler` and its answers
    /// back to the server.
    fn route_server_requests(&self, handler: ServerRequestHandler);

    /// The era this transport's server was already found to speak (by an earlier
    /// client of the same endpoint, through a transport sharing what this one
    /// remembers: over HTTP, its `EraCache`), so
    /// [`EraMode::Auto`](crate::client::EraMode::Auto) need not probe again.
    fn known_era(&self) -> Option<Era> {
        None
    }

    /// The probe found the server to speak `era`: remember it for
    /// [`known_era`](Self::known_era).
    fn discovered(&self, era: Era) {
        let _ = era;
    }

    /// Whether a request may wait on the user (an authorizer that sends them to sign
    /// in): then the era probe waits for its answer however long that takes, rather
    /// than reading silence as a 2025-11-25 server's.
    fn may_wait_on_user(&self) -> bool {
        false
    }

    /// The client is about to speak `era` on this transport (before `initialize`, for
    /// a 2025-11-25 session), so version headers can follow.
    fn negotiated(&self, era: Era) {
        let _ = era;
    }
}
