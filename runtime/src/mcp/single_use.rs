//! Running a [`single_use`](super::ToolBuilder::single_use) tool: its round's sealed
//! state redeemed in the server's replay store first; a completed flow's result kept.

use std::sync::Arc;
use std::time::Duration;

use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::server::replay::{Redemption, ReplayStore, TokenId};
use crate::types::v2026_07_28::{CallToolOutcome, CallToolResult};

/// The store and how long a redemption is kept (the state's TTL: no token outlives it).
#[derive(Clone)]
pub(crate) struct SingleUse {
    pub(crate) store: Arc<dyn ReplayStore>,
    pub(crate) ttl: Duration,
}

fn store_failed(e: impl std::fmt::Display) -> RpcError {
    tracing::error!(error = %e, "the replay store failed; refusing the single-use round");
    RpcError::internal("Internal error")
}

impl SingleUse {
    /// Redeems the round's token, if it has one. `Ok(None)`: run the tool (and give
    /// what it returns to [`finish`](Self::finish)); `Ok(Some(outcome))`: answer that.
    pub(crate) async fn begin(
        &self,
        ctx: &RequestContext,
    ) -> Result<Option<CallToolOutcome>, RpcError> {
        let Some(token) = ctx.sealed_state() else {
            return Ok(None);
        };
        match self.store.redeem(TokenId::of(token), self.ttl).await {
            Ok(Redemption::First) => Ok(None),
            Ok(Redemption::Completed(text)) => {
                tracing::debug!("a retry of a completed single-use round: its stored result");
                let result: CallToolResult = serde_json::from_str(&text).map_err(store_failed)?;
                Ok(Some(CallToolOutcome::Complete(result)))
            }
            Ok(Redemption::Spent) => {
                tracing::warn!(
                    target: "tern_mcp::seal",
                    reason = "replayed",
                    "rejected requestState"
                );
                Err(RpcError::invalid_request_state())
            }
            Err(e) => Err(store_failed(e)),
        }
    }

    /// Keeps a completed flow's result for a retry of its last round.
    pub(crate) async fn finish(
        &self,
        ctx: &RequestContext,
        outcome: &CallToolOutcome,
    ) -> Result<(), RpcError> {
        let (Some(token), CallToolOutcome::Complete(result)) = (ctx.sealed_state(), outcome) else {
            return Ok(());
        };
        let text = serde_json::to_string(result).map_err(store_failed)?;
        self.store
            .complete(TokenId::of(token), text, self.ttl)
            .await
            .map_err(store_failed)
    }
}
