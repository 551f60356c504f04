//! What a relayed request carries each way besides its params: the `_meta` the
//! gateway's client sent is dropped (the relay writes what the upstream must hear, for
//! its era), and the notifications of the upstream's stream are passed on to the client.

use serde_json::Value;

use crate::server::RequestContext;
use crate::types::v2026_07_28::method::ClientRequestParams;

/// Drops the `_meta` the gateway's client sent from `params`: what the upstream must
/// hear of it (capabilities, log level, version, progress) the relay writes itself, for
/// the upstream's era. (Other members, a trace context aside, are not relayed.)
pub(super) fn unmeta<P: ClientRequestParams>(params: &mut P) {
    if let Some(slot) = params.request_meta_slot() {
        *slot = None;
    }
}

/// A notification an upstream sent on a relayed request's stream, passed on to the
/// gateway's client: progress under the client's own token (none asked: dropped), a
/// log entry if the client takes its level, anything else as it came.
pub(super) fn pass_on(ctx: &RequestContext, message: Value) {
    let Some(name) = message.get("method").and_then(Value::as_str) else {
        return;
    };
    let mut params = message.get("params").cloned().unwrap_or(Value::Null);
    if crate::protocol::says(name, |m| m.reports_progress) {
        let Some(token) = &ctx.meta().progress_token else {
            return;
        };
        let Ok(token) = serde_json::to_value(token) else {
            return;
        };
        if let Some(members) = params.as_object_mut() {
            members.insert("progressToken".into(), token);
        }
    } else if crate::protocol::says(name, |m| m.has_level) {
        let level = params.get("level").cloned().map(serde_json::from_value);
        match level {
            Some(Ok(level)) if ctx.wants_log(level) => {}
            _ => return,
        }
    }
    ctx.notify_value(name, params);
}
