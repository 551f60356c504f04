//! Serving a [`Server`] on a message transport (in-memory, stdio): one task per request,
//! cancellation by `notifications/cancelled`, one writer so a request's notifications
//! always precede its response. A request whose task panics is answered -32603 (see
//! `pipeline::caught_panic`), and the loop serves on.
//!
//! Both eras are served: a request carrying the 2026-07-28 `_meta` is served
//! statelessly, and `initialize` opens a 2025-11-25 session for the connection, whose
//! requests (without that `_meta`) are served with the session's capabilities, and whose
//! responses answer the server's own requests to the client.

use futures_util::FutureExt as _;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, Incoming, RpcError};
use crate::server::pipeline::caught_panic;
use crate::server::{IncomingRequest, OnSession, Outbound, ResultText, Server, Session};
use crate::transport::MessageTransport;
use crate::util::InFlight;

/// How long requests already read may run on after a message transport's input ends
/// (stdin closed) before they are cancelled: 10 s.
pub(crate) const END_OF_INPUT_DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves requests arriving on `transport` until the peer goes away (see
/// [`Server::serve`]).
pub(crate) async fn serve<T: MessageTransport>(server: &Server, transport: T) -> crate::Result<()> {
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
    let mut conn = MessageLoop {
        server,
        out: out_tx,
        in_flight: InFlight::default(),
        session: None,
        forwarder: None,
    };
    while let Some(message) = source.recv().await {
        match message {
            Ok(text) => conn.message(&text),
            Err(e) if e.is_skipped() => {
                // One message was too large to read; the transport goes on.
                tracing::warn!(error = %e, "skipped a message");
                let error = RpcError::invalid_request(format!("Invalid Request: {e}"));
                conn.send(jsonrpc::response(None, &Err(error)));
            }
            Err(e) => {
                tracing::warn!(error = %e, "transport failed");
                break;
            }
        }
    }
    conn.end(writer).await;
    Ok(())
}

/// One message transport's connection as the server serves it.
struct MessageLoop<'a> {
    server: &'a Server,
    /// The connection's one writer.
    out: mpsc::UnboundedSender<String>,
    in_flight: InFlight,
    /// The 2025-11-25 session `initialize` opened, once it has.
    session: Option<Session>,
    /// The task sending the session's notifications outside any request.
    forwarder: Option<tokio::task::JoinHandle<()>>,
}

impl MessageLoop<'_> {
    fn send(&self, message: String) {
        let _ = self.out.send(message);
    }

    /// One message read off the transport.
    fn message(&mut self, text: &str) {
        match Incoming::read_within(text.as_bytes(), self.server.json_limits()) {
            Err(rejected) => self.send(jsonrpc::response(
                rejected.id.as_ref(),
                &Err(rejected.error),
            )),
            Ok(Incoming::Request { id, method, params }) => {
                self.request(IncomingRequest::from_raw(id, method, params), text);
            }
            Ok(Incoming::Notification {
                method: name,
                params,
            }) => {
                if crate::protocol::says(&name, |m| m.cancels_request) {
                    self.in_flight.cancel(params.as_ref());
                } else {
                    tracing::trace!(method = name, "ignoring a client notification");
                }
            }
            Ok(Incoming::Response { id, result }) => match &self.session {
                Some(s) => {
                    if s.answer(&id, result).is_err() {
                        tracing::debug!(?id, "a client response to no pending request");
                    }
                }
                None => tracing::debug!("ignoring a response outside a 2025-11-25 session"),
            },
        }
    }

    /// A request: `initialize` and what a session answers itself here, the rest in a
    /// task of its own.
    fn request(&mut self, request: IncomingRequest, text: &str) {
        let mut accepted = match self.server.accept_read(request, text.as_bytes()) {
            Ok(accepted) => accepted,
            Err(rejected) => {
                self.send(jsonrpc::response(
                    rejected.id.as_ref(),
                    &Err(rejected.error),
                ));
                return;
            }
        };
        if accepted.is_stateless(self.session.is_some()) {
            spawn_request(accepted, &self.in_flight, &self.out);
            return;
        }
        if let Some(params) = accepted.opens_session() {
            let result = self.initialize(params.as_ref());
            self.send(jsonrpc::response(Some(accepted.id()), &result));
            return;
        }
        if let Some(s) = &self.session {
            accepted = match s.route(accepted) {
                OnSession::Own(id, own) => {
                    self.send(jsonrpc::response(Some(&id), &own.answer));
                    return;
                }
                OnSession::Serve(accepted) => accepted,
            };
        }
        spawn_request(accepted, &self.in_flight, &self.out);
    }

    /// Answers `initialize`: opens the connection's 2025-11-25 session, once, and sends
    /// its notifications outside any request through the connection's writer.
    fn initialize(&mut self, params: Option<&Value>) -> Result<Value, RpcError> {
        if self.session.is_some() {
            return Err(RpcError::invalid_request(
                "Invalid Request: the session is already initialized",
            ));
        }
        let (session, result) = self.server.open_session(params)?;
        // The writer ends when every sender is gone: this one goes when `end` aborts the
        // task.
        let out = self.out.clone();
        let forward = session
            .clone()
            .forward_events(self.server.events(), move |_, m| {
                std::future::ready(out.send(m).is_ok())
            });
        self.forwarder = Some(tokio::spawn(forward));
        self.session = Some(session);
        Ok(result)
    }

    /// The input ended: no answer to a session's own requests can come any more, but
    /// the requests already read are served (each task holds a sender, so the writer
    /// ends when the last one is done), for at most [`END_OF_INPUT_DRAIN`].
    async fn end(self, mut writer: tokio::task::JoinHandle<()>) {
        if let Some(s) = &self.session {
            s.close();
        }
        if let Some(forwarder) = self.forwarder {
            forwarder.abort();
        }
        drop(self.out);
        if tokio::time::timeout(END_OF_INPUT_DRAIN, &mut writer)
            .await
            .is_err()
        {
            tracing::warn!("requests still running after the input ended: cancelling them");
            self.in_flight.cancel_all();
            let _ = writer.await;
        }
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
        // A panic in the request's task (its handler, a layer) is answered -32603 to its
        // id; the loop serves on.
        let served = std::panic::AssertUnwindSafe(accepted.serve()).catch_unwind();
        let result = tokio::select! {
            served = served => match served {
                Ok(verdict) => verdict.into_result().map(ResultText::into_string),
                Err(panic) => Err(caught_panic(&*panic)),
            },
            () = cancel.cancelled() => {
                // A cancelled request gets no response.
                return;
            }
        };
        let _ = out.send(jsonrpc::answer(&id, &result));
    });
}
