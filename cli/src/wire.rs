//! The connection's frames, watched: `--trace` prints each (`> ` sent, `< ` received,
//! compact JSON, one a line, in order), and the last round that asked for input is
//! remembered, so answers typed for it survive a connection that fails before the
//! retry (see `run::keep_unsent`). A message transport (stdio) is watched frame by
//! frame; an HTTP transport through its request and notification calls, each written
//! as the JSON-RPC frame it carries.

use std::io::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tern_mcp::client::PendingCall;
use tern_mcp::jsonrpc::RawResult;
use tern_mcp::transport::{
    BoxFuture, CallError, ClientTransport, EncodedRequest, HttpHooks, MessageSink, MessageSource,
    MessageTransport, OutgoingRequest, ServerRequestHandler, TransportError,
};
use tern_mcp::types::v2026_07_28::{InputRequests, RequestId, method};
use tokio::sync::{broadcast, mpsc};

use crate::safe;

/// Whether the rounds of the method `name` may ask for input: the generated method
/// table says.
fn asks_in_rounds(name: &str) -> bool {
    method::info(name).is_some_and(|info| info.may_require_input)
}

/// What the watch keeps and where the trace goes.
#[derive(Debug, Default)]
pub(crate) struct Tap {
    trace: bool,
    flow: Mutex<Flow>,
    /// How many lines the server printed that are not JSON-RPC, and the first of them.
    strays: Mutex<(usize, Option<String>)>,
}

/// The call in flight and its last round that asked.
#[derive(Debug, Default)]
struct Flow {
    /// The id of the last round request sent, its method and its params as first sent
    /// (no answers, no state, no `_meta`).
    sent: Option<(Value, String, Value)>,
    /// Input-required answers this call has had.
    round: usize,
    /// The last round that asked, as the SDK would have kept it.
    asked: Option<PendingCall>,
}

impl Tap {
    pub(crate) fn new(trace: bool) -> Arc<Self> {
        Arc::new(Self {
            trace,
            flow: Mutex::new(Flow::default()),
            strays: Mutex::default(),
        })
    }

    /// How many lines the server printed that are not JSON-RPC messages, and the first.
    pub(crate) fn strays(&self) -> Option<(usize, String)> {
        let strays = self.strays.lock().ok()?;
        Some((strays.0, strays.1.clone()?))
    }

    /// The last round that asked for input, if the call's last answer asked.
    pub(crate) fn asked(&self) -> Option<PendingCall> {
        self.flow.lock().ok()?.asked.clone()
    }

    fn print(&self, arrow: char, frame: &str) {
        if self.trace {
            let mut err = std::io::stderr().lock();
            // DEL, C1 and bidi controls as JSON escapes (the line stays the JSON sent);
            // a C0 control, raw only in a frame that is not JSON, shown as `\u{..}`.
            let line = compact(frame);
            let _ = writeln!(err, "{arrow} {}", safe::line(&safe::json(&line)));
        }
    }

    /// A frame the client sends.
    pub(crate) fn sent(&self, frame: &str) {
        self.print('>', frame);
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(frame) else {
            return;
        };
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return;
        };
        let (Some(id), true) = (message.get("id"), asks_in_rounds(method)) else {
            return;
        };
        let mut params = match message.get("params") {
            Some(Value::Object(params)) => params.clone(),
            _ => Map::new(),
        };
        let retry =
            params.remove("inputResponses").is_some() | params.remove("requestState").is_some();
        params.remove("_meta");
        if let Ok(mut flow) = self.flow.lock() {
            if !retry {
                flow.round = 0;
            }
            flow.sent = Some((id.clone(), method.to_owned(), Value::Object(params)));
            // A retry keeps the round it answers until the server says more.
            if !retry {
                flow.asked = None;
            }
        }
    }

    /// A frame the client receives.
    pub(crate) fn received(&self, frame: &str) {
        self.print('<', frame);
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(frame) else {
            if let Ok(mut strays) = self.strays.lock() {
                strays.0 += 1;
                strays
                    .1
                    .get_or_insert_with(|| frame.chars().take(80).collect());
            }
            return;
        };
        let (Some(id), Some(result)) = (message.get("id"), message.get("result")) else {
            return;
        };
        let Ok(mut flow) = self.flow.lock() else {
            return;
        };
        let Some((sent_id, method, params)) = flow.sent.clone() else {
            return;
        };
        if sent_id != *id {
            return;
        }
        let requests = result
            .get("inputRequests")
            .cloned()
            .and_then(|r| serde_json::from_value::<InputRequests>(r).ok())
            .filter(|r| !r.is_empty());
        let Some(input_requests) = requests else {
            flow.asked = None;
            return;
        };
        flow.round += 1;
        // Built as the SDK writes it (the type is its own, closed to literals).
        let pending = serde_json::json!({
            "method": method,
            "params": params,
            "round": flow.round,
            "requestState": result.get("requestState"),
            "inputRequests": input_requests,
        });
        flow.asked = serde_json::from_value::<PendingCall>(pending).ok();
    }
}

