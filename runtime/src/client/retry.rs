//! Every retry the client makes, in one place and in the order they are tried.
//!
//! A transport sends a request once and reports how it failed; only this module decides
//! whether the request goes out again. Each retry is tried at most once per call (a busy
//! server's, three times), and only when its refusal is the one named:
//!
//! 1. **Tool headers** ([`Retry::ToolHeaders`]): a `tools/call` refused over HTTP with
//!    -32020 `HeaderMismatch`. The tool's `x-mcp-header` annotations may have changed
//!    since the transport learned them, so it re-reads `tools/list`
//!    ([`HttpHooks::refresh_tool_headers`], at most 10 pages); the call is sent
//!    once more only if the tool's headers changed.
//! 2. **Session gone** ([`Retry::SessionGone`]): HTTP 404 to a request in a 2025-11-25
//!    session, which the server no longer knows (it expired, or the server restarted).
//!    The transport opens a new session with the same `initialize`
//!    ([`HttpHooks::reopen_session`], shared by concurrent requests that hit the
//!    same 404), and the request is sent once more.
//! 3. **Version refused** ([`Retry::VersionRefused`]): in 2026-07-28, -32022
//!    `UnsupportedProtocolVersion` whose `supported` lists the version tern speaks (a
//!    load balancer may have reached an older instance). Sent once more as it was.
//! 4. **Busy** ([`Retry::Busy`]): HTTP 503 or 429 with a `Retry-After` of at most
//!    [`MAX_RETRY_AFTER`]: the server did not take the request. Sent again after that
//!    wait, up to three times.
//!
//! A retry is a new request (a new id) with the same method, params and progress
//! channel. When a mend fails, its error is the call's; when it finds nothing to mend,
//! the refusal is. The rounds of an input-required result are no retry (the server
//! asked; see `input_loop`), nor is discovery's fallback to a session (`discovery`).

use serde_json::{Value, json};

use crate::jsonrpc::{RpcError, code};
use crate::protocol::PROTOCOL_VERSION;
use crate::transport::{CallError, ClientTransport, EncodedRequest};

/// A reason to send a refused request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// -32020 on `tools/call` over HTTP: re-read the tool headers, resend if they changed.
    ToolHeaders,
    /// HTTP 404 in a 2025-11-25 session: open a new session, resend.
    SessionGone,
    /// -32022 listing our version, in 2026-07-28: resend.
    VersionRefused,
    /// 503 or 429 with a short `Retry-After`: wait, resend.
    Busy,
}

/// The longest `Retry-After` a busy server may ask the client to wait out; a longer one
/// is the caller's error to handle.
const MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

impl Retry {
    /// Every retry, in the order they are tried.
    const ORDER: [Retry; 4] = [
        Self::ToolHeaders,
        Self::SessionGone,
        Self::VersionRefused,
        Self::Busy,
    ];

    /// How many times one call may take this retry.
    fn times(self) -> usize {
        match self {
            Self::Busy => 3,
            _ => 1,
        }
    }

    /// The wait a busy server asked for, if `refusal` is one and the wait is short.
    fn busy_wait(refusal: &CallError) -> Option<std::time::Duration> {
        let CallError::Transport(t) = refusal else {
            return None;
        };
        let wait =
            t.0.retry_after
                .filter(|_| matches!(t.http_status(), Some(429 | 503)))?;
        (wait <= MAX_RETRY_AFTER).then_some(wait)
    }

    /// Whether `refusal` of a request for `method`, by a client that holds a session
    /// or not, calls for this retry.
    fn answers(self, refusal: &CallError, method: &str, on_session: bool) -> bool {
        match self {
            Self::ToolHeaders => {
                crate::protocol::says(method, |m| m.param_headers)
                    && matches!(refusal, CallError::Transport(t)
                        if t.rpc_error().is_some_and(|e| e.code == code::HEADER_MISMATCH))
            }
            Self::SessionGone => {
                on_session
                    && matches!(refusal, CallError::Transport(t) if t.http_status() == Some(404))
            }
            Self::VersionRefused => {
                !on_session && refusal.rpc_error().is_some_and(lists_our_version)
            }
            Self::Busy => Self::busy_wait(refusal).is_some(),
        }
    }

    /// Has the transport mend what the refusal named; whether sending again can help.
    async fn mend(
        self,
        transport: &dyn ClientTransport,
        params: &str,
        refusal: &CallError,
    ) -> Result<bool, CallError> {
        match (self, transport.http_hooks()) {
            // What only an HTTP transport owns: nothing to mend on any other.
            (Self::ToolHeaders | Self::SessionGone, None) => Ok(false),
            (Self::ToolHeaders, Some(http)) => {
                // Only a refused call pays for reading its params back.
                let params: Value = serde_json::from_str(params).unwrap_or_default();
                let tool = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let meta = params.get("_meta").cloned().unwrap_or_else(|| json!({}));
                http.refresh_tool_headers(tool, &meta).await
            }
            (Self::SessionGone, Some(http)) => http.reopen_session().await,
            (Self::VersionRefused, _) => Ok(true),
            (Self::Busy, _) => {
                tokio::time::sleep(Self::busy_wait(refusal).unwrap_or_default()).await;
                Ok(true)
            }
        }
    }
}

