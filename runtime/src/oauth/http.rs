//! The few HTTP requests OAuth needs (metadata documents, registration, the token
//! endpoint), on a client of their own: bounded bodies, a deadline each, no redirects
//! followed (a redirect is an answer, not a hop).

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;
use url::Url;

use crate::transport::TransportError;
use crate::transport::http::client::{Connector, connector};

/// The largest metadata, registration or token response read.
const MAX_BODY: usize = 1 << 20;
/// How long one OAuth request may take, answer included.
const DEADLINE: Duration = Duration::from_secs(30);

/// An answer: its status, the headers that matter, the body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) location: Option<String>,
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

/// The OAuth side's HTTP client.
#[derive(Clone, Debug)]
pub(crate) struct OAuthHttp {
    client: Client<Connector, Full<Bytes>>,
}

impl OAuthHttp {
    pub(crate) fn new() -> Result<Self, TransportError> {
        #[cfg(feature = "http-client-tls")]
        let connector = connector(Duration::from_secs(10), Vec::new())?;
        #[cfg(not(feature = "http-client-tls"))]
        let connector = connector(Duration::from_secs(10))?;
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Self { client })
    }

    /// GETs `url`, asking for JSON.
    pub(crate) async fn get(&self, url: &Url) -> Result<Answer, TransportError> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(url.as_str())
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
            let limited = http_body_util::Limited::new(response.into_body(), MAX_BODY);
            let body = limited
                .collect()
                .await
                .map_err(|e| TransportError::new(format!("{target}: {e}")))?
                .to_bytes();
            Ok(Answer {
                status,
                location,
                body,
            })
        };
        tokio::time::timeout(DEADLINE, exchange)
            .await
            .map_err(|_| TransportError::new(format!("{target}: no answer in {DEADLINE:?}")))?
    }

    /// The client the `oauth2` crate's requests go through.
    pub(crate) fn for_oauth2(
        &self,
    ) -> impl Fn(
        oauth2::HttpRequest,
    ) -> futures_util::future::BoxFuture<
        'static,
        Result<oauth2::HttpResponse, TransportError>,
    > + '_ {
        move |request: oauth2::HttpRequest| {
            let http = self.clone();
            Box::pin(async move {
                let (parts, body) = request.into_parts();
                let request = Request::from_parts(parts, Full::new(Bytes::from(body)));
                let answer = http.send(request).await?;
                let mut response = http::Response::new(answer.body.to_vec());
                *response.status_mut() = answer.status;
                // The crate reads the content type to accept the JSON it parses.
                response.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                Ok(response)
            })
        }
    }
}