/// `text` without the whitespace between JSON tokens (strings kept as they are).
pub(crate) fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// A message transport (stdio) whose frames go past the tap.
pub(crate) struct Watched<T> {
    pub(crate) inner: T,
    pub(crate) tap: Arc<Tap>,
}

struct WatchedSink {
    inner: Box<dyn MessageSink>,
    tap: Arc<Tap>,
}

struct WatchedSource {
    inner: Box<dyn MessageSource>,
    tap: Arc<Tap>,
}

impl<T: MessageTransport> MessageTransport for Watched<T> {
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>) {
        let (sink, source) = self.inner.split();
        (
            Box::new(WatchedSink {
                inner: sink,
                tap: self.tap.clone(),
            }),
            Box::new(WatchedSource {
                inner: source,
                tap: self.tap,
            }),
        )
    }
}

impl MessageSink for WatchedSink {
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>> {
        self.tap.sent(&message);
        self.inner.send(message)
    }
}

impl MessageSource for WatchedSource {
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>> {
        Box::pin(async move {
            let next = self.inner.recv().await;
            if let Some(Ok(frame)) = &next {
                self.tap.received(frame);
            }
            next
        })
    }
}

/// A client transport (HTTP) whose requests, answers and notifications go past the
/// tap, each written as its JSON-RPC frame.
pub(crate) struct WatchedHttp<T> {
    pub(crate) inner: Arc<T>,
    pub(crate) tap: Arc<Tap>,
}

fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

fn request_frame(id: &RequestId, method: &str, params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":{},"params":{}}}"#,
        json_text(id),
        json_text(&method),
        params
    )
}

fn notification_frame(method: &str, params: Option<&Value>) -> String {
    match params {
        Some(params) if !params.is_null() => format!(
            r#"{{"jsonrpc":"2.0","method":{},"params":{}}}"#,
            json_text(&method),
            json_text(params)
        ),
        _ => format!(r#"{{"jsonrpc":"2.0","method":{}}}"#, json_text(&method)),
    }
}

fn answer_frame(id: &str, answer: Result<&str, &tern_mcp::jsonrpc::RpcError>) -> String {
    match answer {
        Ok(result) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
        Err(error) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{}}}"#,
            json_text(error)
        ),
    }
}

impl<T: ClientTransport> WatchedHttp<T> {
    /// Runs `call`, the request's notifications shown (and passed on to `onward`) as
    /// they come, then its answer.
    async fn watch<R>(
        &self,
        id: String,
        onward: Option<mpsc::UnboundedSender<Value>>,
        call: impl std::future::Future<Output = Result<R, CallError>>,
        mut seen: mpsc::UnboundedReceiver<Value>,
        text: impl Fn(&R) -> String,
    ) -> Result<R, CallError> {
        tokio::pin!(call);
        let outcome = loop {
            tokio::select! {
                biased;
                Some(notice) = seen.recv() => self.notice(notice, onward.as_ref()),
                outcome = &mut call => break outcome,
            }
        };
        while let Ok(notice) = seen.try_recv() {
            self.notice(notice, onward.as_ref());
        }
        match &outcome {
            Ok(result) => self.tap.received(&answer_frame(&id, Ok(&text(result)))),
            Err(CallError::Rpc(error)) => self.tap.received(&answer_frame(&id, Err(error))),
            Err(CallError::Transport(_)) => {}
        }
        outcome
    }

