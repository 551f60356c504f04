//! Serving a [`Server`] on a message transport (in-memory, stdio): one task per request,
//! cancellation by `notifications/cancelled`, one writer so a request's notifications
//! always precede its response.
//!
//! Both eras are served: a request carrying the 2026-07-28 `_meta` is served
//! statelessly, and `initialize` opens a 2025-11-25 session for the connection, whose
//! requests (without that `_meta`) are served with the session's capabilities, and whose
//! responses answer the server's own requests to the client.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{IncomingRequest, Server};
use crate::jsonrpc::{self, Incoming, RpcError};
use crate::legacy::LegacySession;
use crate::protocol;
use crate::transport::MessageTransport;
use crate::types::v2026_07_28::RequestId;
use crate::util::InFlight;

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
        let mut session: Option<Arc<LegacySession>> = None;
        while let Some(message) = source.recv().await {
            let text = match message {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(error = %e, "transport failed");
                    break;
                }
            };
            match Incoming::parse(&text) {
                Err(rejected) => {
                    let _ = out_tx.send(jsonrpc::response(
                        rejected.id.as_ref(),
                        &Err(rejected.error),
                    ));
                }
                Ok(Incoming::Request { id, method, params }) => {
                    let modern = is_modern(params.as_ref());
                    if method == "initialize" && !modern {
                        let result = self.open_session(params.as_ref(), &mut session);
                        let _ = out_tx.send(jsonrpc::response(Some(&id), &result));
                        continue;
                    }
                    let on_session = session.clone().filter(|_| !modern);
                    if method == "ping" && on_session.is_some() {
                        let _ = out_tx.send(jsonrpc::response(Some(&id), &Ok(json!({}))));
                        continue;
                    }
                    self.spawn_request(id, method, params, on_session, &in_flight, &out_tx);
                }
                Ok(Incoming::Notification { method, params }) => {
                    if method == "notifications/cancelled" {
                        in_flight.cancel(params.as_ref());
                    } else {
                        tracing::trace!(method, "ignoring a client notification");
                    }
                }
                Ok(Incoming::Response { id, result }) => match &session {
                    Some(s) => s.resolve(&id, result),
                    None => tracing::debug!("ignoring a response outside a 2025-11-25 session"),
                },
            }
        }
        if let Some(s) = &session {
            s.close();
        }
        in_flight.cancel_all();
        drop(out_tx);
        let _ = writer.await;
        Ok(())
    }

    /// Answers `initialize`: opens the connection's 2025-11-25 session, once.
    fn open_session(
        &self,
        params: Option<&Value>,
        session: &mut Option<Arc<LegacySession>>,
    ) -> Result<Value, RpcError> {
        if session.is_some() {
            return Err(RpcError::invalid_request(
                "Invalid Request: the session is already initialized",
            ));
        }
        let (opened, result) = self.legacy_initialize(params)?;
        *session = Some(opened);
        Ok(result)
    }

    fn spawn_request(
        &self,
        id: RequestId,
        method: String,
        params: Option<Value>,
        session: Option<Arc<LegacySession>>,
        in_flight: &InFlight,
        out_tx: &mpsc::UnboundedSender<String>,
    ) {
        let cancel = CancellationToken::new();
        let tracked = in_flight.track(&id, cancel.clone());
        let server = self.clone();
        let out = out_tx.clone();
        tokio::spawn(async move {
            let _tracked = tracked;
            let request = IncomingRequest {
                id: id.clone(),
                method,
                params,
                auth: None,
                cancel: cancel.clone(),
                outbound: Some(out.clone()),
            };
            let result = tokio::select! {
                r = server.handle_in(request, session) => r,
                () = cancel.cancelled() => {
                    // A cancelled request gets no response.
                    return;
                }
            };
            let _ = out.send(jsonrpc::response(Some(&id), &result));
        });
    }
}

/// Whether a request carries the 2026-07-28 `_meta`, which selects stateless serving
/// whatever else the connection did.
fn is_modern(params: Option<&Value>) -> bool {
    protocol::meta_protocol_version(params).is_some()
}
