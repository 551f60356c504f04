//! `requestState` across rounds: an incoming token is opened before the handler runs,
//! and an `InputRequiredResult` is checked (requests or state, only declared
//! capabilities) and its state sealed after.

use serde_json::{Map, Value};

use crate::jsonrpc::RpcError;
use crate::protocol;
use crate::seal::{Principal, RequestBinding, Sealer};
use crate::types::v2026_07_28::{ClientCapabilities, InputRequiredResult, ResultType};

/// What a sealed token is bound to besides the method and the principal: the request's
/// target (tool or prompt name, resource URI) and its arguments.
#[derive(Debug)]
pub(super) struct Binding {
    target: String,
    arguments: Option<Map<String, Value>>,
}

impl Binding {
    /// The target named by the params member `target` (from the method table) and the
    /// arguments, copied before the handler takes the params.
    pub(super) fn of(target: Option<&str>, params: &Value) -> Self {
        let (target, arguments) = parts(target, params);
        Self {
            target: target.to_owned(),
            arguments: arguments.cloned(),
        }
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        principal: Option<&'a Principal>,
    ) -> RequestBinding<'a> {
        RequestBinding::new(method, &self.target)
            .with_arguments(self.arguments.as_ref())
            .with_principal(principal)
    }
}

/// The request's target and arguments, borrowed from its params.
fn parts<'a>(target: Option<&str>, params: &'a Value) -> (&'a str, Option<&'a Map<String, Value>>) {
    let target = target
        .and_then(|member| params.get(member))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arguments = params.get("arguments").and_then(Value::as_object);
    (target, arguments)
}

/// Replaces an incoming sealed `requestState` with the plaintext the handler wrote, or
/// rejects the request with the fixed error.
pub(super) fn unseal_incoming(
    sealer: &Sealer,
    method: &str,
    target: Option<&str>,
    params: &mut Value,
    principal: Option<&Principal>,
) -> Result<(), RpcError> {
    let Some(token) = params.get("requestState") else {
        return Ok(());
    };
    let Some(token) = token.as_str() else {
        return Err(RpcError::invalid_request_state());
    };
    let (target, arguments) = parts(target, params);
    let binding = RequestBinding::new(method, target)
        .with_arguments(arguments)
        .with_principal(principal);
    let plain = sealer
        .verify(token, &binding)
        .map_err(|_| RpcError::invalid_request_state())?;
    let plain = String::from_utf8(plain).map_err(|_| RpcError::invalid_request_state())?;
    params["requestState"] = Value::String(plain);
    Ok(())
}

/// Every `InputRequiredResult` has requests or state, asks only for what the client
/// declared, and carries sealed state when sealing is on. Returns it encoded.
pub(super) fn finish_input_required(
    method: &str,
    sealing: Option<(&Sealer, &Binding)>,
    principal: Option<&Principal>,
    capabilities: &ClientCapabilities,
    mut asked: InputRequiredResult,
) -> Result<Value, RpcError> {
    let requests = asked.input_requests.as_ref().filter(|r| !r.is_empty());
    if requests.is_none() && asked.request_state.is_none() {
        tracing::error!(
            method,
            "a handler returned an InputRequiredResult with neither inputRequests nor requestState"
        );
        return Err(RpcError::internal("Internal error"));
    }
    if let Some(missing) = requests.and_then(|r| protocol::missing_capabilities(r, capabilities)) {
        return Err(RpcError::missing_capability(&missing));
    }
    if let (Some((sealer, binding)), Some(state)) = (sealing, asked.request_state.as_mut()) {
        *state = sealer
            .seal(&binding.request(method, principal), state.as_bytes())
            .map_err(|_| RpcError::internal("Internal error"))?;
    }
    // The type says what this is, whatever the handler wrote in the field.
    asked.result_type = ResultType::InputRequired;
    serde_json::to_value(&asked).map_err(|e| {
        tracing::error!(method, error = %e, "could not encode an InputRequiredResult");
        RpcError::internal("Internal error")
    })
}
