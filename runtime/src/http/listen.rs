//! The accept loop of [`HttpServer::serve`](super::HttpServer::serve): each connection
//! registered with its budgets and served by a task of its own, which (after the TLS
//! handshake, when there is one) reads a request (`transport::http::h1`), routes it
//! (one path; POST, GET and DELETE, and 405 for the rest), writes its response and
//! reads the next; drained on shutdown. A connection that speaks HTTP/2 (by ALPN, or
//! by its preface in clear) goes to `h2.rs` instead.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use futures_util::FutureExt as _;
use http::header::CONTENT_TYPE;
use http::{Method, StatusCode};
use http_body_util::{BodyExt as _, Full};
use tokio::net::TcpListener;

use super::conn::{Conn, Fit, Registry, Watched};
use super::reply::{Reply, status_only};
use super::signal::{self, Signal};
use super::{Shared, overload, post, protected, session_era};
use crate::jsonrpc;
use crate::transport::http::fields::Field;
use crate::transport::http::h1::{self, ReadHead, RequestHead, ResponseWriter};

/// What a connection may speak besides HTTP/1.1 in clear.
pub(crate) struct Protocols {
    /// The endpoint's router, which serves HTTP/2 streams.
    #[cfg(feature = "http-server-h2")]
    pub(crate) h2: axum::Router,
    /// The TLS every connection starts with, if any.
    #[cfg(feature = "http-server-tls")]
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
}

/// Serves `shared` on `listener` until `shutdown`, then drains: connections finish what
/// they are serving (within their budgets) and idle ones close.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    path: String,
    listener: TcpListener,
    registry: Arc<Registry>,
    protocols: Protocols,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let protocols = Arc::new(protocols);
    tokio::spawn(Arc::clone(&registry).reap());
    // Said once the endpoint stops taking connections.
    let drain = Arc::new(Signal::default());
    let path: Arc<str> = path.into();
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection that died in the queue:
                    // pause so a full descriptor table does not become a busy loop.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Room is made for a connection that came, not for one that may: a connection is
        // closed at the cap only when another is waiting for its place.
        let fit = tokio::select! {
            biased;
            () = &mut shutdown => {
                spawn_connection(&shared, &path, &protocols, &registry, &drain, tcp, peer);
                break;
            }
            fit = registry.room() => fit,
        };
        if let Fit::Refuse(permit) = fit {
            tokio::spawn(overload::refuse(tcp, permit));
            continue;
        }
        spawn_connection(&shared, &path, &protocols, &registry, &drain, tcp, peer);
    }
    drain.say();
    // Connections the kernel completed but nobody accepted yet may carry a request
    // already (a proxy writes as soon as it connects): closing the listener would reset
    // them, and the proxy would answer 502. They are served, draining, instead.
    while let Some(Ok((tcp, peer))) = listener.accept().now_or_never() {
        spawn_connection(&shared, &path, &protocols, &registry, &drain, tcp, peer);
    }
    drop(listener);
    shared.closing.cancel();
    registry.drained().await;
    Ok(())
}

/// Registers `tcp` and serves it in a task of its own.
fn spawn_connection(
    shared: &Arc<Shared>,
    path: &Arc<str>,
    protocols: &Arc<Protocols>,
    registry: &Arc<Registry>,
    drain: &Arc<Signal>,
    tcp: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
) {
    // Without TCP_NODELAY, an SSE stream's second small write can wait for the client's
    // delayed ACK (tens of milliseconds).
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "could not set TCP_NODELAY");
    }
    let (id, conn) = registry.join(Some(peer.ip()));
    let endpoint = Endpoint {
        shared: Arc::clone(shared),
        path: Arc::clone(path),
        protocols: Arc::clone(protocols),
        conn: Arc::clone(&conn),
        id,
        drain: Arc::clone(drain),
    };
    let registry = Arc::clone(registry);
    tokio::spawn(async move {
        let _leave = Leave(&registry, id);
        tokio::select! {
            biased;
            () = conn.killed() => {}
            () = endpoint.connect(tcp) => {}
        }
    });
}

/// What reading a connection's next request head came to.
enum Next {
    Request(RequestHead),
    /// Read again: the drain began.
    Again,
    /// The client speaks HTTP/2 with prior knowledge.
    #[cfg(feature = "http-server-h2")]
    H2,
    /// The refusal was written: the connection closes politely.
    Close,
    /// The connection is done (closed, failed, evicted, drained).
    End,
}

