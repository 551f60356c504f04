//! Where the user is sent to authorize, and how the redirect comes back: the
//! [`UserAgent`] trait, a [`LoopbackRedirect`] for desktop and command-line apps (a
//! one-shot listener on 127.0.0.1 and a hook that opens the browser), and
//! [`FetchRedirect`] for authorization servers that approve without a user.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use url::Url;

use crate::transport::http::fetch::Fetch as OAuthHttp;
use crate::transport::{BoxFuture, TransportError};

/// Takes the user to an authorization URL and brings back the URL the authorization
/// server redirected to (the `redirect_uri` with `code`, `state` and perhaps `iss`, or
/// with `error`).
pub trait UserAgent: Send + Sync + 'static {
    /// The `redirect_uri` the authorization server sends the user back to.
    fn redirect_uri(&self) -> String;
    /// Sends the user to `authorization_url`; resolves to the redirect it came back with.
    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, TransportError>>;
}

/// Follows the authorization URL itself (no user, no browser) and takes the redirect
/// the server answers with: for authorization servers that approve at once (tests, and
/// clients whose consent was given beforehand). Never follows the redirect further.
#[derive(Debug, Clone)]
pub struct FetchRedirect {
    redirect_uri: String,
}

impl FetchRedirect {
    /// Asks to be sent back to `redirect_uri` (it is never contacted).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
        }
    }
}

impl UserAgent for FetchRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, TransportError>> {
        Box::pin(async move {
            let http = OAuthHttp::new()?;
            let answer = http.get(&authorization_url).await?;
            let location = answer.location.ok_or_else(|| {
                TransportError::new(format!(
                    "the authorization endpoint answered HTTP {} without a redirect",
                    answer.status.as_u16()
                ))
            })?;
            authorization_url
                .join(&location)
                .map_err(|e| TransportError::new(format!("an unusable redirect {location:?}: {e}")))
        })
    }
}

/// How a [`LoopbackRedirect`] shows the user the authorization URL.
pub(crate) type OpenUrl = Arc<dyn Fn(&Url) + Send + Sync>;

/// The redirect for native apps (RFC 8252 §7.3): a listener on `127.0.0.1`, which takes
/// exactly one request on its path, answers it with a page saying the user may close
/// the window, and hands its URL back; `open` shows the user the authorization URL
/// (opens the browser, prints it, ...). Waits at most `timeout` (default five minutes).
pub struct LoopbackRedirect {
    port: u16,
    path: String,
    open: OpenUrl,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// A listener on `127.0.0.1:port` (a fixed port: the redirect URI is registered with
    /// it) at `/callback`, showing the user the URL with `open`.
    pub fn new(port: u16, open: impl Fn(&Url) + Send + Sync + 'static) -> Self {
        Self {
            port,
            path: "/callback".into(),
            open: Arc::new(open),
            timeout: Duration::from_secs(5 * 60),
        }
    }

    /// How long to wait for the user.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn wait(&self, authorization_url: Url) -> Result<Url, TransportError> {
        let fail = |e: std::io::Error| TransportError::new(format!("the loopback redirect: {e}"));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(fail)?;
        (self.open)(&authorization_url);
        let redirect_base = Url::parse(&self.redirect_uri())
            .map_err(|e| TransportError::new(format!("the loopback redirect URI: {e}")))?;
        loop {
            let (mut stream, _) = listener.accept().await.map_err(fail)?;
            // A request head is small: 8 KiB, or the request is not ours.
            let mut head = vec![0u8; 8192];
            let mut read = 0;
            while read < head.len() && !head[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut head[read..]))
                    .await
                {
                    Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
                    Ok(Ok(n)) => read += n,
                }
            }
            let text = String::from_utf8_lossy(&head[..read]);
            let target = text
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("GET "))
                .and_then(|rest| rest.split(' ').next())
                .and_then(|target| redirect_base.join(target).ok());
            match target {
                Some(url) if url.path() == self.path => {
                    let page =
                        "<!doctype html><title>Authorized</title><p>You may close this window.";
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                        page.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                    return Ok(url);
                }
                _ => {
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        .await;
                }
            }
        }
    }
}

impl UserAgent for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.path)
    }

    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, TransportError>> {
        Box::pin(async move {
            tokio::time::timeout(self.timeout, self.wait(authorization_url))
                .await
                .map_err(|_| TransportError::new("the user did not finish authorizing in time"))?
        })
    }
}
