//! What both sides of a differential target share: a connection that replays given
//! bytes, and what is read off it (requests, a response), compared whole.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// One request read whole off a connection: its method, and its body as the framing
/// its head chose delimits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReadRequest {
    pub(super) method: String,
    pub(super) body: Vec<u8>,
}

/// A response read whole off a connection: its status, and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReadResponse {
    pub(super) status: u16,
    pub(super) body: Vec<u8>,
}

/// The most of one body read.
pub(super) const BODY_CAP: usize = 1 << 20;

/// Reads `body` whole, at most [`BODY_CAP`] bytes; `None` if it fails or is longer.
pub(super) async fn whole<B>(body: B) -> Option<Vec<u8>>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use http_body_util::BodyExt as _;
    let collected = http_body_util::Limited::new(body, BODY_CAP).collect().await;
    Some(collected.ok()?.to_bytes().to_vec())
}

/// A connection whose peer sends `bytes`, then closes; what is written to it is dropped.
/// An answering peer (a server) sends nothing until something was written to it.
pub(super) struct Replay {
    data: Bytes,
    answering: bool,
    written: bool,
    reader: Option<std::task::Waker>,
}

impl Replay {
    /// A connection whose client sends `bytes`.
    pub(super) fn new(bytes: &[u8]) -> Self {
        Self {
            data: Bytes::copy_from_slice(bytes),
            answering: false,
            written: false,
            reader: None,
        }
    }

    /// A connection whose server answers with `bytes` once a request was written.
    pub(super) fn answering(bytes: &[u8]) -> Self {
        Self {
            answering: true,
            ..Self::new(bytes)
        }
    }
}

impl AsyncRead for Replay {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.answering && !self.written {
            self.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = self.data.len().min(buf.remaining());
        let chunk = self.data.split_to(n);
        buf.put_slice(&chunk);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Replay {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.written = true;
        if let Some(reader) = self.reader.take() {
            reader.wake();
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
