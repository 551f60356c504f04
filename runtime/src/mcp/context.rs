//! What a tool, prompt or resource-template function sees of its request.

use std::ops::Deref;

use crate::server::RequestContext;
use crate::types::v2026_07_28::InputResponses;

/// The context of a tool, prompt or resource-template call in the direct form: the
/// request (progress, cancellation, client capabilities, auth) and, on a retry, the
/// client's answers and the plaintext state written in the previous round.
///
/// Dereferences to [`RequestContext`].
#[derive(Debug, Clone)]
pub struct ToolContext {
    request: RequestContext,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
    detach: Option<std::sync::Arc<super::detach::Detach>>,
}

impl ToolContext {
    pub(crate) fn new(
        request: RequestContext,
        input_responses: Option<InputResponses>,
        request_state: Option<String>,
    ) -> Self {
        Self {
            request,
            input_responses,
            request_state,
            detach: None,
        }
    }

    pub(crate) fn with_detach(
        mut self,
        detach: Option<std::sync::Arc<super::detach::Detach>>,
    ) -> Self {
        self.detach = detach;
        self
    }

    /// Makes the call a task from here on, for a tool registered with
    /// [`TaskSupport::on_request`](crate::tasks::TaskSupport::on_request): the client is answered
    /// with the task (once it is stored) and this function runs on, its result the
    /// task's. Returns whether the call is a task now: `false` when it cannot be one
    /// (the request did not declare the extension, or arrived on a 2025-11-25 session),
    /// and the call goes on inline. Fails when the task could not be stored.
    pub async fn continue_as_task(&self) -> Result<bool, crate::jsonrpc::RpcError> {
        match &self.detach {
            Some(detach) => detach.request().await,
            None => Ok(false),
        }
    }

    /// The client's answers to the previous round's `inputRequests`, under the same
    /// keys; `None` on the first call.
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.input_responses.as_ref()
    }

    /// The state this function wrote in the previous round, as plaintext (the server
    /// sealed it on the way out and verified it on the way back); `None` on the first call.
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }
}

impl Deref for ToolContext {
    type Target = RequestContext;
    fn deref(&self) -> &RequestContext {
        &self.request
    }
}
