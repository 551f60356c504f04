//! Serving a [`Server`] on a message transport (in-memory, stdio): one task per request,
//! cancellation by `notifications/cancelled`, one writer so a request's notifications
//! always precede its response.
//!
//! Both eras are served: a request carrying the 2026-07-28 `_meta` is served
//! statelessly, and `initialize` opens a 2025-11-25 session for the connection, whose
//! requests (without that `_meta`) are served with the session's capabilities, and whose
//! responses answer the server's own requests to the client.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, Incoming, RpcError};
use crate::server::{IncomingRequest, Outbound, Server, Session};
use crate::transport::MessageTransport;
use crate::types::rpc::{Notification as _, Request as _};
use crate::types::v2025_11_25::method as session_method;
use crate::types::v2026_07_28::method;
use crate::util::InFlight;

/// How long requests already read may run on after a message transport's input ends
/// (stdin closed) before they are cancelled: 10 s.
pub const END_OF_INPUT_DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

impl Server {
    /// Serves requests arriving on `transport` until the peer goes away. In-flight
    /// handlers are cancelled when it does.
    pub async fn serve<T: MessageTransport>(&self, transport: T) -> crate::Result<()> {
        let (sink, mut source) = transport.split();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            while let Some(message) = out_rx.recv().await {
                if let Err(e) = sink.send(message).await {
                    tracing::debug!(error = %e, "the client went away while we were writing");
                    break;
                }
            }
        });
        let in_flight = InFlight::default();
        let mut session: Option<Session> = None;
        let mut forwarder: Option<tokio::task::JoinHandle<()>> = None;
        while let Some(message) = source.recv().await {
            let text = match message {
                Ok(t) => t,
                Err(e) if e.is_skipped() => {
                    // One message was too large to read; the transport goes on.
                    tracing::warn!(error = %e, "skipped a message");
                    let error = RpcError::invalid_request(format!("Invalid Request: {e}"));
                    let _ = out_tx.send(jsonrpc::response(None, &Err(error)));
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "transport failed");
                    break;
                }
            };
            match Incoming::read_within(text.as_bytes(), self.json_limits()) {
                Err(rejected) => {
                    let _ = out_tx.send(jsonrpc::response(
                        rejected.id.as_ref(),
                        &Err(rejected.error),
                    ));
                }
                Ok(Incoming::Request { id, method, params }) => {
                    let request = IncomingRequest::from_raw(id, method, params);
                    let mut accepted = self.accept(request);
                    if accepted.malformed() {
                        let rejected = Incoming::rejection(text.as_bytes());
                        let error = Err(rejected.error);
                        let _ = out_tx.send(jsonrpc::response(rejected.id.as_ref(), &error));
                        continue;
                    }
                    // Before `initialize` a request carrying the 2026-07-28 `_meta` is
                    // stateless; once a session is open, every request belongs to it.
                    let modern = accepted.names_protocol_version() && session.is_none();
                    if accepted.method() == session_method::Initialize::METHOD && !modern {
                        let params = accepted
                            .params()
                            .and_then(|p| serde_json::from_str(p.get()).ok());
                        let result = self.open_connection_session(params.as_ref(), &mut session);
                        if let (Ok(_), Some(s)) = (&result, &session) {
                            // The session's notifications outside any request share
                            // the connection's writer.
                            // The writer ends when every sender is gone: this one is
                            // dropped when the loop below aborts the task.
                            let out = out_tx.clone();
                            let forward = s
                                .clone()
                                .forward_events(self.events(), move |m| out.send(m).is_ok());
                            forwarder = Some(tokio::spawn(forward));
                        }
                        let _ = out_tx.send(jsonrpc::response(Some(accepted.id()), &result));
                        continue;
                    }
                    if let Some(s) = &session {
                        if let Some(own) = s.answer_own(accepted.method(), accepted.params()) {
                            let _ = out_tx.send(jsonrpc::response(Some(accepted.id()), &own));
                            continue;
                        }
                        accepted = accepted.on_session(s);
                    }
                    spawn_request(accepted, &in_flight, &out_tx);
                }
                Ok(Incoming::Notification {
                    method: name,
                    params,
                }) => {
                    if name == method::Cancelled::METHOD {
                        in_flight.cancel(params.as_ref());
                    } else {
                        tracing::trace!(method = name, "ignoring a client notification");
                    }
                }
                Ok(Incoming::Response { id, result }) => match &session {
                    Some(s) => s.answer(&id, result),
                    None => tracing::debug!("ignoring a response outside a 2025-11-25 session"),
                },
            }
        }
        // The input ended: no answer to a session's own requests can come any more,
        // but the requests already read are served (each task holds a sender, so the
        // writer ends when the last one is done), for at most END_OF_INPUT_DRAIN.
        if let Some(s) = &session {
            s.close();
        }
        if let Some(forwarder) = forwarder {
            forwarder.abort();
        }
        drop(out_tx);
        let mut writer = writer;
        if tokio::time::timeout(END_OF_INPUT_DRAIN, &mut writer)
            .await
            .is_err()
        {
            tracing::warn!("requests still running after the input ended: cancelling them");
            in_flight.cancel_all();
            let _ = writer.await;
        }
        Ok(())
    }

    /// Answers `initialize`: opens the connection's 2025-11-25 session, once.
    fn open_connection_session(
        &self,
        params: Option<&Value>,
        session: &mut Option<Session>,
    ) -> Result<Value, RpcError> {
        if session.is_some() {
            return Err(RpcError::invalid_request(
                "Invalid Request: the session is already initialized",
            ));
        }
        let (opened, result) = self.open_session(params)?;
        *session = Some(opened);
        Ok(result)
    }
}

/// Serves one request in a task of its own, so a slow handler holds up no other
/// request; its response goes to the connection's one writer.
fn spawn_request(
    accepted: crate::server::Accepted,
    in_flight: &InFlight,
    out_tx: &mpsc::UnboundedSender<String>,
) {
    let cancel = CancellationToken::new();
    let id = accepted.id().clone();
    let tracked = in_flight.track(&id, cancel.clone());
    let out = out_tx.clone();
    let accepted = accepted
        .with_cancel(cancel.clone())
        .with_outbound(Some(Outbound::from(out.clone())));
    tokio::spawn(async move {
        let _tracked = tracked;
        let result = tokio::select! {
            verdict = accepted.serve() => verdict.into_result(),
            () = cancel.cancelled() => {
                // A cancelled request gets no response.
                return;
            }
        };
        let _ = out.send(jsonrpc::answer(&id, &result));
    });
}