/// Writes `reply` to the request `head` on `io`, in `room` (the connection's, for its
/// responses); whether the connection closes after it (`close`, or the response's own
/// framing says so), or `None` when the connection failed or the client went away
/// meanwhile.
async fn write_reply(
    io: &mut h1::Conn,
    room: &mut Vec<u8>,
    head: &RequestHead,
    reply: Reply,
    close: bool,
) -> Option<bool> {
    let response = match reply {
        // The usual answer: its head and text go out in one write, no header map or
        // body built to carry them here.
        Reply::Json(status, text) => {
            return write_json(io, room, head, status, &[text.as_bytes()], close).await;
        }
        Reply::Result(status, id, result) => {
            let mut id_room = jsonrpc::IdRoom::default();
            let pieces = jsonrpc::answer_pieces(&id, result.pieces(), &mut id_room);
            return write_json(io, room, head, status, &pieces.map(str::as_bytes), close).await;
        }
        Reply::Response(response) => response,
    };
    let (parts, mut body) = response.into_parts();
    let exact = http_body::Body::size_hint(&body).exact();
    let mut writer = ResponseWriter::new(room, head, parts.status, &parts.headers, exact, close);
    let closes = writer.closes();
    loop {
        let frame = tokio::select! {
            biased;
            frame = body.frame() => frame,
            () = io.closed() => return None,
        };
        let data = match frame {
            None => break,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Some(Err(e)) => {
                tracing::debug!(error = %e, "a response body failed");
                return None;
            }
        };
        writer.data(io, &data).await.ok()?;
    }
    writer.finish(io).await.ok()?;
    Some(closes)
}

/// Writes a JSON body, given in `pieces`, to the request `head` on `io`, the head and
/// the body in one write; as [`write_reply`].
async fn write_json(
    io: &mut h1::Conn,
    room: &mut Vec<u8>,
    head: &RequestHead,
    status: StatusCode,
    pieces: &[&[u8]],
    close: bool,
) -> Option<bool> {
    let json = || std::iter::once((CONTENT_TYPE.as_str(), &b"application/json"[..]));
    let len = u64::try_from(pieces.iter().map(|p| p.len()).sum::<usize>()).ok();
    let mut writer = ResponseWriter::with_fields(room, head, status, json, len, close);
    let closes = writer.closes();
    writer.data_in_pieces(io, pieces).await.ok()?;
    writer.finish(io).await.ok()?;
    Some(closes)
}

/// How long a draining endpoint keeps an idle connection open for a request that may
/// already be on its way.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Takes a connection out of the registry however its task ends.
struct Leave<'a>(&'a Registry, u64);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.leave(self.1);
    }
}

/// The endpoint as one connection sees it.
struct Endpoint {
    shared: Arc<Shared>,
    path: Arc<str>,
    #[cfg_attr(
        not(any(feature = "http-server-h2", feature = "http-server-tls")),
        allow(dead_code)
    )]
    protocols: Arc<Protocols>,
    conn: Arc<Conn>,
    /// The connection's id in the registry.
    id: u64,
    drain: Arc<Signal>,
}

