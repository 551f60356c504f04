//! Access tokens checked by asking their authorization server (RFC 7662 token
//! introspection), for opaque tokens or servers that prefer it: an active token for this
//! resource, unexpired. Answers are kept a short while (at most 30 s, never past the
//! token's `exp`), by the token's SHA-256, a bounded number of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{AuthError, AuthInfo, TokenVerifier};
use crate::transport::http::fetch::Fetch;
use crate::transport::{BoxFuture, TransportError};
use crate::util::lock;

/// An answer, and until when it is reused.
type Kept = (Result<AuthInfo, AuthError>, Instant);

/// How long an introspection answer is reused.
const CACHE_FOR: Duration = Duration::from_secs(30);
/// How many answers are kept.
const CACHE_ENTRIES: usize = 10_000;

/// Validates access tokens through the introspection endpoint of the authorization
/// server that issued them, authenticating as the resource server's own client.
#[derive(Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    authorization: String,
    audience: String,
    http: Fetch,
    cache: Mutex<HashMap<[u8; 32], Kept>>,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.inner.endpoint)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

/// What an introspection answer says.
#[derive(Deserialize)]
struct Introspected {
    active: bool,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    aud: Option<Audience>,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    cnf: Option<super::Confirmation>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl IntrospectionVerifier {
    /// A verifier asking `endpoint`, as the client `client_id` with `client_secret`
    /// (HTTP Basic), whether a token is active for `audience` (this resource).
    pub fn new(
        endpoint: impl Into<String>,
        client_id: &str,
        client_secret: &str,
        audience: impl Into<String>,
    ) -> Result<Self, TransportError> {
        let authorization = crate::util::basic_auth(client_id, client_secret);
        Ok(Self {
            inner: Arc::new(Inner {
                endpoint: endpoint.into(),
                authorization,
                audience: audience.into(),
                http: Fetch::new()?,
                cache: Mutex::default(),
            }),
        })
    }
}

impl Inner {
    async fn ask(&self, token: &str) -> Result<(AuthInfo, Instant), AuthError> {
        let body = format!(
            "token={}&token_type_hint=access_token",
            crate::util::form_urlencoded(token)
        );
        let request = http::Request::builder()
            .method(http::Method::POST)
            .uri(self.endpoint.as_str())
            .header(http::header::AUTHORIZATION, self.authorization.as_str())
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| AuthError::InvalidToken(e.to_string()))?;
        let answer = self.http.send(request).await.map_err(|e| {
            tracing::warn!(error = %e, "token introspection failed");
            AuthError::InvalidToken("the token could not be checked".into())
        })?;
        let said: Introspected = answer
            .json("the introspection answer")
            .map_err(|e| AuthError::InvalidToken(e.to_string()))?;
        if !said.active {
            return Err(AuthError::InvalidToken("the token is not active".into()));
        }
        let now = crate::util::unix_secs();
        if said.exp.is_some_and(|exp| exp <= now) {
            return Err(AuthError::InvalidToken("the token has expired".into()));
        }
        let for_us = match &said.aud {
            None => true,
            Some(Audience::One(a)) => *a == self.audience,
            Some(Audience::Many(list)) => list.contains(&self.audience),
        };
        if !for_us {
            return Err(AuthError::InvalidToken(
                "the token is for another resource".into(),
            ));
        }
        let client_id = said
            .client_id
            .ok_or_else(|| AuthError::InvalidToken("the token names no client".into()))?;
        let mut info = AuthInfo::new(client_id).with_scopes(
            said.scope
                .as_deref()
                .unwrap_or_default()
                .split_ascii_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        );
        info.issuer = said.iss;
        info.subject = said.sub;
        info.dpop_jkt = said.cnf.and_then(|c| c.jkt);
        let lifetime = said.exp.map_or(CACHE_FOR, |exp| {
            Duration::from_secs(exp.saturating_sub(now))
        });
        Ok((info, Instant::now() + lifetime.min(CACHE_FOR)))
    }

    async fn verify(&self, token: &str) -> Result<AuthInfo, AuthError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((answer, until)) = lock(&self.cache).get(&key) {
            if Instant::now() < *until {
                return answer.clone();
            }
        }
        let (answer, until) = match self.ask(token).await {
            Ok((info, until)) => (Ok(info), until),
            // A refusal is kept briefly too, so a bad token cannot make every request
            // a round trip to the authorization server.
            Err(e) => (Err(e), Instant::now() + Duration::from_secs(5)),
        };
        let mut cache = lock(&self.cache);
        if cache.len() >= CACHE_ENTRIES {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
        }
        cache.insert(key, (answer.clone(), until));
        answer
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let token = token.to_owned();
        Box::pin(async move { self.inner.verify(&token).await })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_form_encoded() {
        assert_eq!(
            crate::util::form_urlencoded("a b&c=d/é"),
            "a+b%26c%3Dd%2F%C3%A9"
        );
    }
}
