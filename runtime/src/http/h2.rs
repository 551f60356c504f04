//! HTTP/2 connections of [`HttpServer::serve`](super::HttpServer::serve), served by
//! hyper's HTTP/2 server: those TLS's ALPN agreed on `h2`, and those that open in clear
//! with HTTP/2's preface (prior knowledge, as a gRPC-style client or `curl
//! --http2-prior-knowledge` does). Each stream is a request to the endpoint's router
//! ([`app`](super::app)), held by the budget layer; the connection is in the registry
//! like an HTTP/1.1 one: its header budget runs until its first request, its idle
//! budget while no stream is open, and the cap counts it once.
//!
//! hyper's own defenses stay on (resets of streams it never served are bounded, against
//! "rapid reset"); a connection opens at most [`MAX_STREAMS`] streams at once, each
//! with a head of at most [`h1::MAX_HEAD`] bytes.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use bytes::{Buf as _, BytesMut};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use tower_service::Service as _;

use super::budget::OnConn;
use super::conn::Conn;
use super::signal::Signal;
use crate::transport::http::h1;

/// The first line of every HTTP/2 connection's preface (RFC 9113 §3.4), which an
/// HTTP/1.1 reader refuses: a connection whose refused head starts so goes to hyper,
/// which reads the whole preface.
pub(crate) const PREFACE_LINE: &[u8] = b"PRI * HTTP/2.0\r\n";

/// The most streams one connection may have open at once.
const MAX_STREAMS: u32 = 100;

/// Serves the HTTP/2 connection on `io` until it closes, or the drain ends it (after
/// its open streams, with GOAWAY).
pub(crate) async fn serve(io: impl h1::Io, app: Router, conn: Arc<Conn>, drain: Arc<Signal>) {
    let service =
        hyper::service::service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(OnConn(Arc::clone(&conn)));
            app.clone().call(request)
        });
    let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .max_header_list_size(h1::MAX_HEAD as u32);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(e) = served {
                tracing::debug!(error = %e, "an HTTP/2 connection failed");
            }
            return;
        }
        () = drain.wait() => {}
    }
    connection.as_mut().graceful_shutdown();
    if let Err(e) = connection.await {
        tracing::debug!(error = %e, "an HTTP/2 connection failed while draining");
    }
}

/// A connection's stream with bytes already read from it put back in front: what the
/// HTTP/1.1 reader took of an HTTP/2 preface goes to hyper first.
pub(crate) struct Rewind {
    read: BytesMut,
    io: Box<dyn h1::Io>,
}

impl Rewind {
    pub(crate) fn new(read: BytesMut, io: Box<dyn h1::Io>) -> Self {
        Self { read, io }
    }
}

impl AsyncRead for Rewind {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.read.has_remaining() {
            let n = self.read.len().min(buf.remaining());
            buf.put_slice(&self.read[..n]);
            self.read.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    super::conn::write_through!();
}
