//! Answering a 2025-11-25 server's own requests with the callbacks that answer
//! 2026-07-28 input requests: the payloads are the same, so one set of callbacks serves
//! both eras.

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::callbacks::{Callbacks, InputContext};
use crate::Error;
use crate::jsonrpc::RpcError;
use crate::transport::ServerRequestHandler;
use crate::types::rpc::Request as _;
use crate::types::v2025_11_25::method::Ping;
use crate::types::v2026_07_28::InputRequest;
use crate::types::v2026_07_28::method::{CreateMessage, Elicit, ListRoots};

/// The handler a legacy session answers the server's requests with: `ping`, and
/// `elicitation/create`, `sampling/createMessage` and `roots/list` through `callbacks`
/// (with [`InputContext::key`] `None`, and the server's name once `initialize` gave
/// it to `server`). Anything else is -32601.
pub(crate) fn server_request_handler(
    callbacks: Callbacks,
    server: Arc<OnceLock<Arc<str>>>,
) -> ServerRequestHandler {
    let callbacks = Arc::new(callbacks);
    Arc::new(move |method, params| {
        let callbacks = Arc::clone(&callbacks);
        let asking = InputContext {
            server: server.get().cloned(),
            ..InputContext::default()
        };
        Box::pin(async move { answer(&callbacks, &method, params, asking).await })
    })
}

async fn answer(
    callbacks: &Callbacks,
    method: &str,
    params: Option<Value>,
    asking: InputContext,
) -> Result<Value, RpcError> {
    // A route by method: `ping` answered here, the rest by the client's callbacks.
    match method {
        Ping::METHOD => return Ok(json!({})),
        Elicit::METHOD | CreateMessage::METHOD | ListRoots::METHOD => {}
        _ => return Err(RpcError::method_not_found(method)),
    }
    let mut request = json!({ "method": method });
    if let Some(p) = params {
        request["params"] = p;
    }
    let request: InputRequest = serde_json::from_value(request)
        .map_err(|e| RpcError::invalid_params(format!("Invalid {method} params: {e}")))?;
    let response = callbacks
        .answer(asking, request)
        .await
        .map_err(|e| match e {
            Error::Input(crate::InputError::NoCallback { .. }) => {
                RpcError::method_not_found(method)
            }
            Error::Input(crate::InputError::Callback { error, .. }) => *error,
            other => {
                tracing::warn!(method, error = %other, "could not answer a server request");
                RpcError::internal("Internal error")
            }
        })?;
    serde_json::to_value(response).map_err(|e| {
        tracing::warn!(method, error = %e, "could not encode a callback's answer");
        RpcError::internal("Internal error")
    })
}