impl Endpoint {
    /// Serves the connection on `tcp`: TLS first if the endpoint has it, then HTTP/2 or
    /// HTTP/1.1 as TLS's ALPN, or the client's first bytes, say.
    async fn connect(&self, tcp: tokio::net::TcpStream) {
        let io = Watched::new(tcp, Arc::clone(&self.conn));
        #[cfg(feature = "http-server-tls")]
        if let Some(tls) = &self.protocols.tls {
            // Inside the header budget: the connection is in its head until a request.
            let stream = match tls.accept(io).await {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::debug!(error = %e, "a TLS handshake failed");
                    return;
                }
            };
            #[cfg(feature = "http-server-h2")]
            if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                return self.serve_h2(stream).await;
            }
            return self.serve(h1::Conn::new(stream)).await;
        }
        self.serve(h1::Conn::new(io)).await;
    }

    #[cfg(feature = "http-server-h2")]
    async fn serve_h2(&self, io: impl h1::Io) {
        self.conn.multiplex();
        let app = self.protocols.h2.clone();
        super::h2::serve(io, app, Arc::clone(&self.conn), Arc::clone(&self.drain)).await;
    }

    /// Serves the connection's requests in turn until it closes, fails, goes over a
    /// budget (the caller's select), or the drain ends it.
    async fn serve(&self, mut io: h1::Conn) {
        // Waited on between requests, registered once for the connection's life rather
        // than once a request.
        let drained = self.drain.wait();
        tokio::pin!(drained);
        // Where each head's fields are located: the last head's room, taken back.
        let mut room = Vec::new();
        // Where each response is written: the last one's room, left empty.
        let mut written = Vec::new();
        loop {
            let head = match self.next_head(&mut io, drained.as_mut(), &mut room).await {
                Next::Request(head) => head,
                Next::Again => continue,
                #[cfg(feature = "http-server-h2")]
                Next::H2 => {
                    let (io, read) = io.into_parts();
                    return self.serve_h2(super::h2::Rewind::new(read, io)).await;
                }
                Next::Close => return io.close().await,
                Next::End => return self.refuse_late(io).await,
            };
            let guard = self.conn.request_started();
            let (body, whole) = match io.read_body(&head, self.shared.max_body_bytes).await {
                Ok(read) => read,
                Err(e) => {
                    tracing::debug!(error = %e, "could not read a request body");
                    if io.write(&h1::bare(StatusCode::BAD_REQUEST)).await.is_ok() {
                        io.close().await;
                    }
                    return;
                }
            };
            // A panic in the request's task (the verifier, the DPoP check, a layer, the
            // handler) is answered 500 -32603 to the request's id, and the connection
            // serves on. The body is kept (a count, not a copy) to find that id.
            let message = body.clone();
            let respond = AssertUnwindSafe(self.respond(&head, body)).catch_unwind();
            let reply = tokio::select! {
                biased;
                reply = respond => reply.unwrap_or_else(|panic| Reply::panicked_on(&message, &*panic)),
                // The client is gone: its request's handler is dropped (and so cancelled).
                () = io.closed() => return,
            };
            // Not kept while the answer goes out: a stream may live long.
            drop(message);
            self.conn.writing();
            // Said, not only done: the client must not send its next request into the close.
            let close = !head.keep_alive || !whole || self.drain.said();
            let Some(close) = write_reply(&mut io, &mut written, &head, reply, close).await else {
                return;
            };
            drop(guard);
            if close {
                io.close().await;
                return;
            }
            room = head.into_room();
        }
    }

    /// The end of a connection the cap evicted while it had read nothing: its place goes
    /// to the newer connection now, and a request already on its way (sent after the
    /// connection last looked) is refused 503, as one over the cap is, rather than met
    /// with a closed socket and reset. Within the bound on refusals; past it, and for
    /// any other end, the connection closes as it is.
    async fn refuse_late(&self, io: h1::Conn) {
        if !io.nothing_read() {
            return;
        }
        if let Some(permit) = self.conn.give_up_place(self.id) {
            overload::refuse_on(io, permit).await;
        }
    }

    /// Reads the next request's head, answering one it refuses: while the endpoint
    /// serves, until the drain or an eviction; while it drains, within a grace.
    async fn next_head(
        &self,
        io: &mut h1::Conn,
        drained: Pin<&mut signal::Wait<'_>>,
        room: &mut Vec<Field>,
    ) -> Next {
        let read = if !self.drain.said() {
            tokio::select! {
                biased;
                // An evicted connection reads its end here once nothing more has
                // arrived (`conn::Watched`): a request already in it is served, though
                // a busy endpoint may run this task for the first time long after.
                read = io.read_request(room) => read,
                // What was read so far stays in the connection's buffer.
                () = drained => return Next::Again,
            }
        } else if io.nothing_read() {
            // A client may be sending its next request right now: give it the grace
            // to arrive and be answered with `Connection: close`, not a close under it.
            match tokio::time::timeout(DRAIN_GRACE, io.read_request(room)).await {
                Ok(read) => read,
                Err(_) => return Next::End,
            }
        } else {
            io.read_request(room).await
        };
        match read {
            ReadHead::Request(head) => Next::Request(head),
            ReadHead::Closed => Next::End,
            #[cfg(feature = "http-server-h2")]
            ReadHead::Refused(_) if io.buffered().starts_with(super::h2::PREFACE_LINE) => Next::H2,
            ReadHead::Refused(refusal) => {
                tracing::debug!(%refusal, "refused a request head");
                match io.write(&h1::bare(refusal.status())).await {
                    Ok(()) => Next::Close,
                    Err(_) => Next::End,
                }
            }
            ReadHead::Failed(e) => {
                tracing::debug!(error = %e, "a connection failed in a request head");
                Next::End
            }
        }
    }

    /// The response to one request: routed by its path and method.
    async fn respond(&self, head: &RequestHead, body: Bytes) -> Reply {
        let path = head.path();
        let shared = &*self.shared;
        if let Some(metadata) = shared
            .protected
            .as_ref()
            .filter(|m| head.method == Method::GET && m.serves(path))
        {
            return protected::metadata_response(metadata).into();
        }
        if path != self.path.as_bytes() {
            return status_only(StatusCode::NOT_FOUND).into();
        }
        match head.method {
            Method::POST => {
                post::handle_post(shared, &head.headers, Full::new(body), Some(&self.conn)).await
            }
            Method::GET if shared.sessions.is_some() => {
                session_era::handle_get(shared, &head.headers, self.conn.peer)
                    .await
                    .into()
            }
            Method::DELETE if shared.sessions.is_some() => {
                session_era::handle_delete(shared, &head.headers)
                    .await
                    .into()
            }
            _ => status_only(StatusCode::METHOD_NOT_ALLOWED).into(),
        }
    }
}
