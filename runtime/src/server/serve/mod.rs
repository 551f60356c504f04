//! Serving a [`Server`](super::Server) on a transport: the message-transport loop
//! (in-memory, stdio) in `messages`; the Streamable HTTP endpoint is
//! [`crate::http`], a room of its own.
//!
//! Both adapters hand each request to the server's one pipeline
//! ([`Server::accept`](super::Server::accept), then
//! [`Accepted::serve`](super::Accepted::serve)) and map its
//! [`Verdict`](super::Verdict) onto their wire.

pub(super) mod messages;

/// Resolves on SIGTERM or SIGINT (ctrl-c; only ctrl-c off Unix): the `shutdown` to give
/// [`HttpServer::serve`](crate::http::HttpServer::serve), so a rolling restart (systemd,
/// Kubernetes, a supervisor) drains the requests in flight instead of cutting them.
///
/// Inside a Tokio runtime the signals are watched from this call on, not from the first
/// poll: make it before saying that the server listens, so a SIGTERM sent on that word
/// drains instead of killing the process.
///
/// ```no_run
/// # async fn demo(server: tern_mcp::server::Server) -> std::io::Result<()> {
/// let shutdown = tern_mcp::server::shutdown_signal();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// println!("listening on http://{}/mcp", listener.local_addr()?);
/// tern_mcp::http::HttpServer::new(server)
///     .serve(listener, shutdown)
///     .await
/// # }
/// ```
#[cfg(feature = "http-server")]
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    // Outside a runtime nothing can be registered yet: the first poll does it.
    let watched = tokio::runtime::Handle::try_current()
        .is_ok()
        .then(watch_signals);
    async move {
        match watched {
            Some(watched) => watched.await,
            None => watch_signals().await,
        }
    }
}

/// Registers the handlers now; the future it gives resolves on the first signal.
#[cfg(feature = "http-server")]
fn watch_signals() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let watch = |kind, name: &str| match signal(kind) {
            Ok(watched) => Some(watched),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch {name}; it does not drain the server");
                None
            }
        };
        let mut term = watch(SignalKind::terminate(), "SIGTERM");
        let mut int = watch(SignalKind::interrupt(), "SIGINT");
        async move {
            // A signal that cannot be watched never arrives.
            async fn next(watched: &mut Option<tokio::signal::unix::Signal>) {
                match watched {
                    Some(watched) => _ = watched.recv().await,
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                () = next(&mut term) => tracing::info!("SIGTERM: draining"),
                () = next(&mut int) => tracing::info!("SIGINT: draining"),
            }
        }
    }
    #[cfg(not(unix))]
    async move {
        if tokio::signal::ctrl_c().await.is_err() {
            // No signal can be watched at all: never resolve rather than stop at once.
            std::future::pending::<()>().await;
        }
    }
}
