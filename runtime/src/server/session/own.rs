//! The requests a 2025-11-25 session answers itself, routed by their markers' methods:
//! `ping`, and, when the server offers them, `logging/setLevel`, `resources/subscribe`
//! and `resources/unsubscribe`. Each says whether it changed the session's record (a
//! level, a subscription), which a fleet then saves.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::SessionState;
use crate::jsonrpc::{RawParams, RpcError};
use crate::types::rpc::Request;
use crate::types::v2025_11_25::method::{Ping, SetLevel, Subscribe, Unsubscribe};
use crate::types::v2026_07_28::LoggingLevel;

/// A session's own answer to a request.
#[derive(Debug)]
pub(crate) struct Own {
    /// The result or the error to send.
    pub(crate) answer: Result<Value, RpcError>,
    /// Whether the request changed the session's record (a level, a subscription): a
    /// fleet's HTTP endpoint saves it then.
    #[cfg_attr(
        not(feature = "http-server"),
        expect(dead_code, reason = "read where sessions are kept: over HTTP")
    )]
    pub(crate) changed: bool,
}

/// An own route: `None` when the server does not offer what the method needs, and the
/// request goes to the server's handlers.
type Route = fn(&SessionState, Option<&RawParams>) -> Option<Own>;

/// The session's own routes, by method.
pub(super) const ROUTES: [(&str, Route); 4] = [
    (Ping::METHOD, ping),
    (SetLevel::METHOD, set_level),
    (Subscribe::METHOD, subscribe),
    (Unsubscribe::METHOD, unsubscribe),
];

fn ping(_: &SessionState, _: Option<&RawParams>) -> Option<Own> {
    Some(Own {
        answer: Ok(empty()),
        changed: false,
    })
}

fn set_level(state: &SessionState, params: Option<&RawParams>) -> Option<Own> {
    state.offers.logging.then(|| {
        changed(read::<SetLevel>(params).map(|p| state.set_log_level(modern_level(p.level))))
    })
}

fn subscribe(state: &SessionState, params: Option<&RawParams>) -> Option<Own> {
    state
        .offers
        .subscribe
        .then(|| changed(read::<Subscribe>(params).and_then(|p| state.subscribe(p.uri))))
}

fn unsubscribe(state: &SessionState, params: Option<&RawParams>) -> Option<Own> {
    state
        .offers
        .subscribe
        .then(|| changed(read::<Unsubscribe>(params).map(|p| state.unsubscribe(&p.uri))))
}

/// The answer of a route that changes the record when it succeeds.
fn changed(done: Result<(), RpcError>) -> Own {
    Own {
        changed: done.is_ok(),
        answer: done.map(|()| empty()),
    }
}

fn empty() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Reads a session method's params, or says why they are not its type.
fn read<M: Request>(params: Option<&RawParams>) -> Result<M::Params, RpcError>
where
    M::Params: DeserializeOwned,
{
    serde_json::from_str(params.map_or("{}", RawParams::get))
        .map_err(|e| RpcError::invalid_params(format!("Invalid params for {}: {e}", M::METHOD)))
}

/// A 2025-11-25 log level as the 2026-07-28 one: the eras name the same eight levels.
fn modern_level(level: crate::types::v2025_11_25::LoggingLevel) -> LoggingLevel {
    use crate::types::v2025_11_25::LoggingLevel as Old;
    match level {
        Old::Debug => LoggingLevel::Debug,
        Old::Info => LoggingLevel::Info,
        Old::Notice => LoggingLevel::Notice,
        Old::Warning => LoggingLevel::Warning,
        Old::Error => LoggingLevel::Error,
        Old::Critical => LoggingLevel::Critical,
        Old::Alert => LoggingLevel::Alert,
        Old::Emergency => LoggingLevel::Emergency,
    }
}
