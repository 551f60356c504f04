//! The budgets of one request as a tower layer, so that the endpoint served in an app
//! ([`HttpServer::router`](super::HttpServer::router)) and each HTTP/2 stream of
//! [`HttpServer::serve`](super::HttpServer::serve) are held to what its HTTP/1.1
//! connections are: the body must arrive within the body budget, the response must
//! end within the request budget of the body's end, and requests past the cap are
//! refused 503 with `Retry-After`, not queued without end.
//!
//! Over its body budget a request is answered 400 (its body could not be read); over
//! its request budget before its response starts, 503 with JSON-RPC `-32001`; after,
//! its response ends there, cut (the connection closes, or the HTTP/2 stream resets),
//! as tern's own HTTP/1.1 loop cuts it. The header and idle budgets belong to a
//! connection before any request exists: no layer can see them, so they are the
//! accepting server's ([`serve`](super::HttpServer::serve) holds every connection,
//! HTTP/1.1 and HTTP/2, to them).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::header::RETRY_AFTER;
use http::{HeaderValue, StatusCode};
use http_body::{Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep, sleep_until};

use super::conn::{Budgets, Conn, RequestGuard};
use super::overload;
use super::reply::rpc_error;
use crate::jsonrpc::RpcError;

/// The connection an HTTP/2 stream of [`serve`](super::HttpServer::serve) came on, in
/// its request's extensions: its budgets and its cap are that connection's.
#[derive(Clone)]
pub(crate) struct OnConn(pub(crate) Arc<Conn>);

/// What the layer holds every request to.
pub(crate) struct Limits {
    budgets: Budgets,
    /// Requests under way, for a router served by someone else's accept loop; tern's own
    /// loop caps connections instead (and HTTP/2 streams per connection).
    in_flight: Arc<Semaphore>,
}

impl Limits {
    pub(crate) fn new(budgets: Budgets, max_in_flight: usize) -> Arc<Self> {
        Arc::new(Self {
            budgets,
            in_flight: Arc::new(Semaphore::new(max_in_flight.max(1))),
        })
    }
}

/// The layer's function: see the module docs.
pub(crate) async fn hold(
    State(limits): State<Arc<Limits>>,
    request: Request,
    next: Next,
) -> Response {
    // An HTTP/2 stream's guard keeps its connection out of the idle budget until the
    // response ends; its own budgets are this layer's, not the reaper's.
    let (permit, guard) = match request.extensions().get::<OnConn>() {
        Some(OnConn(conn)) => (None, Some(conn.request_started())),
        None => match Arc::clone(&limits.in_flight).try_acquire_owned() {
            Ok(permit) => (Some(permit), None),
            Err(_) => return busy(),
        },
    };
    let budgets = limits.budgets;
    let start = Instant::now();
    let body_ended = Arc::new(OnceLock::new());
    let request = request.map(|body| {
        Body::new(Timed {
            inner: body,
            deadline: Box::pin(sleep_until(start + budgets.body)),
            budget: budgets.body,
            ended: Arc::clone(&body_ended),
        })
    });
    let Some(limit) = budgets.request else {
        let response = next.run(request).await;
        return cut(response, None, (guard, permit));
    };
    // The request budget counts from the body's end; until the body budget has passed,
    // the body may still be arriving.
    let deadline = move || body_ended.get().copied().unwrap_or(start + budgets.body) + limit;
    let handler = next.run(request);
    tokio::pin!(handler);
    let response = tokio::select! {
        response = &mut handler => Some(response),
        () = after_body(start + budgets.body, &deadline) => None,
    };
    let Some(response) = response else {
        tracing::debug!(?limit, "a request went over its budget before its response");
        return rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            RpcError::new(
                crate::jsonrpc::code::REQUEST_TIMEOUT,
                format!(
                    "Request timed out: not answered within the server's {} s",
                    limit.as_secs()
                ),
            ),
        );
    };
    cut(response, Some(deadline()), (guard, permit))
}

/// `response` with its body cut at `deadline`, holding the request's place until then.
fn cut(response: Response, deadline: Option<Instant>, held: Held) -> Response {
    response.map(|body| {
        Body::new(Cut {
            inner: body,
            deadline: deadline.map(|at| Box::pin(sleep_until(at))),
            _held: held,
        })
    })
}

/// What a request holds until its response ends: its connection's request guard, or its
/// slot under the cap.
type Held = (Option<RequestGuard>, Option<OwnedSemaphorePermit>);

/// Resolves when the request budget has run out: first the body budget passes (by
/// then the body has ended, or was never read), then the request budget from the end.
async fn after_body(body_budget_end: Instant, deadline: &impl Fn() -> Instant) {
    sleep_until(body_budget_end).await;
    sleep_until(deadline()).await;
}

/// 503 with `Retry-After`: every request slot is in use.
fn busy() -> Response {
    let mut response = rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        overload::busy_error(),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(overload::RETRY_AFTER_SECS));
    response
}

/// A request body that fails once its budget has passed, and notes when it ended.
struct Timed {
    inner: Body,
    deadline: Pin<Box<Sleep>>,
    budget: Duration,
    ended: Arc<OnceLock<Instant>>,
}

impl http_body::Body for Timed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.ended.get().is_some() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            if frame.is_none() || self.inner.is_end_stream() {
                let _ = self.ended.set(Instant::now());
            }
            return Poll::Ready(frame);
        }
        ready!(self.deadline.as_mut().poll(cx));
        let budget = self.budget.as_secs_f64();
        Poll::Ready(Some(Err(axum::Error::new(format!(
            "the request body did not arrive within {budget} s"
        )))))
    }

    fn is_end_stream(&self) -> bool {
        self.ended.get().is_some() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body cut at the request's deadline (if it has one), holding the request's
/// place until it ends.
struct Cut {
    inner: Body,
    deadline: Option<Pin<Box<Sleep>>>,
    _held: Held,
}

impl http_body::Body for Cut {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let Some(deadline) = self.deadline.as_mut() else {
            return Poll::Pending;
        };
        ready!(deadline.as_mut().poll(cx));
        tracing::debug!("a response went over its request budget: cut");
        Poll::Ready(Some(Err(axum::Error::new(
            "the response went over its request budget",
        ))))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
