//! Serving a [`Server`] on a message transport (in-memory, stdio): one task per request,
//! cancellation by `notifications/cancelled`, one writer so a request's notifications
//! always precede its response.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{IncomingRequest, Server};
use crate::jsonrpc::{self, Incoming};
use crate::transport::MessageTransport;
use crate::types::v2026_07_28::RequestId;
use crate::util::{IdKey, lock};

type InFlight = Arc<Mutex<HashMap<IdKey, CancellationToken>>>;

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
        let in_flight: InFlight = Arc::default();
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
                    self.spawn_request(id, method, params, &in_flight, &out_tx);
                }
                Ok(Incoming::Notification { method, params }) => {
                    if method == "notifications/cancelled" {
                        let key = params
                            .as_ref()
                            .and_then(|p| p.get("requestId"))
                            .and_then(IdKey::from_value);
                        if let Some(token) = key.and_then(|k| lock(&in_flight).remove(&k)) {
                            token.cancel();
                        }
                    } else {
                        tracing::trace!(method, "ignoring a client notification");
                    }
                }
                Ok(Incoming::Response { .. }) => {
                    tracing::debug!("ignoring a response: this server sends no requests");
                }
            }
        }
        for (_, token) in lock(&in_flight).drain() {
            token.cancel();
        }
        drop(out_tx);
        let _ = writer.await;
        Ok(())
    }

    fn spawn_request(
        &self,
        id: RequestId,
        method: String,
        params: Option<Value>,
        in_flight: &InFlight,
        out_tx: &mpsc::UnboundedSender<String>,
    ) {
        let key = IdKey::from(&id);
        let cancel = CancellationToken::new();
        lock(in_flight).insert(key.clone(), cancel.clone());
        let server = self.clone();
        let in_flight = Arc::clone(in_flight);
        let out = out_tx.clone();
        tokio::spawn(async move {
            let request = IncomingRequest {
                id: id.clone(),
                method,
                params,
                auth: None,
                cancel: cancel.clone(),
                outbound: Some(out.clone()),
            };
            let result = tokio::select! {
                r = server.handle(request) => r,
                () = cancel.cancelled() => {
                    // A cancelled request gets no response.
                    return;
                }
            };
            lock(&in_flight).remove(&key);
            let _ = out.send(jsonrpc::response(Some(&id), &result));
        });
    }
}
