//! What a client transport that speaks both protocol eras offers the client: it tells
//! what a failed modern probe means, remembers the era its server was found to speak,
//! and carries a 2025-11-25 server's own requests to the client's callbacks.
//!
//! These live with the transports (not the client) so a transport can implement them
//! without depending on the client that drives it.

use std::sync::Arc;

use serde_json::Value;

use super::{BoxFuture, CallError, ClientTransport};
use crate::Era;
use crate::jsonrpc::{RpcError, code};

/// Answers a server's requests on a 2025-11-25 session: takes the method and params,
/// resolves to the result or the JSON-RPC error to send back.
pub type ServerRequestHandler =
    Arc<dyn Fn(String, Option<Value>) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// A client transport that can speak both eras: it tells what a failed modern probe
/// means, and carries a 2025-11-25 server's requests to the client's callbacks.
pub trait EraTransport: ClientTransport {
    /// Sends the server's requests (2025-11-25 sessions) to `handler` and its answers
    /// back to the server.
    fn route_server_requests(&self, handler: ServerRequestHandler);

    /// Whether `error`, the failure of the modern probe, shows a 2025-11-25 server.
    /// By default: any JSON-RPC error that is not a modern one.
    fn is_legacy_answer(&self, error: &CallError) -> bool {
        matches!(error, CallError::Rpc(e) if !is_modern_error(e))
    }

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

/// Whether a JSON-RPC error is one only a 2026-07-28 server sends: -32022 with the
/// supported versions, or -32020 (HTTP headers disagree with the body).
pub fn is_modern_error(error: &RpcError) -> bool {
    match error.code {
        code::UNSUPPORTED_PROTOCOL_VERSION => error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .is_some_and(Value::is_array),
        code::HEADER_MISMATCH => true,
        _ => false,
    }
}
