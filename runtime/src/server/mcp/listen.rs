//! `subscriptions/listen` on an [`McpServer`]: the acknowledgement, then the list
//! changes the client asked for, until it cancels.

use serde_json::json;
use tokio::sync::broadcast;

use super::McpServer;
use super::registry::ListChange;
use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::transport::BoxFuture;
use crate::types::rpc::Notification as _;
use crate::types::v2026_07_28::{
    SubscriptionsListenRequestParams, SubscriptionsListenResult, method,
};

impl McpServer {
    pub(super) fn listen(
        self,
        ctx: RequestContext,
        params: SubscriptionsListenRequestParams,
    ) -> BoxFuture<'static, Result<SubscriptionsListenResult, RpcError>> {
        let mut rx = self.inner.changes.subscribe();
        Box::pin(async move {
            let id = match ctx.id() {
                crate::types::v2026_07_28::RequestId::String(s) => s.clone(),
                crate::types::v2026_07_28::RequestId::Integer(i) => i.to_string(),
            };
            let meta = json!({ "io.modelcontextprotocol/subscriptionId": id });
            let filter = params.notifications;
            let wants = |change: ListChange| match change {
                ListChange::Tools => filter.tools_list_changed == Some(true),
                ListChange::Prompts => filter.prompts_list_changed == Some(true),
                ListChange::Resources => filter.resources_list_changed == Some(true),
            };
            let accepted = json!({
                "toolsListChanged": filter.tools_list_changed == Some(true),
                "promptsListChanged": filter.prompts_list_changed == Some(true),
                "resourcesListChanged": filter.resources_list_changed == Some(true),
            });
            ctx.notify_value(
                method::SubscriptionsAcknowledged::METHOD,
                json!({ "_meta": meta, "notifications": accepted }),
            );
            loop {
                tokio::select! {
                    () = ctx.cancellation().cancelled() => break,
                    change = rx.recv() => match change {
                        Ok(c) if wants(c) => {
                            let changed = match c {
                                ListChange::Tools => method::ToolListChanged::METHOD,
                                ListChange::Prompts => method::PromptListChanged::METHOD,
                                ListChange::Resources => method::ResourceListChanged::METHOD,
                            };
                            ctx.notify_value(changed, json!({ "_meta": meta }));
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => break,
                    },
                }
            }
            serde_json::from_value(json!({ "resultType": "complete", "_meta": meta }))
                .map_err(|e| RpcError::internal(format!("Internal error: {e}")))
        })
    }
}
