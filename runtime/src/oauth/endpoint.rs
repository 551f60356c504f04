//! Requests to a token endpoint: a DPoP proof on each (RFC 9449 §5) when the client has
//! a DPoP key, the server's `use_dpop_nonce` answered once with its nonce (§8), and the
//! answer read as a token response or an error response (RFC 6749 §5).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use oauth2::basic::BasicErrorResponse;

use super::jose::DpopKey;
use crate::transport::TransportError;
use crate::transport::http::fetch::{Answer, Fetch};

/// A token endpoint, reached through `http`, with the client's DPoP key if it has one.
#[derive(Clone)]
pub(crate) struct TokenEndpoint {
    pub(crate) http: Fetch,
    pub(crate) dpop: Option<Arc<DpopKey>>,
}

pub(crate) fn fail(what: impl std::fmt::Display) -> TransportError {
    TransportError::new(format!("authorization failed: {what}"))
}

impl TokenEndpoint {
    /// Sends the request (method, URL, headers, body), with a fresh proof each time,
    /// and once more when the server asks for a nonce it has just given.
    pub(crate) async fn send(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
    ) -> Result<Answer, TransportError> {
        let url = parts.uri.to_string();
        for attempt in 0..2 {
            let mut request = http::Request::new(Full::new(Bytes::copy_from_slice(body)));
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.headers_mut() = parts.headers.clone();
            if let Some(dpop) = &self.dpop {
                let proof = dpop.proof(parts.method.as_str(), &url, None)?;
                let value = http::HeaderValue::try_from(proof).map_err(fail)?;
                request.headers_mut().insert("dpop", value);
            }
            let answer = self.http.send(request).await?;
            let fresh_nonce = match (&self.dpop, &answer.dpop_nonce) {
                (Some(dpop), Some(nonce)) => dpop.remember_nonce(&url, nonce),
                _ => false,
            };
            if attempt == 0 && fresh_nonce && asks_for_nonce(&answer) {
                continue;
            }
            return Ok(answer);
        }
        Err(fail("the token endpoint kept asking for a DPoP nonce"))
    }

    /// Posts `form` (with `basic` credentials, if any) and reads the token response.
    pub(crate) async fn post_form<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<T, TransportError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut builder = http::Request::builder()
            .method(http::Method::POST)
            .uri(url)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json");
        if let Some((id, secret)) = basic {
            builder = builder.header(
                http::header::AUTHORIZATION,
                crate::util::basic_auth(id, secret),
            );
        }
        let (parts, ()) = builder.body(()).map_err(fail)?.into_parts();
        let answer = self.send(&parts, body.as_bytes()).await?;
        token_response(&answer)
    }
}

/// Whether `answer` is the error response `use_dpop_nonce` (RFC 9449 §8).
fn asks_for_nonce(answer: &Answer) -> bool {
    #[derive(serde::Deserialize)]
    struct Error {
        error: String,
    }
    !answer.status.is_success()
        && serde_json::from_slice::<Error>(&answer.body).is_ok_and(|e| e.error == "use_dpop_nonce")
}

/// A successful token response, or the server's error as a clear failure.
pub(crate) fn token_response<T: serde::de::DeserializeOwned>(
    answer: &Answer,
) -> Result<T, TransportError> {
    if !answer.status.is_success() {
        let said = serde_json::from_slice::<BasicErrorResponse>(&answer.body)
            .map(|e| e.to_string())
            .unwrap_or_else(|_| format!("HTTP {}", answer.status.as_u16()));
        return Err(fail(format!("the token endpoint said {said}")));
    }
    serde_json::from_slice(&answer.body)
        .map_err(|e| fail(format!("an unreadable token response: {e}")))
}
