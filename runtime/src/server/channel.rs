//! The seam between the stateless core and the session wing (`server/session/`): what
//! the channel a request arrived on decides in the core's place. A stateless request
//! has no channel; a 2025-11-25 session's requests carry the session's. The core reads
//! the channel's `_meta`, asks the client through it, and hands it the answer to put
//! in its own form; it never asks which era it serves.

use serde_json::Value;

use super::state::Binding;
use super::{Outbound, RequestContext, Route};
use crate::jsonrpc::{RawParams, RpcError};
use crate::protocol::RequestMeta;
use crate::seal::{Principal, Sealer};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{
    ClientCapabilities, InputRequiredResult, LoggingLevel, ProgressToken,
};

/// A channel requests arrive on, other than the stateless request's own.
pub(crate) trait Channel: Send + Sync + std::fmt::Debug {
    /// What a handler sees as the request's `_meta`: the channel's version,
    /// capabilities and client, and the request's own progress token.
    fn request_meta(&self, progress_token: Option<ProgressToken>) -> RequestMeta;

    /// Whether a log entry at `level` reaches the client.
    fn logs(&self, level: LoggingLevel) -> bool;

    /// Sends the client request `method` on `out` (the stream of the request being
    /// served) and waits for its answer.
    fn ask<'a>(
        &'a self,
        out: &'a Outbound,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, RpcError>>;

    /// Whether the channel answers an `InputRequiredResult` itself (then the core keeps
    /// the request's params for the rounds to come).
    fn fulfils_input(&self) -> bool;

    /// A complete result, written in the channel's form.
    fn complete(&self, result: &str) -> Result<String, RpcError>;

    /// A handler's `InputRequiredResult` to `method`, answered the channel's way;
    /// `retry` is what another round needs, when the core kept it.
    fn input_required<'a>(
        &'a self,
        method: &'a str,
        asked: Box<InputRequiredResult>,
        retry: Option<Retry<'a>>,
    ) -> BoxFuture<'a, Result<String, RpcError>>;
}

/// What calling a handler again takes: its route, the request as sent, its context and
/// how its state is sealed and bound.
pub(crate) struct Retry<'a> {
    pub(crate) route: Route,
    /// The params as the client sent them: each retry adds the answers and the state.
    pub(crate) params: &'a RawParams,
    pub(crate) ctx: RequestContext,
    pub(crate) sealer: Option<&'a Sealer>,
    pub(crate) principal: Option<&'a Principal>,
    pub(crate) capabilities: &'a ClientCapabilities,
    pub(crate) binding: Option<Binding>,
}
