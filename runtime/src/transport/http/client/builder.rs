//! Making an [`HttpClientTransport`]: the endpoint, timeouts, credentials, extra
//! headers and TLS roots.

use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Uri};
use hyper_util::client::legacy::connect::HttpConnector;

use super::pool::Pool;
use super::{Authorizer, Connector, EraCache, HttpClientTransport, Inner};
use crate::transport::TransportError;

/// How long an [`HttpClientTransport`] waits on the server: plain data, given to
/// [`HttpClientBuilder::timeouts`]. Start from [`Default`] and change what you need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpTimeouts {
    /// A request (JSON or SSE) whose response has not come this long after it was sent,
    /// or after the server's last progress notification for it, fails (default 60 s): a
    /// stream that sends other notifications, or drips bytes, without ever answering is
    /// given up on. Progress, and a server's own request to the user (2025-11-25),
    /// extend it up to `max_request`. A retry is a request of its own.
    pub request: Duration,
    /// The longest a request may take, whatever progress it reports (default 10 minutes).
    pub max_request: Duration,
    /// A request fails when the server sends nothing (no response head, no body bytes,
    /// no SSE event or comment) for this long (default 2 minutes). Unlike `request`, a
    /// long SSE stream that keeps sending progress lives on.
    pub idle: Duration,
    /// Connecting gives up after this long (default 10 s).
    pub connect: Duration,
}

impl Default for HttpTimeouts {
    fn default() -> Self {
        Self {
            request: Duration::from_secs(60),
            max_request: Duration::from_secs(600),
            idle: Duration::from_secs(120),
            connect: Duration::from_secs(10),
        }
    }
}

/// Builds an [`HttpClientTransport`]. Clones build transports that share one
/// [`EraCache`].
#[derive(Debug, Clone)]
pub struct HttpClientBuilder {
    url: String,
    eras: EraCache,
    timeouts: HttpTimeouts,
    bearer: Option<String>,
    authorizer: Option<Arc<dyn Authorizer>>,
    headers: Vec<(String, String)>,
    #[cfg(feature = "http-client-tls")]
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
}

impl HttpClientBuilder {
    /// Trusts the certificates in `pem` (one or more `CERTIFICATE` blocks) as roots, in
    /// addition to the Mozilla set: for servers with a private CA or a self-signed
    /// certificate. Fails when `pem` holds no certificate or one that does not parse.
    #[cfg(feature = "http-client-tls")]
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, TransportError> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject as _;
        let before = self.roots.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert =
                cert.map_err(|e| TransportError::new(format!("invalid PEM certificate: {e}")))?;
            self.roots.push(cert);
        }
        if self.roots.len() == before {
            return Err(TransportError::new("no CERTIFICATE in the PEM text"));
        }
        Ok(self)
    }

    /// How long to wait on the server (default [`HttpTimeouts::default`]).
    pub fn timeouts(mut self, timeouts: HttpTimeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sends `Authorization: Bearer {token}` on every request.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Consults `authorizer` when the server refuses a request with 401 or 403 (such as
    /// `tern_mcp::oauth::OAuthClient`, the OAuth 2.1 flow the MCP spec describes): the
    /// request goes again with the token it gives, which every later request carries.
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Remembers the era found at the endpoint in `cache`, shared with every transport
    /// given it, instead of in the cache this builder started with.
    pub fn era_cache(mut self, cache: EraCache) -> Self {
        self.eras = cache;
        self
    }

    /// Sends an extra header on every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The transport. Fails on a URL that is not `http://` (or `https://` with the
    /// `http-client-tls` feature), or a header that is not valid.
    pub fn build(self) -> Result<HttpClientTransport, TransportError> {
        let uri: Uri = self
            .url
            .parse()
            .map_err(|e| TransportError::new(format!("invalid MCP URL {:?}: {e}", self.url)))?;
        match uri.scheme_str() {
            Some("http") => {}
            #[cfg(feature = "http-client-tls")]
            Some("https") => {}
            #[cfg(not(feature = "http-client-tls"))]
            Some("https") => {
                return Err(TransportError::new(
                    "https URLs need tern's http-client-tls feature",
                ));
            }
            _ => {
                return Err(TransportError::new(format!(
                    "the MCP URL {:?} must start with http:// or https://",
                    self.url
                )));
            }
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| TransportError::new(format!("invalid header name {name:?}: {e}")))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|e| TransportError::new(format!("invalid header value {value:?}: {e}")))?;
            headers.append(name, value);
        }
        let bearer = self.bearer.as_deref().map(bearer_value).transpose()?;
        #[cfg(feature = "http-client-tls")]
        let connector = connector(self.timeouts.connect, self.roots)?;
        #[cfg(not(feature = "http-client-tls"))]
        let connector = connector(self.timeouts.connect)?;
        let pool = Pool::new(connector, uri.clone(), Duration::from_secs(90));
        Ok(HttpClientTransport {
            inner: Arc::new(Inner {
                pool,
                uri,
                next_id: AtomicI64::new(1),
                timeout: self.timeouts.request,
                max_timeout: self.timeouts.max_request,
                idle_timeout: self.timeouts.idle,
                bearer: Mutex::new(bearer),
                authorizer: self.authorizer,
                headers,
                post_headers: Mutex::new(None),
                eras: self.eras,
                tools: Default::default(),
                session: Default::default(),
            }),
        })
    }
}

/// What the pool connects with: TCP without Nagle, within `timeout`; TLS for https://
/// URLs (with the `http-client-tls` feature), trusting `roots` beside the Mozilla set.
pub(crate) fn connector(
    timeout: Duration,
    #[cfg(feature = "http-client-tls")] roots: Vec<rustls::pki_types::CertificateDer<'static>>,
) -> Result<Connector, TransportError> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(timeout));
    #[cfg(feature = "http-client-tls")]
    let connector = {
        // The TLS layer hands plain http:// through to the inner connector.
        connector.enforce_http(false);
        hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config(roots)?)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector)
    };
    Ok(connector)
}

/// rustls with ring, the Mozilla roots and `extra` roots, TLS 1.2 and 1.3.
#[cfg(feature = "http-client-tls")]
fn tls_config(
    extra: Vec<rustls::pki_types::CertificateDer<'static>>,
) -> Result<rustls::ClientConfig, TransportError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for cert in extra {
        roots
            .add(cert)
            .map_err(|e| TransportError::new(format!("unusable root certificate: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::new(format!("TLS setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

pub(super) fn bearer_value(token: &str) -> Result<HeaderValue, TransportError> {
    HeaderValue::try_from(format!("Bearer {token}"))
        .map_err(|_| TransportError::new("the bearer token is not a valid header value"))
}

impl HttpClientBuilder {
    /// A builder for the endpoint at `url` ([`HttpClientTransport::builder`]).
    pub(super) fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            eras: EraCache::default(),
            timeouts: HttpTimeouts::default(),
            bearer: None,
            authorizer: None,
            headers: Vec::new(),
            #[cfg(feature = "http-client-tls")]
            roots: Vec::new(),
        }
    }
}
