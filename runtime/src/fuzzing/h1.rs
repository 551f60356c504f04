//! tern's HTTP/1.1 on both sides, read off a connection that replays given bytes: what
//! the differential fuzz targets (`h1_requests`, `h1_responses`) hold against hyper.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::transport::http::h1;

/// One request read whole off a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequest {
    /// Its method.
    pub method: String,
    /// Its body, as the framing its head chose delimits it.
    pub body: Vec<u8>,
}

/// A response read whole off a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResponse {
    /// Its status code.
    pub status: u16,
    /// Its body, as the framing its head chose delimits it.
    pub body: Vec<u8>,
}

/// The most of one body read.
pub const BODY_CAP: usize = 1 << 20;

/// A connection whose peer sends `bytes`, then closes; what is written to it is dropped.
/// An answering peer (a server) sends nothing until something was written to it.
pub struct Replay {
    data: Bytes,
    answering: bool,
    written: bool,
    reader: Option<std::task::Waker>,
}

impl Replay {
    /// A connection whose client sends `bytes`.
    pub fn new(bytes: &[u8]) -> Self {
        Self {
            data: Bytes::copy_from_slice(bytes),
            answering: false,
            written: false,
            reader: None,
        }
    }

    /// A connection whose server answers with `bytes` once a request was written.
    pub fn answering(bytes: &[u8]) -> Self {
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

/// A current-thread runtime for the targets, made once (`None` if it could not be).
pub fn runtime() -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
}

/// The requests tern's server reads off a connection that sends `bytes`: each whole
/// one in order, and whether the reading ended refusing (or failing on) what came next
/// rather than at a clean end.
pub async fn server_reads(bytes: &[u8]) -> (Vec<ReadRequest>, bool) {
    let mut conn = h1::Conn::new(Replay::new(bytes));
    let mut read = Vec::new();
    loop {
        let head = match conn.read_request().await {
            h1::ReadHead::Request(head) => head,
            h1::ReadHead::Closed => return (read, false),
            h1::ReadHead::Refused(_) | h1::ReadHead::Failed(_) => return (read, true),
        };
        match conn.read_body(&head, BODY_CAP).await {
            Ok((body, true)) => read.push(ReadRequest {
                method: head.method.to_string(),
                body: body.to_vec(),
            }),
            Ok((_, false)) | Err(_) => return (read, true),
        }
        if !head.keep_alive {
            return (read, false);
        }
    }
}

/// Takes back no connection.
struct Keep;

impl h1::Recycle for Keep {
    fn recycle(self: Arc<Self>, _conn: h1::Conn) {}
}

/// The response tern's client reads to a `POST /mcp` off a connection that sends
/// `bytes`; `None` when it refuses it or the connection ends first.
pub async fn client_reads(bytes: &[u8]) -> Option<ReadResponse> {
    use http_body_util::BodyExt as _;
    let conn = h1::Conn::new(Replay::answering(bytes));
    let mut request = http::Request::new(Bytes::from_static(b"{}"));
    *request.method_mut() = http::Method::POST;
    let response = conn.send(&request, "/mcp", Arc::new(Keep)).await.ok()?;
    let status = response.status().as_u16();
    let body = http_body_util::Limited::new(response.into_body(), BODY_CAP)
        .collect()
        .await
        .ok()?
        .to_bytes();
    Some(ReadResponse {
        status,
        body: body.to_vec(),
    })
}
