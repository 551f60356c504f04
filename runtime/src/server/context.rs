//! What a handler knows about the request it serves, and the channel it arrived on: the
//! seam between the stateless core and the session wing (`server/session/`). A
//! stateless request has no channel; a 2025-11-25 session's requests carry the
//! session's. The core reads the channel's `_meta`, asks the client through it, and
//! hands it the answer to put in its own form; it never asks which era it serves. (The
//! two live in one file because each names the other: a context holds its channel,
//! and a channel's retry carries the context.)

use std::borrow::Cow;
use std::sync::Arc;

use super::state::Binding;
use super::{Outbound, Route};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Era;
use crate::auth::AuthInfo;
use crate::jsonrpc::{RawParams, RpcError};
use crate::protocol::{self, RequestMeta};
use crate::seal::{Principal, Sealer};
use crate::transport::BoxFuture;
use crate::types::rpc::{Notification, Request};
use crate::types::v2026_07_28::{
    self as types, ClientCapabilities, InputRequest, InputRequiredResult, InputResponse,
    LoggingLevel, LoggingMessageNotificationParams, ProgressNotificationParams, ProgressToken,
    RequestId,
};

/// The request a handler serves: who asked, with which capabilities, whether it was
/// cancelled, and a way to send progress and log notifications back on its stream.
#[derive(Clone, Debug)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: RequestId,
    method: Cow<'static, str>,
    meta: RequestMeta,
    auth: Option<AuthInfo>,
    cancel: CancellationToken,
    outbound: Option<Outbound>,
    /// The channel the request arrived on (a 2025-11-25 session's), if not its own.
    channel: Option<Arc<dyn Channel>>,
    /// The sealed `requestState` this round redeemed, as the client sent it (for
    /// single-use tools: its digest names the redemption).
    sealed_state: std::sync::OnceLock<String>,
    /// The client's address, when the transport knows it.
    peer: Option<std::net::IpAddr>,
}

