//! How a client transport carries a 2025-11-25 server's own requests to the client's
//! callbacks. It lives with the transports (not the client) so a transport can take it
//! without depending on the client that drives it.

use std::sync::Arc;

use serde_json::Value;

use super::BoxFuture;
use crate::jsonrpc::RpcError;

/// Answers a server's requests on a 2025-11-25 session: takes the method and params,
/// resolves to the result or the JSON-RPC error to send back.
pub type ServerRequestHandler =
    Arc<dyn Fn(String, Option<Value>) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;
