//! hyper's HTTP/1.1, server and client, reading the same replayed bytes as tern's: the
//! oracle the differential targets compare tern against.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use super::replay::{ReadRequest, ReadResponse, Replay, whole};
use crate::util::lock;

/// The requests hyper's server reads off a connection that sends `bytes`, and whether
/// it ended in an error (of the connection, or of a body) rather than at a clean end.
pub(super) async fn server_reads(bytes: &[u8]) -> (Vec<ReadRequest>, bool) {
    let read = Arc::new(Mutex::new((Vec::new(), false)));
    let seen = Arc::clone(&read);
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let seen = Arc::clone(&seen);
        async move {
            let method = request.method().to_string();
            let body = whole(request.into_body()).await;
            let mut seen = lock(&seen);
            match body {
                Some(body) if !seen.1 => seen.0.push(ReadRequest { method, body }),
                _ => seen.1 = true,
            }
            Ok::<_, Infallible>(http::Response::new(http_body_util::Empty::<Bytes>::new()))
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(Replay::new(bytes)), service)
        .await;
    let (read, body_failed) = lock(&read).clone();
    (read, served.is_err() || body_failed)
}

/// The response hyper's client reads to a `POST /mcp` off a connection that sends
/// `bytes`; `None` when it refuses it or the connection ends first.
pub(super) async fn client_reads(bytes: &[u8]) -> Option<ReadResponse> {
    let io = TokioIo::new(Replay::answering(bytes));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.ok()?;
    let driving = tokio::spawn(conn);
    let request = http::Request::post("/mcp")
        .header("host", "fuzz")
        .body(http_body_util::Full::new(Bytes::from_static(b"{}")))
        .ok()?;
    let response = sender.send_request(request).await.ok()?;
    let status = response.status().as_u16();
    let body = whole(response.into_body()).await;
    driving.abort();
    Some(ReadResponse {
        status,
        body: body?,
    })
}
