//! HTTP/1.1 on one byte stream, the client's side of it: a request written whole, the
//! response head parsed by `httparse`, and the body read by its framing (a length,
//! chunks, or the connection's close) in the task that awaits it.
//!
//! hyper drives each connection from a task of its own and hands requests and
//! responses across channels; an MCP client sends one request at a time per connection
//! and reads its answer at once, so here the caller's task does the reading and writing
//! and nothing sits between. The bounds are those of the wire: a head of at most
//! [`MAX_HEAD`] bytes and [`MAX_HEADERS`] fields, chunk-size lines and trailers of
//! bounded length. Bodies are bounded by their readers (the exchange's byte cap), time
//! by the exchange's idle timeout.

mod body;
mod client;

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite};

pub(crate) use body::{Body, Recycle};
pub(crate) use client::Conn;

/// The most a response head may hold, its status line and fields together.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// The most fields a response head may have.
pub(crate) const MAX_HEADERS: usize = 100;
/// How much room a read asks for at least.
const READ_CHUNK: usize = 8 * 1024;

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

/// [`poll_fill`] as a future.
async fn fill(io: &mut dyn Io, buf: &mut BytesMut) -> Result<(), Error> {
    match std::future::poll_fn(|cx| poll_fill(io, cx, buf)).await {
        Ok(0) => Err(Error::Closed),
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Io(e)),
    }
}

#[cfg(test)]
mod tests;
