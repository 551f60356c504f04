//! A POST's answer as a stream: the handler's notifications as SSE events as they come,
//! then its response. Outside a session the stream is the response body (closing it
//! cancels the handler); on a session the handler's messages go to the session's event
//! store and the body reads them from there, so a client that lost the stream resumes.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures_util::FutureExt as _;
use http::HeaderValue;
use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE};
use tokio_util::sync::DropGuard;

use super::stream::SessionStreams;
use crate::jsonrpc::{self, RpcError};
use crate::server::ResultText;
use crate::server::caught_panic;
use crate::server::middleware::Dispatched;
use crate::server::outbound::Messages;
use crate::transport::BoxFuture;
use crate::transport::http::fields::Fields;
use crate::types::v2026_07_28::RequestId;

/// The handler's answer, still running.
pub(super) type Outcome = BoxFuture<'static, Dispatched>;

/// Whether the client accepts JSON and SSE (a missing `Accept` accepts both).
pub(super) fn accepts(headers: &impl Fields) -> (bool, bool) {
    let Some(accept) = headers.get(&ACCEPT) else {
        return (true, true);
    };
    // What MCP clients send, as the spec words it.
    if accept == b"application/json, text/event-stream" {
        return (true, true);
    }
    let Ok(accept) = std::str::from_utf8(accept) else {
        return (false, false);
    };
    // Each media range, its parameters (`;q=...`) aside; media types ignore case.
    let (mut json, mut sse) = (false, false);
    for range in accept.split(',') {
        let range = range.split(';').next().unwrap_or_default().trim();
        let is = |media: &str| range.eq_ignore_ascii_case(media);
        let any = is("*/*");
        json |= any || is("application/json") || is("application/*");
        sse |= any || is("text/event-stream") || is("text/*");
    }
    (json, sse)
}

/// An SSE response in progress: the handler, its notifications, and the response once
/// it is known.
pub(super) struct SseState {
    pub(super) id: RequestId,
    outcome: Option<Outcome>,
    rx: Messages,
    pub(super) guard: Option<DropGuard>,
    /// Notifications read and not yet written.
    pub(super) pending: VecDeque<String>,
    /// The response, once the handler answered.
    pub(super) finished: Option<Result<ResultText, RpcError>>,
}

impl SseState {
    pub(super) fn new(id: RequestId, outcome: Outcome, rx: Messages, guard: DropGuard) -> Self {
        Self {
            id,
            outcome: Some(outcome),
            rx,
            guard: Some(guard),
            pending: VecDeque::new(),
            finished: None,
        }
    }

    pub(super) fn drain(&mut self) {
        while let Some(n) = self.rx.try_recv() {
            self.pending.push_back(n);
        }
    }

    /// The next chunk of the stream, or `None` after the response.
    async fn next(&mut self) -> Option<Bytes> {
        Some(event(&self.next_message().await?))
    }

    /// The next message of the stream, or `None` after the response.
    async fn next_message(&mut self) -> Option<String> {
        if self.finished.is_none() && self.pending.is_empty() {
            let outcome = self.outcome.as_mut()?;
            tokio::select! {
                biased;
                Some(n) = self.rx.recv() => self.pending.push_back(n),
                // A handler that panics once its stream began: its answer is -32603.
                dispatched = AssertUnwindSafe(outcome).catch_unwind() => {
                    self.finished = Some(match dispatched {
                        Ok(dispatched) => dispatched.into_verdict().into_result(),
                        Err(panic) => Err(caught_panic(&*panic)),
                    });
                    self.drain();
                }
            }
        }
        if let Some(n) = self.pending.pop_front() {
            return Some(n);
        }
        let result = self.finished.take()?.map(ResultText::into_string);
        self.outcome = None;
        let _ = self.guard.take().map(DropGuard::disarm);
        Some(jsonrpc::answer(&self.id, &result))
    }
}

fn event(message: &str) -> Bytes {
    // serde_json writes no raw newlines, so one `data:` line holds the whole message.
    let mut out = String::with_capacity(message.len() + 24);
    out.push_str("event: message\ndata: ");
    out.push_str(message);
    out.push_str("\n\n");
    Bytes::from(out)
}

/// A session's SSE response: a task writes the handler's messages into the session's
/// stream store, and the response reads them from there, so a dropped connection
/// loses nothing and the handler goes on (the client resumes with `Last-Event-ID`).
pub(super) async fn session_sse(
    mut state: SseState,
    streams: &Arc<SessionStreams>,
) -> Result<Response, crate::StoreError> {
    let (stream, from) = streams.open_request_stream().await?;
    let writer = Arc::clone(streams);
    tokio::spawn(async move {
        while let Some(message) = state.next_message().await {
            writer.append(&stream, &message).await;
        }
        writer.end_stream(&stream).await;
    });
    Ok(streams.respond(from))
}

pub(super) fn sse(state: SseState) -> Response {
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        let chunk = state.next().await?;
        Some((Ok::<_, Infallible>(chunk), state))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let h = response.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;

    fn accepting(value: Option<&str>) -> (bool, bool) {
        let mut headers = HeaderMap::new();
        if let Some(value) = value {
            headers.insert(http::header::ACCEPT, value.parse().expect("a header value"));
        }
        accepts(&headers)
    }

    #[test]
    fn each_media_range_is_read_whole_whatever_its_case_and_parameters() {
        let cases = [
            (None, (true, true)),
            (Some("application/json, text/event-stream"), (true, true)),
            (Some("Application/JSON;q=0.9"), (true, false)),
            (Some("text/event-stream"), (false, true)),
            (Some("text/*;q=0.1, application/*"), (true, true)),
            (Some("*/*"), (true, true)),
            (
                Some("application/json-seq, text/event-streams"),
                (false, false),
            ),
            (Some("text/html"), (false, false)),
        ];
        for (accept, expected) in cases {
            assert_eq!(accepting(accept), expected, "{accept:?}");
        }
    }
}
