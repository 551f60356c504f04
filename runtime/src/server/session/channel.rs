//! The session wing's side of the core's seam (`server/channel.rs`): a request on a
//! 2025-11-25 session sees the session's capabilities as its `_meta`, asks its client
//! with server-to-client requests, and answers without the members only 2026-07-28
//! has; an `InputRequiredResult` is fulfilled over the session when the server opted
//! in, and is an internal error otherwise.

use serde_json::Value;

use super::fulfil;
use super::state::SessionState;
use crate::jsonrpc::RpcError;
use crate::protocol::RequestMeta;
use crate::server::Outbound;
use crate::server::context::{Channel, Retry};
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{InputRequiredResult, LoggingLevel, ProgressToken};

impl Channel for SessionState {
    fn request_meta(&self, progress_token: Option<ProgressToken>) -> RequestMeta {
        SessionState::request_meta(self, progress_token)
    }

    fn logs(&self, level: LoggingLevel) -> bool {
        SessionState::logs(self, level)
    }

    fn ask<'a>(
        &'a self,
        out: &'a Outbound,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(self.request(out, method, params))
    }

    fn fulfils_input(&self) -> bool {
        self.input.is_some()
    }

    fn input_limits(&self) -> crate::protocol::rounds::RoundLimits {
        self.input.unwrap_or_default().limits()
    }

    fn complete(&self, result: &str) -> Result<String, RpcError> {
        let value: Value = serde_json::from_str(result).map_err(internal)?;
        serde_json::to_string(&crate::protocol::era::to_session_result(value)).map_err(internal)
    }

    fn input_required<'a>(
        &'a self,
        method: &'a str,
        asked: Box<InputRequiredResult>,
        retry: Option<Retry<'a>>,
    ) -> BoxFuture<'a, Result<String, RpcError>> {
        Box::pin(async move {
            match (self.input, retry) {
                (Some(policy), Some(retry)) => {
                    fulfil::rounds(policy, method, retry, asked, self).await
                }
                _ => {
                    tracing::error!(
                        method,
                        "a handler answered input_required to a 2025-11-25 session, which cannot receive it; ask with RequestContext::request_client there, or turn on ServerBuilder::fulfil_input_on_sessions"
                    );
                    Err(RpcError::internal("Internal error"))
                }
            }
        })
    }
}

fn internal(e: serde_json::Error) -> RpcError {
    tracing::error!(error = %e, "could not rewrite a result for a 2025-11-25 session");
    RpcError::internal("Internal error")
}