    fn notice(&self, notice: Value, onward: Option<&mpsc::UnboundedSender<Value>>) {
        let method = notice.get("method").and_then(Value::as_str).unwrap_or("");
        self.tap
            .received(&notification_frame(method, notice.get("params")));
        if let Some(onward) = onward {
            let _ = onward.send(notice);
        }
    }
}

impl<T: ClientTransport> ClientTransport for WatchedHttp<T> {
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move {
            let mut request = request;
            let id = json_text(&request.id);
            self.tap.sent(&request_frame(
                &request.id,
                &request.method,
                &json_text(&request.params),
            ));
            let (tx, seen) = mpsc::unbounded_channel();
            let onward = request.notifications.replace(tx);
            self.watch(id, onward, self.inner.request(request), seen, json_text)
                .await
        })
    }

    fn request_encoded<'a>(
        &'a self,
        request: EncodedRequest<'a>,
    ) -> BoxFuture<'a, Result<RawResult, CallError>> {
        Box::pin(async move {
            let id = json_text(request.id);
            self.tap
                .sent(&request_frame(request.id, request.method, request.params));
            let (tx, seen) = mpsc::unbounded_channel();
            let onward = request.notifications.cloned();
            let mut ours = request;
            ours.notifications = Some(&tx);
            let call = self.inner.request_encoded(ours);
            self.watch(id, onward, call, seen, |r: &RawResult| r.get().to_owned())
                .await
        })
    }

    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        self.tap.sent(&notification_frame(method, params.as_ref()));
        self.inner.notify(method, params)
    }

    fn next_id(&self) -> RequestId {
        self.inner.next_id()
    }

    fn notices(&self) -> Option<broadcast::Receiver<Value>> {
        self.inner.notices()
    }

    fn route_server_requests(&self, handler: ServerRequestHandler) {
        // A server's request on a 2025-11-25 session: the transport keeps its id, so the
        // frames shown here carry none.
        let tap = self.tap.clone();
        let watched: ServerRequestHandler = Arc::new(move |method: String, params| {
            tap.received(&notification_frame(&method, params.as_ref()));
            let (tap, answer) = (tap.clone(), handler(method, params));
            Box::pin(async move {
                let answer = answer.await;
                let frame = match &answer {
                    Ok(result) => format!(r#"{{"jsonrpc":"2.0","result":{}}}"#, json_text(result)),
                    Err(error) => format!(r#"{{"jsonrpc":"2.0","error":{}}}"#, json_text(error)),
                };
                tap.sent(&frame);
                answer
            })
        });
        self.inner.route_server_requests(watched);
    }

    fn known_era(&self) -> Option<tern_mcp::Era> {
        self.inner.known_era()
    }

    fn discovered(&self, era: tern_mcp::Era) {
        self.inner.discovered(era);
    }

    fn may_wait_on_user(&self) -> bool {
        self.inner.may_wait_on_user()
    }

    fn negotiated(&self, era: tern_mcp::Era) {
        self.inner.negotiated(era);
    }

    fn http_hooks(&self) -> Option<&dyn HttpHooks> {
        self.inner.http_hooks()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn compact_drops_the_space_between_tokens_and_keeps_strings() {
        assert_eq!(
            compact("{ \"a\" : [1, 2],\n \"b\": \"x y \\\" z\" }"),
            r#"{"a":[1,2],"b":"x y \" z"}"#
        );
    }

    #[test]
    fn a_round_that_asks_is_kept_with_the_params_first_sent() {
        let tap = Tap::new(false);
        tap.sent(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{}}}"#,
        );
        tap.received(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}},"requestState":"s1"}}"#);
        let asked = tap.asked().unwrap();
        assert_eq!(asked.round, 1);
        assert_eq!(asked.request_state.as_deref(), Some("s1"));
        assert_eq!(asked.params, serde_json::json!({"name": "t"}));
        tap.sent(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","inputResponses":{},"requestState":"s1"}}"#);
        assert_eq!(
            tap.asked().unwrap().round,
            1,
            "kept while the retry is in flight"
        );
        tap.received(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
        assert!(tap.asked().is_none(), "a complete answer asks nothing");
    }
}
