//! A connection's socket as its registry sees it: bytes of a new request starting to
//! arrive start its head, and an evicted connection reads its end once nothing more has
//! arrived.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{Conn, Phase};

/// A connection's socket, noting when bytes of a new request start to arrive.
pub(crate) struct Watched<T> {
    io: T,
    conn: Arc<Conn>,
}

impl<T> Watched<T> {
    pub(crate) fn new(io: T, conn: Arc<Conn>) -> Self {
        Self { io, conn }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if polled.is_pending() {
            // Evicted with nothing more to read: the end of the stream, so the
            // connection closes with nothing unread in it.
            if self.conn.evicted() {
                return Poll::Ready(Ok(()));
            }
            self.conn.reader.register(cx.waker());
            // An eviction between the look and the registration woke nobody.
            if self.conn.evicted() {
                return Poll::Ready(Ok(()));
            }
            return Poll::Pending;
        }
        if buf.filled().len() > before
            && self.conn.phase().0 == Phase::Idle
            && !self.conn.multiplexed.load(Ordering::Relaxed)
        {
            self.conn.set(Phase::Head);
        }
        polled
    }
}

/// The `AsyncWrite` methods of a wrapper whose writes go through to its field `io`
/// untouched (`Watched` here, `h2::Rewind`).
macro_rules! write_through {
    () => {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
        }

        fn poll_write_vectored(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            bufs: &[std::io::IoSlice<'_>],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
        }

        fn is_write_vectored(&self) -> bool {
            self.io.is_write_vectored()
        }

        fn poll_flush(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::pin::Pin::new(&mut self.io).poll_flush(cx)
        }

        fn poll_shutdown(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
        }
    };
}
pub(crate) use write_through;

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    write_through!();
}
