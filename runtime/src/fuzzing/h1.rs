//! tern's HTTP/1.1 on both sides, read off a connection that replays given bytes, and
//! held to hyper's reading of the same bytes (`oracle.rs`): the differential fuzz
//! targets `h1_requests` and `h1_responses` call [`requests`] and [`responses`].

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::transport::http::h1;

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
const BODY_CAP: usize = 1 << 20;

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

/// The bytes a client sends on one connection, read by tern's server and by hyper's:
/// where both read a request whole, they read the same method and the same body (a
/// framing disagreement is how requests are smuggled), and neither reads a request the
/// other refused, except where tern is the stricter (it refuses what hyper would take:
/// a smuggling shape, an over-long line). Panics on a disagreement: a finding.
pub fn requests(bytes: &[u8]) {
    let Some(runtime) = runtime() else {
        return;
    };
    runtime.block_on(async {
        let (tern, tern_refused) = server_reads(bytes).await;
        let (hyper, hyper_failed) = super::oracle::server_reads(bytes).await;
        let both = tern.len().min(hyper.len());
        assert_eq!(
            tern[..both],
            hyper[..both],
            "tern and hyper read different requests off the same bytes"
        );
        assert!(
            tern.len() <= hyper.len() || hyper_failed,
            "tern read a request hyper did not see, and hyper ended cleanly: \
             tern {tern:?}, hyper {hyper:?}"
        );
        assert!(
            hyper.len() <= tern.len() || tern_refused,
            "hyper read a request tern did not see, and tern ended cleanly: \
             tern {tern:?}, hyper {hyper:?}"
        );
    });
}

/// The bytes a server answers a `POST /mcp` with, read by tern's client and by hyper's:
/// when both read a response whole, they read the same status and the same body; tern
/// reads none that hyper refuses (it may refuse what hyper takes: it is the stricter of
/// the two about framing). Panics on a disagreement: a finding.
pub fn responses(bytes: &[u8]) {
    let Some(runtime) = runtime() else {
        return;
    };
    runtime.block_on(async {
        let Some(tern) = client_reads(bytes).await else {
            return;
        };
        let hyper = super::oracle::client_reads(bytes).await;
        assert!(
            hyper.is_some(),
            "tern read a response hyper refused: {tern:?}"
        );
        assert_eq!(Some(tern), hyper, "tern and hyper read different responses");
    });
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

/// A current-thread runtime for the targets, made once (`None` if it could not be).
fn runtime() -> Option<&'static tokio::runtime::Runtime> {
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
async fn server_reads(bytes: &[u8]) -> (Vec<ReadRequest>, bool) {
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
async fn client_reads(bytes: &[u8]) -> Option<ReadResponse> {
    let conn = h1::Conn::new(Replay::answering(bytes));
    let mut request = http::Request::new(Bytes::from_static(b"{}"));
    *request.method_mut() = http::Method::POST;
    let response = conn.send(&request, "/mcp", Arc::new(Keep)).await.ok()?;
    let status = response.status().as_u16();
    let body = whole(response.into_body()).await?;
    Some(ReadResponse { status, body })
}
