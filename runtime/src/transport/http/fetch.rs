//! The odd HTTP request beside the MCP traffic (OAuth metadata, registration and token
//! requests; a verifier's JWKS), on a client of its own: bounded bodies, a deadline
//! each, no redirects followed (a redirect is an answer, not a hop).

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;

use crate::transport::TransportError;
use crate::transport::http::client::{Connector, connector};

/// The largest answer read.
const MAX_BODY: usize = 1 << 20;
/// How long one request may take, answer included.
const DEADLINE: Duration = Duration::from_secs(30);

/// An answer: its status, the headers that matter, the body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) location: Option<String>,
    pub(crate) content_type: Option<http::HeaderValue>,
    /// A `DPoP-Nonce` the server gave (RFC 9449 §8).
    #[cfg(feature = "oauth")]
    pub(crate) dpop_nonce: Option<String>,
    pub(crate) body: Bytes,
}

impl Answer {
    /// The body as `T`, when the status is 2xx.
    pub(crate) fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, TransportError> {
        if !self.status.is_success() {
            return Err(TransportError::new(format!(
                "{what}: HTTP {}",
                self.status.as_u16()
            )));
        }
        serde_json::from_slice(&self.body)
            .map_err(|e| TransportError::new(format!("{what} is not what it should be: {e}")))
    }
}

/// The client for requests beside the MCP traffic.
#[derive(Clone, Debug)]
pub(crate) struct Fetch {
    client: Client<Connector, Full<Bytes>>,
}

impl Fetch {
    pub(crate) fn new() -> Result<Self, TransportError> {
        #[cfg(feature = "http-client-tls")]
        let connector = connector(Duration::from_secs(10), Vec::new())?;
        #[cfg(not(feature = "http-client-tls"))]
        let connector = connector(Duration::from_secs(10))?;
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Self { client })
    }

    /// GETs `url`, asking for JSON.
    pub(crate) async fn get(&self, url: &impl std::fmt::Display) -> Result<Answer, TransportError> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(url.to_string())
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| TransportError::new(format!("GET {url}: {e}")))?;
        self.send(request).await
    }

    /// Sends `request` and reads its answer, within the deadline and the size bound.
    pub(crate) async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Answer, TransportError> {
        let target = request.uri().to_string();
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| TransportError::new(format!("{target}: {e}")))?;
            let status = response.status();
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
            #[cfg(feature = "oauth")]
            let dpop_nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let limited = http_body_util::Limited::new(response.into_body(), MAX_BODY);
            let body = limited
                .collect()
                .await
                .map_err(|e| TransportError::new(format!("{target}: {e}")))?
                .to_bytes();
            Ok(Answer {
                status,
                location,
                content_type,
                #[cfg(feature = "oauth")]
                dpop_nonce,
                body,
            })
        };
        tokio::time::timeout(DEADLINE, exchange)
            .await
            .map_err(|_| TransportError::new(format!("{target}: no answer in {DEADLINE:?}")))?
    }
}
