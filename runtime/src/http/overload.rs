//! Connections over the cap, answered rather than dropped: each one's request is read
//! (head and a small body, within a short budget) and answered 503 with `Retry-After`
//! and a JSON-RPC error to its id, then the connection closes. A client learns that the
//! server is busy and when to come back; no request that arrived goes unanswered.
//!
//! The refusals under way are bounded (`conn::Registry::room` hands out a permit each);
//! past that bound new connections wait in the listener's queue, unread.

use std::time::Duration;

use http::StatusCode;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;

use crate::jsonrpc::{self, RpcError};
use crate::transport::http::h1::{self, ReadHead, ResponseWriter};

/// How long a refused connection has to send its request.
const BUDGET: Duration = Duration::from_secs(2);

/// The most of a refused request's body read (to find its id, and so the client is not
/// reset mid-send); a longer body is answered all the same, its id unknown.
const BODY_CAP: usize = 64 * 1024;

/// When a refused client should try again, in seconds.
pub(crate) const RETRY_AFTER_SECS: u64 = 1;

/// The JSON-RPC code of the refusal: a server error of the implementation's own range.
const BUSY: i64 = -32000;

/// The error a request refused for want of room is answered with.
pub(crate) fn busy_error() -> RpcError {
    RpcError::new(
        BUSY,
        format!("Server busy: every connection is in use; retry after {RETRY_AFTER_SECS} s"),
    )
}

/// Answers the request on `tcp` 503, then closes it; `permit` is held until then.
pub(crate) async fn refuse(tcp: TcpStream, permit: OwnedSemaphorePermit) {
    refuse_on(h1::Conn::new(tcp), permit).await;
}

/// [`refuse`] on a connection read from already (one the cap evicted with nothing read).
pub(crate) async fn refuse_on(mut io: h1::Conn, permit: OwnedSemaphorePermit) {
    let answered = tokio::time::timeout(BUDGET, answer(&mut io)).await;
    if matches!(answered, Ok(true)) {
        io.close().await;
    }
    drop(permit);
}

/// Reads one request and writes the refusal; whether it was written.
async fn answer(io: &mut h1::Conn) -> bool {
    let ReadHead::Request(head) = io.read_request(&mut Vec::new()).await else {
        return false;
    };
    let id = match io.read_body(&head, BODY_CAP).await {
        Ok((body, true)) => jsonrpc::Incoming::id_of(&body),
        Ok(_) | Err(_) => None,
    };
    let text = jsonrpc::response(id.as_ref(), &Err(busy_error()));
    let retry = RETRY_AFTER_SECS.to_string();
    let fields = || {
        [
            (CONTENT_TYPE.as_str(), &b"application/json"[..]),
            (RETRY_AFTER.as_str(), retry.as_bytes()),
        ]
        .into_iter()
    };
    let len = u64::try_from(text.len()).ok();
    let mut room = Vec::new();
    let mut writer = ResponseWriter::with_fields(
        &mut room,
        &head,
        StatusCode::SERVICE_UNAVAILABLE,
        fields,
        len,
        true,
    );
    tracing::debug!("at the connection cap with no connection to close: refused one 503");
    writer.data(io, text.as_bytes()).await.is_ok() && writer.finish(io).await.is_ok()
}
