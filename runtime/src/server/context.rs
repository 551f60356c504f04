//! What a handler knows about the request it serves.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::auth::AuthInfo;
use crate::protocol::RequestMeta;
use crate::types::v2026_07_28::{ClientCapabilities, Implementation, ProgressToken, RequestId};

/// The request a handler serves: who asked, with which capabilities, whether it was
/// cancelled, and a way to send progress and log notifications back on its stream.
#[derive(Clone, Debug)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: RequestId,
    method: String,
    meta: RequestMeta,
    auth: Option<AuthInfo>,
    cancel: CancellationToken,
    outbound: Option<mpsc::UnboundedSender<String>>,
}

impl RequestContext {
    pub(crate) fn new(
        id: RequestId,
        method: String,
        meta: RequestMeta,
        auth: Option<AuthInfo>,
        cancel: CancellationToken,
        outbound: Option<mpsc::UnboundedSender<String>>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                method,
                meta,
                auth,
                cancel,
                outbound,
            }),
        }
    }

    /// The JSON-RPC id of this request.
    pub fn id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// What the request's `_meta` said.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The protocol version of this request.
    pub fn protocol_version(&self) -> &str {
        &self.inner.meta.protocol_version
    }

    /// The client's capabilities, as declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// The client software, if it said.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.meta.client_info.as_ref()
    }

    /// The identity of a validated access token, when the transport authenticated one.
    pub fn auth(&self) -> Option<&AuthInfo> {
        self.inner.auth.as_ref()
    }

    /// Cancelled when the client cancels the request or goes away.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Sends `notifications/progress` for this request, if the client asked for progress
    /// (a `progressToken` in `_meta`); otherwise does nothing.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.inner.meta.progress_token else {
            return;
        };
        let token = match token {
            ProgressToken::String(s) => Value::from(s.as_str()),
            ProgressToken::Integer(i) => Value::from(*i),
        };
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(t) = total {
            params["total"] = t.into();
        }
        if let Some(m) = message {
            params["message"] = m.into();
        }
        self.notify("notifications/progress", params);
    }

    /// Sends `notifications/message` (a log entry) on this request's stream.
    pub fn log(&self, level: &str, data: Value) {
        self.notify(
            "notifications/message",
            json!({ "level": level, "data": data }),
        );
    }

    /// Sends any notification on this request's stream.
    pub fn notify(&self, method: &str, params: Value) {
        if let Some(out) = &self.inner.outbound {
            // The stream may be gone already; a notification to nobody is not an error.
            let _ = out.send(crate::jsonrpc::notification(method, Some(params)));
        }
    }
}
