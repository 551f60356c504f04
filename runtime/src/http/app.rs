//! The endpoint as an axum [`Router`]: its routes (POST, and GET and DELETE for
//! 2025-11-25 sessions, the protected resource metadata) under the budget layer. It is
//! what [`HttpServer::router`](super::HttpServer::router) hands an app, and what serves
//! the HTTP/2 streams of [`HttpServer::serve`](super::HttpServer::serve).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::routing::{get, post};
use futures_util::FutureExt as _;
use http::HeaderValue;
use http::header::HOST;

use super::budget::{self, Limits, OnConn};
use super::reply::Reply;
use super::{Shared, protected};

/// The routes of `shared` at `path`, each request held to `limits`.
pub(crate) fn router(shared: Arc<Shared>, path: &str, limits: Arc<Limits>) -> Router {
    let protected_metadata = shared.protected.clone();
    let on_delete = shared.sessions.is_some().then(|| Arc::clone(&shared));
    let mut route = post(move |request: Request| {
        let shared = Arc::clone(&shared);
        async move {
            let (parts, body) = request.into_parts();
            let conn = parts.extensions.get::<OnConn>().map(|on| Arc::clone(&on.0));
            let post = super::post::handle_post(&shared, &parts.headers, body, conn.as_deref());
            // A panic before the handler ran (the verifier, the DPoP check) is answered
            // 500 -32603 here, with no id: the body was read by the task that is gone.
            // The handler's own is answered to its id (`run.rs`).
            AssertUnwindSafe(post)
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| Reply::panicked(None, &*panic))
                .into_response()
        }
    });
    if let Some(shared) = on_delete {
        let on_get = Arc::clone(&shared);
        route = route
            .delete(move |request: Request| {
                let shared = Arc::clone(&shared);
                async move { super::session_era::handle_delete(&shared, request.headers()).await }
            })
            .get(move |request: Request| {
                let shared = Arc::clone(&on_get);
                async move {
                    let peer = request
                        .extensions()
                        .get::<OnConn>()
                        .and_then(|on| on.0.peer);
                    super::session_era::handle_get(&shared, request.headers(), peer).await
                }
            });
    }
    let mut router = Router::new().route(path, route);
    if let Some(metadata) = protected_metadata {
        let (aware, _) = metadata.well_known();
        let serve = move || {
            let metadata = Arc::clone(&metadata);
            async move { protected::metadata_response(&metadata) }
        };
        router = router.route(protected::WELL_KNOWN, get(serve.clone()));
        if aware != protected::WELL_KNOWN {
            router = router.route(&aware, get(serve));
        }
    }
    router
        .layer(axum::middleware::from_fn_with_state(limits, budget::hold))
        .layer(axum::middleware::map_request(authority_as_host))
}

/// An HTTP/2 request names its host in `:authority`, not in a `Host` field (RFC 9113
/// §8.3.1): the DNS-rebinding check reads it there.
async fn authority_as_host(mut request: Request) -> Request {
    if !request.headers().contains_key(HOST) {
        let authority = request.uri().authority().map(|a| a.as_str().to_owned());
        if let Some(host) = authority.and_then(|a| HeaderValue::from_str(&a).ok()) {
            request.headers_mut().insert(HOST, host);
        }
    }
    request
}