impl RequestContext {
    /// A context for a request that arrived on `channel` (a 2025-11-25 session's), or
    /// on none.
    pub(crate) fn new(
        id: RequestId,
        method: Cow<'static, str>,
        meta: RequestMeta,
        auth: Option<AuthInfo>,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
        channel: Option<Arc<dyn Channel>>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                method,
                meta,
                auth,
                cancel,
                outbound,
                channel,
                sealed_state: std::sync::OnceLock::new(),
                peer: None,
            }),
        }
    }

    /// This context (just made) with the client's address.
    pub(crate) fn with_peer(mut self, peer: Option<std::net::IpAddr>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.peer = peer;
        }
        self
    }

    /// The client's address, when the transport knows it (tern's own HTTP accept loop).
    pub(crate) fn peer(&self) -> Option<std::net::IpAddr> {
        self.inner.peer
    }

    /// This request's context for its body running on as a task: the same caller,
    /// capabilities and `_meta`, cancelled by `cancel` alone, and no stream to send
    /// progress or logs on (tasks have none).
    pub(crate) fn for_task(&self, cancel: CancellationToken) -> Self {
        let i = &self.inner;
        Self::new(
            i.id.clone(),
            i.method.clone(),
            i.meta.clone(),
            i.auth.clone(),
            cancel,
            None,
            None,
        )
        .with_peer(i.peer)
    }

    /// Records the sealed token this round redeemed (once, before the handler runs).
    pub(crate) fn set_sealed_state(&self, token: String) {
        let _ = self.inner.sealed_state.set(token);
    }

    /// The sealed token this round redeemed, if it carried one.
    pub(crate) fn sealed_state(&self) -> Option<&str> {
        self.inner.sealed_state.get().map(String::as_str)
    }

    /// The era of the request: [`Era::Session`] on a 2025-11-25 session, where the
    /// server asks the client with [`request_client`](Self::request_client), and
    /// [`Era::Stateless`] otherwise, where it asks by returning an `InputRequiredResult`.
    pub fn era(&self) -> Era {
        Era::on_session(self.inner.channel.is_some())
    }

    /// The bounds of the input rounds this request may drive over its channel (a
    /// 2025-11-25 session's); `None` without one.
    pub(crate) fn channel_input_limits(&self) -> Option<crate::protocol::rounds::RoundLimits> {
        self.inner.channel.as_ref().map(|c| c.input_limits())
    }

    /// Sends request `M` to the client and waits for its result: on a 2025-11-25
    /// session only, the way that era's servers ask (the input methods
    /// `elicitation/create`, `sampling/createMessage` and `roots/list` of
    /// [`method`](crate::types::v2026_07_28::method), whose payloads the eras share,
    /// or `ping` from [`v2025_11_25::method`](crate::types::v2025_11_25::method)).
    ///
    /// Fails with -32601 in 2026-07-28, which has no server-to-client requests (return
    /// an `InputRequiredResult` instead), with -32021 when an input request needs a
    /// capability the session did not declare, and with the client's error when it
    /// refuses or answers with a malformed result. Dropping the future withdraws the
    /// request.
    pub async fn request_client<M: Request>(
        &self,
        params: M::Params,
    ) -> Result<M::Result, RpcError> {
        let params = serde_json::to_value(params)
            .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?;
        let answer = self.request_client_value(M::METHOD, params).await?;
        M::Result::deserialize(&answer).map_err(|e| {
            RpcError::invalid_params(format!(
                "The client's {} result is malformed: {e}",
                M::METHOD
            ))
        })
    }

    /// [`request_client`](Self::request_client) for a method known only by name.
    async fn request_client_value(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let Some(channel) = &self.inner.channel else {
            return Err(RpcError::new(
                crate::jsonrpc::code::METHOD_NOT_FOUND,
                format!(
                    "{method}: 2026-07-28 has no server-to-client requests; \
                     return an InputRequiredResult instead"
                ),
            ));
        };
        if types::method::info(method).is_some_and(|m| m.input_request) {
            let request: InputRequest =
                serde_json::from_value(json!({ "method": method, "params": params.clone() }))
                    .map_err(|e| {
                        RpcError::invalid_params(format!("Invalid {method} params: {e}"))
                    })?;
            if let Some(missing) =
                protocol::missing_capability(&request, self.client_capabilities())
            {
                return Err(RpcError::missing_capability(&missing));
            }
        }
        let Some(out) = &self.inner.outbound else {
            return Err(RpcError::internal(format!(
                "{method}: this request's transport cannot carry a request to the client"
            )));
        };
        channel.ask(out, method, params).await
    }

    /// Asks the client `request` (the payload an `InputRequiredResult` would carry) as a
    /// 2025-11-25 server-to-client request, and decodes its answer. Errors as
    /// [`request_client`](Self::request_client).
    pub async fn request_input(&self, request: &InputRequest) -> Result<InputResponse, RpcError> {
        let method = request.method();
        let params = serde_json::to_value(request)
            .map_err(|e| RpcError::internal(format!("Internal error: {e}")))?
            .get_mut("params")
            .map(Value::take)
            .unwrap_or_else(|| json!({}));
        let answer = self.request_client_value(method, params).await?;
        InputResponse::decode_for(method, &answer).map_err(|e| {
            RpcError::invalid_params(format!("The client's {method} result is malformed: {e}"))
        })
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

    /// The client's capabilities, as declared on this request.
    pub(crate) fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// The identity of a validated access token, when the transport authenticated one.
    pub fn auth(&self) -> Option<&AuthInfo> {
        self.inner.auth.as_ref()
    }

    /// Cancelled when the client cancels the request or goes away.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Sends `notifications/progress` for this request, if the client asked for progress
    /// (a `progressToken` in `_meta`); otherwise does nothing.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.inner.meta.progress_token else {
            return;
        };
        // A progress that is not a finite number cannot be written as JSON.
        let Some(progress) = serde_json::Number::from_f64(progress) else {
            return;
        };
        let mut params = ProgressNotificationParams::new(progress, token.clone());
        params.total = total.and_then(serde_json::Number::from_f64);
        params.message = message.map(str::to_owned);
        self.notify::<types::method::Progress>(params);
    }

    /// Sends `notifications/message` (a log entry) on this request's stream.
    ///
    /// On a 2026-07-28 request the client opts in per request: the entry is sent only
    /// when `_meta["io.modelcontextprotocol/logLevel"]` is set and `level` is at least
    /// that severe. On a 2025-11-25 session the level the client set with
    /// `logging/setLevel` filters the same way (none set: every entry is sent).
    pub fn log(&self, level: LoggingLevel, data: Value) {
        if !self.wants_log(level) {
            return;
        }
        self.notify::<types::method::LoggingMessage>(LoggingMessageNotificationParams::new(
            data, level,
        ));
    }

    /// Whether the client takes a log entry at `level` on this request's stream (see
    /// [`log`](Self::log)).
    pub(crate) fn wants_log(&self, level: LoggingLevel) -> bool {
        match &self.inner.channel {
            // A session's client chooses once, with `logging/setLevel`.
            Some(channel) => channel.logs(level),
            None => self
                .inner
                .meta
                .log_level
                .is_some_and(|wanted| level >= wanted),
        }
    }

    /// The least severe log level the client may take on this request's stream: a
    /// session's client sets its own with `logging/setLevel` (every entry when none is
    /// set, so `debug`); a 2026-07-28 request names it in its `_meta`, or takes none.
    #[cfg(feature = "http-client")]
    pub(crate) fn log_floor(&self) -> Option<LoggingLevel> {
        match &self.inner.channel {
            Some(_) => Some(LoggingLevel::Debug),
            None => self.inner.meta.log_level,
        }
    }

    /// Sends notification `N` on this request's stream.
    pub fn notify<N: Notification>(&self, params: N::Params) {
        match serde_json::to_value(params) {
            Ok(params) => self.notify_value(N::METHOD, params),
            Err(e) => {
                tracing::error!(method = N::METHOD, error = %e, "could not encode a notification")
            }
        }
    }

    /// Sends a notification known only by name (for instance an extension's) on this
    /// request's stream.
    pub(crate) fn notify_value(&self, method: &str, params: Value) {
        if let Some(out) = &self.inner.outbound {
            // The stream may be gone already; a notification to nobody is not an error.
            let _ = out.send(crate::jsonrpc::notification(method, Some(params)));
        }
    }
}

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

    /// The bounds of the input rounds a request drives over the channel.
    fn input_limits(&self) -> crate::protocol::rounds::RoundLimits;

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
