//! HTTP/1.1 on one byte stream, both sides of it: heads parsed by `httparse` and
//! written whole, bodies read by their framing (a length, chunks, or the connection's
//! close) in the task that awaits them.
//!
//! hyper drives each connection from a task of its own and hands requests and
//! responses across channels; MCP carries one request at a time per connection, read
//! and answered at once, so here the task that serves (or sends) does the reading and
//! writing and nothing sits between. The bounds are those of the wire: a head of at
//! most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] fields, chunk-size lines and trailers of
//! bounded length. Bodies are bounded by their readers (a byte cap), time by the
//! reader's budgets (the server's reaper, the client's idle timeout).

mod body;
mod chunk;
#[cfg(feature = "http-client")]
mod client;
#[cfg(feature = "http-server")]
mod response;
#[cfg(feature = "http-server")]
mod server;

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::transport::http::fields::Fields;
use crate::transport::http::visible;
use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(feature = "http-client")]
pub(crate) use body::{Body, Recycle};
#[cfg(feature = "http-client")]
pub(crate) use client::{Answer, Outgoing, push_fields};
#[cfg(feature = "http-server")]
pub(crate) use response::{ResponseWriter, bare};
#[cfg(feature = "http-server")]
pub(crate) use server::{ReadHead, RequestHead};

/// The most a head may hold, its first line and fields together.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// The most fields a head may have.
pub(crate) const MAX_HEADERS: usize = 100;
/// How much room a read asks for at least.
pub(super) const READ_CHUNK: usize = 8 * 1024;

/// One connection: its stream, and what was read from it and not yet taken.
pub(crate) struct Conn {
    pub(super) io: Box<dyn Io>,
    pub(super) buf: BytesMut,
}

impl Conn {
    /// A connection on `io`, which nothing has been read from or written to yet.
    pub(crate) fn new(io: impl Io) -> Self {
        Self {
            io: Box::new(io),
            buf: BytesMut::with_capacity(READ_CHUNK),
        }
    }

    /// What was read from the stream and not yet taken.
    #[cfg(feature = "http-server-h2")]
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// The stream and what was read from it and not yet taken, for another protocol to
    /// read on (HTTP/2 with prior knowledge).
    #[cfg(feature = "http-server-h2")]
    pub(crate) fn into_parts(self) -> (Box<dyn Io>, BytesMut) {
        (self.io, self.buf)
    }
}

/// A byte stream a connection runs on: TCP, or TLS over it.
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// Why an exchange on a connection failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// Reading or writing failed.
    Io(io::Error),
    /// The peer closed the connection before the message was whole.
    Closed,
    /// The peer's message broke HTTP/1.1's grammar.
    Malformed(&'static str),
    /// A part of the peer's message went past its bound.
    TooLarge(&'static str),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "connection error: {e}"),
            Self::Closed => f.write_str("the connection closed before the message was complete"),
            Self::Malformed(what) => write!(f, "malformed HTTP message: {what}"),
            Self::TooLarge(what) => write!(f, "HTTP message too large: {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads what the stream has into `buf`'s spare room: `Ok(0)` is the peer's close.
fn poll_fill(io: &mut dyn Io, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
    if buf.capacity() - buf.len() < READ_CHUNK / 4 {
        buf.reserve(READ_CHUNK);
    }
    tokio_util::io::poll_read_buf(Pin::new(io), cx, buf)
}

/// Writes all of `data` and flushes it (TLS holds records back until flushed).
async fn write_all(io: &mut dyn Io, mut data: &[u8]) -> Result<(), Error> {
    while !data.is_empty() {
        let written = std::future::poll_fn(|cx| Pin::new(&mut *io).poll_write(cx, data))
            .await
            .map_err(Error::Io)?;
        if written == 0 {
            return Err(Error::Closed);
        }
        data = &data[written..];
    }
    std::future::poll_fn(|cx| Pin::new(&mut *io).poll_flush(cx))
        .await
        .map_err(Error::Io)
}

/// The body length `headers` declare, if they do: every `Content-Length` value (and
/// each item of a list) must be the same decimal number.
fn content_length(headers: &impl Fields) -> Result<Option<u64>, &'static str> {
    let mut length = None;
    for value in headers.values(&http::header::CONTENT_LENGTH) {
        // The usual value, a few digits, is read as it stands; anything else item by item.
        if let Some(parsed) = plain_length(value) {
            agree(&mut length, parsed)?;
            continue;
        }
        for item in value.split(|&b| b == b',') {
            let item = item.trim_ascii();
            let parsed = std::str::from_utf8(item)
                .ok()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or("the Content-Length")?;
            agree(&mut length, parsed)?;
        }
    }
    Ok(length)
}

/// Takes `parsed` as the length, unless another was declared.
fn agree(length: &mut Option<u64>, parsed: u64) -> Result<(), &'static str> {
    if length.is_some_and(|known| known != parsed) {
        return Err("two different Content-Lengths");
    }
    *length = Some(parsed);
    Ok(())
}

/// `value` read as a length when it is one to nineteen digits and nothing else (so
/// `u64` holds it), as the general reading reads it; `None` for anything else, left to
/// that reading.
fn plain_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        value
            .iter()
            .fold(0, |n, &digit| n * 10 + u64::from(digit - b'0')),
    )
}

/// Whether a message's connection stays open after it, as its version and `Connection`
/// tokens say: HTTP/1.1 unless `close`, HTTP/1.0 only with `keep-alive`.
fn keeps_alive(version: http::Version, headers: &impl Fields) -> bool {
    let says = |token: &str| {
        headers
            .values(&http::header::CONNECTION)
            .filter_map(visible)
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    match version {
        // `close` wins over `keep-alive` whatever their order, as hyper reads them: two
        // readers of one connection must agree on whether another request follows
        // (h1_requests found tern reading on where hyper closed).
        http::Version::HTTP_10 => says("keep-alive") && !says("close"),
        _ => !says("close"),
    }
}

/// Whether the response to `method` with `status` has no body, whatever its fields say:
/// `HEAD`, 1xx, 204 and 304 (RFC 9112, section 6.3).
fn bodiless(method: &http::Method, status: http::StatusCode) -> bool {
    method == http::Method::HEAD
        || status.is_informational()
        || status == http::StatusCode::NO_CONTENT
        || status == http::StatusCode::NOT_MODIFIED
}

/// Appends `n` in decimal (`itoa`: two digits a step, from a table).
fn push_decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// [`poll_fill`] as a future.
async fn fill(io: &mut dyn Io, buf: &mut BytesMut) -> Result<(), Error> {
    match std::future::poll_fn(|cx| poll_fill(io, cx, buf)).await {
        Ok(0) => Err(Error::Closed),
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Io(e)),
    }
}

#[cfg(test)]
#[cfg(feature = "http-client")]
mod tests;
