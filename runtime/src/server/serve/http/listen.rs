//! The accept loop of [`HttpServer::serve`](super::HttpServer::serve): hyper's HTTP/1
//! connections, each registered with its budgets, served by the endpoint's own routing
//! (one path; POST, GET and DELETE, and 405 for the rest), drained on shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::header::CONNECTION;
use http::{HeaderValue, Method, Request, StatusCode};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::conn::{Conn, Registry, RequestGuard, Watched};
use super::{Shared, post, protected};

/// Serves `shared` on `listener` until `shutdown`, then drains: connections finish what
/// they are serving (within their budgets) and idle ones close.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    path: String,
    listener: TcpListener,
    registry: Arc<Registry>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    tokio::spawn(Arc::clone(&registry).reap());
    let drain = CancellationToken::new();
    let path: Arc<str> = path.into();
    let mut http = hyper::server::conn::http1::Builder::new();
    // A connection waits for the response it is writing before it reads the next
    // request: one in flight at a time, which is what the phases assume.
    http.pipeline_flush(false);
    let http = Arc::new(http);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            () = registry.room() => {}
        }
        let (tcp, _) = tokio::select! {
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
        // Without TCP_NODELAY, an SSE stream's second small write can wait for the
        // client's delayed ACK (tens of milliseconds).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let (id, conn) = registry.join();
        let service = Endpoint {
            shared: Arc::clone(&shared),
            path: Arc::clone(&path),
            conn: Arc::clone(&conn),
            drain: drain.clone(),
        };
        let http = Arc::clone(&http);
        let drain = drain.clone();
        let registry = Arc::clone(&registry);
        tokio::spawn(async move {
            let _leave = Leave(&registry, id);
            let served =
                http.serve_connection(TokioIo::new(Watched::new(tcp, Arc::clone(&conn))), service);
            tokio::pin!(served);
            let result = tokio::select! {
                biased;
                result = served.as_mut() => result,
                () = conn.killed() => return,
                () = drain.cancelled() => {
                    // A client may be sending its next request on this connection right
                    // now, or about to after the response going out: give it DRAIN_GRACE
                    // to arrive and be answered with `Connection: close` instead of
                    // closing under it. A response already started goes out whole.
                    let grace = tokio::time::sleep(DRAIN_GRACE);
                    tokio::pin!(grace);
                    while !conn.answer_pending() {
                        tokio::select! {
                            biased;
                            result = served.as_mut() => {
                                if let Err(e) = result {
                                    tracing::debug!(error = %e, "connection ended with an error");
                                }
                                return;
                            }
                            () = conn.killed() => return,
                            () = &mut grace => break,
                            () = tokio::time::sleep(Duration::from_millis(5)) => {}
                        }
                    }
                    served.as_mut().graceful_shutdown();
                    tokio::select! {
                        result = served.as_mut() => result,
                        () = conn.killed() => return,
                    }
                }
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    drain.cancel();
    shared.closing.cancel();
    registry.drained().await;
    Ok(())
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

/// The endpoint as a hyper service for one connection.
struct Endpoint {
    shared: Arc<Shared>,
    path: Arc<str>,
    conn: Arc<Conn>,
    drain: CancellationToken,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Tracked>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for Endpoint {
    type Response = Response<Tracked>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let guard = self.conn.request_started();
        let shared = Arc::clone(&self.shared);
        let conn = Arc::clone(&self.conn);
        let drain = self.drain.clone();
        let routed = request.uri().path() == &*self.path;
        let metadata = shared
            .protected
            .as_ref()
            .filter(|m| request.method() == Method::GET && m.serves(request.uri().path()))
            .cloned();
        Box::pin(async move {
            let response = if let Some(metadata) = metadata {
                protected::metadata_response(&metadata)
            } else if !routed {
                post::status_only(StatusCode::NOT_FOUND)
            } else if request.method() == Method::POST {
                let (parts, body) = request.into_parts();
                post::handle_post(&shared, &parts.headers, body, Some(&conn)).await
            } else if request.method() == Method::GET && shared.sessions.is_some() {
                let (parts, _) = request.into_parts();
                post::handle_get(&shared, &parts.headers).await
            } else if request.method() == Method::DELETE && shared.sessions.is_some() {
                let (parts, _) = request.into_parts();
                post::handle_delete(&shared, &parts.headers).await
            } else {
                post::status_only(StatusCode::METHOD_NOT_ALLOWED)
            };
            conn.writing();
            let mut response = response;
            if drain.is_cancelled() {
                // Said, not only done: hyper would close after this response without
                // telling, and the client would send its next request into the close.
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            Ok(response.map(|body| Tracked {
                body,
                _guard: guard,
            }))
        })
    }
}

/// A response body that keeps its request counted until it is written or dropped.
pub(crate) struct Tracked {
    body: Body,
    _guard: RequestGuard,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