/// Sends `request` through `transport` for a client that holds a session or not,
/// retrying it as the module says.
pub(crate) async fn send(
    transport: &dyn ClientTransport,
    on_session: bool,
    request: EncodedRequest<'_>,
) -> Result<crate::jsonrpc::RawResult, CallError> {
    let mut outcome = transport.request_encoded(request).await;
    let mut tried = Vec::new();
    while let Err(refusal) = &outcome {
        let taken = |r: Retry| tried.iter().filter(|t| **t == r).count();
        let Some(retry) = Retry::ORDER
            .into_iter()
            .find(|r| taken(*r) < r.times() && r.answers(refusal, request.method, on_session))
        else {
            break;
        };
        tried.push(retry);
        if !retry.mend(transport, request.params, refusal).await? {
            break;
        }
        tracing::debug!(method = request.method, ?retry, error = %refusal, "sending a refused request again");
        let id = transport.next_id();
        outcome = transport
            .request_encoded(EncodedRequest { id: &id, ..request })
            .await;
    }
    outcome
}

/// Whether a -32022 (unsupported protocol version) refusal lists the version tern
/// speaks among the server's supported ones, so that sending again can succeed.
fn lists_our_version(error: &RpcError) -> bool {
    error.code == code::UNSUPPORTED_PROTOCOL_VERSION
        && error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
            .is_some_and(|versions| {
                versions
                    .iter()
                    .any(|v| v.as_str() == Some(PROTOCOL_VERSION))
            })
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;
    use crate::Era;
    use crate::transport::{BoxFuture, OutgoingRequest, TransportError};
    use crate::types::rpc::Request as _;
    use crate::types::v2026_07_28::RequestId;
    use crate::types::v2026_07_28::method::CallTool;
    use crate::util::lock;

    /// Answers requests from a script and records what the policy asked of it.
    #[derive(Default)]
    struct Scripted {
        answers: Mutex<VecDeque<Result<Value, CallError>>>,
        /// What each mend resolves to.
        mends: Mutex<VecDeque<Result<bool, CallError>>>,
        sent: Mutex<Vec<RequestId>>,
        mended: Mutex<Vec<&'static str>>,
        next_id: AtomicI64,
    }

    impl Scripted {
        fn new(
            answers: impl IntoIterator<Item = Result<Value, CallError>>,
            mends: impl IntoIterator<Item = Result<bool, CallError>>,
        ) -> Self {
            Self {
                answers: Mutex::new(answers.into_iter().collect()),
                mends: Mutex::new(mends.into_iter().collect()),
                next_id: AtomicI64::new(100),
                ..Self::default()
            }
        }

        fn mend(&self, what: &'static str) -> BoxFuture<'_, Result<bool, CallError>> {
            lock(&self.mended).push(what);
            let mended = lock(&self.mends).pop_front().unwrap_or(Ok(false));
            Box::pin(async move { mended })
        }
    }

    impl ClientTransport for Scripted {
        fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>> {
            lock(&self.sent).push(request.id);
            let answer = lock(&self.answers).pop_front().unwrap_or(Ok(json!({})));
            Box::pin(async move { answer })
        }
        fn notify(
            &self,
            _method: &str,
            _params: Option<Value>,
        ) -> BoxFuture<'_, Result<(), TransportError>> {
            Box::pin(async { Ok(()) })
        }
        fn next_id(&self) -> RequestId {
            RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed))
        }
        fn http_hooks(&self) -> Option<&dyn crate::transport::HttpHooks> {
            Some(self)
        }
    }

    impl crate::transport::HttpHooks for Scripted {
        fn reopen_session(&self) -> BoxFuture<'_, Result<bool, CallError>> {
            self.mend("session")
        }
        fn refresh_tool_headers<'a>(
            &'a self,
            _tool: &'a str,
            _meta: &'a Value,
        ) -> BoxFuture<'a, Result<bool, CallError>> {
            self.mend("tools")
        }
    }

    fn version_refusal() -> Result<Value, CallError> {
        let data = json!({"supported": [PROTOCOL_VERSION], "requested": PROTOCOL_VERSION});
        Err(
            RpcError::new(code::UNSUPPORTED_PROTOCOL_VERSION, "unsupported")
                .with_data(data)
                .into(),
        )
    }

    fn http_refusal(status: u16, rpc: Option<RpcError>) -> Result<Value, CallError> {
        Err(TransportError::http(status, "refused", rpc).into())
    }

    fn header_refusal() -> Result<Value, CallError> {
        http_refusal(400, Some(RpcError::header_mismatch("Mcp-Param-Region")))
    }

    async fn send_call(transport: &Scripted, era: Era) -> Result<Value, CallError> {
        let id = RequestId::Integer(1);
        let request = EncodedRequest {
            id: &id,
            method: CallTool::METHOD,
            params: r#"{"name":"sql","arguments":{}}"#,
            target: Some("sql"),
            protocol_version: Some(PROTOCOL_VERSION),
            notifications: None,
        };
        let answer = send(transport, era == Era::Session, request).await?;
        Ok(serde_json::from_str(answer.get()).unwrap())
    }

    #[tokio::test]
    async fn a_version_refusal_listing_our_version_is_sent_once_more_under_a_new_id() {
        let transport = Scripted::new([version_refusal(), Ok(json!({"ok": true}))], []);
        let answer = send_call(&transport, Era::Stateless).await.unwrap();
        assert_eq!(answer, json!({"ok": true}));
        assert_eq!(
            *lock(&transport.sent),
            [RequestId::Integer(1), RequestId::Integer(100)]
        );
    }

    #[tokio::test]
    async fn each_retry_is_tried_at_most_once_per_call() {
        let transport = Scripted::new([version_refusal(), version_refusal()], []);
        let refused = send_call(&transport, Era::Stateless).await.unwrap_err();
        assert!(
            refused.rpc_error().is_some_and(lists_our_version),
            "{refused}"
        );
        assert_eq!(lock(&transport.sent).len(), 2);
    }

    #[tokio::test]
    async fn a_header_refusal_is_sent_again_only_when_the_tool_headers_changed() {
        let unchanged = Scripted::new([header_refusal()], [Ok(false)]);
        let refused = send_call(&unchanged, Era::Stateless).await.unwrap_err();
        assert_eq!(
            refused.rpc_error().map(|e| e.code),
            Some(code::HEADER_MISMATCH)
        );
        assert_eq!(lock(&unchanged.sent).len(), 1);

        let changed = Scripted::new([header_refusal(), Ok(json!({}))], [Ok(true)]);
        send_call(&changed, Era::Stateless).await.unwrap();
        assert_eq!(*lock(&changed.mended), ["tools"]);
        assert_eq!(lock(&changed.sent).len(), 2);
    }

    #[tokio::test]
    async fn a_404_is_sent_again_in_a_new_session_but_not_outside_one() {
        let session = Scripted::new([http_refusal(404, None), Ok(json!({}))], [Ok(true)]);
        send_call(&session, Era::Session).await.unwrap();
        assert_eq!(*lock(&session.mended), ["session"]);

        let stateless = Scripted::new([http_refusal(404, None)], [Ok(true)]);
        send_call(&stateless, Era::Stateless).await.unwrap_err();
        assert!(lock(&stateless.mended).is_empty());
        assert_eq!(lock(&stateless.sent).len(), 1);
    }

    #[tokio::test]
    async fn a_mend_that_fails_is_the_calls_error() {
        let broken = Err(TransportError::new("re-reading the tool list failed").into());
        let transport = Scripted::new([header_refusal()], [broken]);
        let err = send_call(&transport, Era::Stateless).await.unwrap_err();
        assert!(
            err.to_string().contains("re-reading the tool list failed"),
            "{err}"
        );
        assert_eq!(lock(&transport.sent).len(), 1);
    }

    #[tokio::test]
    async fn retries_of_different_kinds_follow_one_another_in_one_call() {
        let transport = Scripted::new(
            [header_refusal(), version_refusal(), Ok(json!({"ok": true}))],
            [Ok(true)],
        );
        let answer = send_call(&transport, Era::Stateless).await.unwrap();
        assert_eq!(answer, json!({"ok": true}));
        assert_eq!(lock(&transport.sent).len(), 3);
    }

    fn busy(status: u16, retry_after: Option<u64>) -> Result<Value, CallError> {
        let mut e = TransportError::http(status, "refused", None);
        e.0.retry_after = retry_after.map(std::time::Duration::from_secs);
        Err(e.into())
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_server_is_asked_again_after_its_retry_after_up_to_three_times() {
        let transport = Scripted::new(
            [
                busy(503, Some(1)),
                busy(429, Some(2)),
                Ok(json!({"ok": true})),
            ],
            [],
        );
        let started = tokio::time::Instant::now();
        let answer = send_call(&transport, Era::Stateless).await.unwrap();
        assert_eq!(answer, json!({"ok": true}));
        assert_eq!(started.elapsed(), std::time::Duration::from_secs(3));
        let always = Scripted::new(
            [
                busy(503, Some(1)),
                busy(503, Some(1)),
                busy(503, Some(1)),
                busy(503, Some(1)),
            ],
            [],
        );
        let refused = send_call(&always, Era::Stateless).await.unwrap_err();
        assert!(matches!(&refused, CallError::Transport(t) if t.http_status() == Some(503)));
        assert_eq!(lock(&always.sent).len(), 4, "the first try and three more");
    }

    #[tokio::test]
    async fn a_busy_refusal_without_a_short_retry_after_is_the_callers() {
        for refusal in [busy(503, None), busy(503, Some(3600)), busy(500, Some(1))] {
            let transport = Scripted::new([refusal], []);
            assert!(send_call(&transport, Era::Stateless).await.is_err());
            assert_eq!(lock(&transport.sent).len(), 1);
        }
    }
}
