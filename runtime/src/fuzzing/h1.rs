//! tern's HTTP/1.1 on both sides, read off a connection that replays given bytes, and
//! held to hyper's reading of the same bytes (`oracle.rs`): the differential fuzz
//! targets `h1_requests` and `h1_responses` call [`requests`] and [`responses`].

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use super::replay::{BODY_CAP, ReadRequest, ReadResponse, Replay, whole};
use crate::transport::http::h1;

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
    // Each head's fields located in the last one's room, as the endpoint reads them.
    let mut room = Vec::new();
    loop {
        let head = match conn.read_request(&mut room).await {
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
        room = head.into_room();
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
    let response = conn
        .send(&request.into(), "/mcp", Arc::new(Keep))
        .await
        .ok()?;
    let status = response.status.as_u16();
    let body = whole(response.body).await?;
    Some(ReadResponse { status, body })
}
