//! Serving a [`Server`](super::Server) on a transport: the message-transport loop
//! (in-memory, stdio) in `messages`, and the Streamable HTTP endpoint in [`http`].
//!
//! Both adapters hand each request to the server's one pipeline
//! ([`Server::accept`](super::Server::accept), then
//! [`Accepted::serve`](super::Accepted::serve)) and map its
//! [`Verdict`](super::Verdict) onto their wire.

#[cfg(feature = "http-server")]
pub mod http;
pub(super) mod messages;

/// Resolves on SIGTERM or SIGINT (ctrl-c; only ctrl-c off Unix): the `shutdown` to give
/// [`HttpServer::serve`](http::HttpServer::serve), so a rolling restart (systemd,
/// Kubernetes, a supervisor) drains the requests in flight instead of cutting them.
///
/// ```no_run
/// # async fn demo(server: tern_mcp::server::Server) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// tern_mcp::server::http::HttpServer::new(server)
///     .serve(listener, tern_mcp::server::shutdown_signal())
///     .await
/// # }
/// ```
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: draining"),
                    _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: draining"),
                }
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; only ctrl-c stops the server")
            }
        }
    }
    if tokio::signal::ctrl_c().await.is_err() {
        // No signal can be watched at all: never resolve rather than stop at once.
        std::future::pending::<()>().await;
    }
}
