//! JWT access tokens (RFC 9068) checked against the authorization server's JSON Web
//! Key Set: the signature with the key the token names (the set fetched once, cached,
//! and fetched again when a token names a key it lacks, at most once a second),
//! then `iss`, `aud` (this resource, RFC 8707), `exp` and `nbf` with a clock skew.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;

use super::{AuthError, AuthInfo, TokenVerifier};
use crate::transport::http::fetch::Fetch;
use crate::transport::{BoxFuture, TransportError};

/// The least time between two fetches of the key set (a token naming an unknown key
/// fetches it again, so tokens with made-up key ids cost at most one fetch a second).
const REFETCH_AFTER: Duration = Duration::from_secs(1);
/// The most keys kept from one key set.
const MAX_KEYS: usize = 100;

/// Validates JWT access tokens issued by `issuer` for `audience` (this MCP server's
/// resource identifier), signed with a key of the set at `jwks_uri`.
///
/// ```no_run
/// # fn demo() -> Result<(), tern_mcp::transport::TransportError> {
/// use std::sync::Arc;
/// use tern_mcp::auth::JwtVerifier;
///
/// let verifier = JwtVerifier::new(
///     "https://auth.example.com/jwks",
///     "https://auth.example.com",
///     "https://mcp.example.com/mcp",
/// )?;
/// // HttpServer::new(server).token_verifier(Arc::new(verifier))
/// # let _ = Arc::new(verifier);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
    leeway: Duration,
}

struct Inner {
    jwks_uri: String,
    issuer: String,
    audience: String,
    http: Fetch,
    /// The key set in use: read under a lock held for a lookup, never across a fetch,
    /// so a token whose key is known never waits for the issuer.
    keys: std::sync::Mutex<Arc<Keys>>,
    /// Held by the one fetch under way; the time of the last attempt, failed or not.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

#[derive(Default)]
struct Keys {
    by_id: HashMap<String, Arc<DecodingKey>>,
    /// The one key of a set whose keys name no id.
    unnamed: Option<Arc<DecodingKey>>,
}

impl Keys {
    fn find(&self, kid: Option<&str>) -> Option<Arc<DecodingKey>> {
        match kid {
            Some(id) => self.by_id.get(id).cloned(),
            None => self.unnamed.clone(),
        }
    }
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("jwks_uri", &self.inner.jwks_uri)
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

/// The claims read from an access token.
#[derive(Deserialize)]
struct Claims {
    iss: String,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Vec<String>>,
    #[serde(default)]
    cnf: Option<super::Confirmation>,
}

impl JwtVerifier {
    /// A verifier of tokens from `issuer` for `audience`, signed with the keys at
    /// `jwks_uri`. Clocks may disagree by 60 s ([`leeway`](Self::leeway)).
    pub fn new(
        jwks_uri: impl Into<String>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<Self, TransportError> {
        Ok(Self {
            inner: Arc::new(Inner {
                jwks_uri: jwks_uri.into(),
                issuer: issuer.into(),
                audience: audience.into(),
                http: Fetch::new()?,
                keys: std::sync::Mutex::default(),
                fetching: tokio::sync::Mutex::default(),
            }),
            leeway: Duration::from_secs(60),
        })
    }

    /// How far `exp` and `nbf` may be off.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }
}

fn invalid(why: impl std::fmt::Display) -> AuthError {
    AuthError::InvalidToken(why.to_string())
}

impl Inner {
    /// The key named `kid` (or the set's one unnamed key), fetching the set when it is
    /// not known yet or does not have it. A key already known is found without waiting
    /// for anything; tokens naming unknown keys wait for one fetch at a time, and the set
    /// is fetched again only [`REFETCH_AFTER`] after the last attempt ended, whether it
    /// worked or not, so made-up key ids cannot keep the issuer (or us) busy.
    async fn key(&self, kid: Option<&str>) -> Result<Arc<DecodingKey>, AuthError> {
        if let Some(key) = self.known().find(kid) {
            return Ok(key);
        }
        let mut last_attempt = self.fetching.lock().await;
        // Another fetch may have brought the key while this one waited.
        if let Some(key) = self.known().find(kid) {
            return Ok(key);
        }
        if last_attempt.is_none_or(|at| at.elapsed() >= REFETCH_AFTER) {
            let fetched = self.fetch().await;
            // Counted from when the attempt ended: tokens that queued behind a slow
            // fetch are answered by it, not by another one.
            *last_attempt = Some(Instant::now());
            let fetched = fetched.map_err(|e| {
                tracing::warn!(error = %e, "could not fetch the JWKS");
                invalid("the signing keys could not be fetched")
            })?;
            *crate::util::lock(&self.keys) = Arc::new(fetched);
        }
        self.known()
            .find(kid)
            .ok_or_else(|| invalid("signed with a key the issuer does not publish"))
    }

    /// The key set in use now.
    fn known(&self) -> Arc<Keys> {
        Arc::clone(&crate::util::lock(&self.keys))
    }

    async fn fetch(&self) -> Result<Keys, TransportError> {
        let set: JwkSet = self.http.get(&self.jwks_uri).await?.json("the JWKS")?;
        let mut keys = Keys::default();
        for jwk in set.keys.iter().take(MAX_KEYS) {
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let key = Arc::new(key);
            match &jwk.common.key_id {
                Some(id) => {
                    keys.by_id.insert(id.clone(), key);
                }
                None if set.keys.len() == 1 => keys.unnamed = Some(key),
                None => {}
            }
        }
        Ok(keys)
    }

    async fn verify(&self, token: &str, leeway: Duration) -> Result<AuthInfo, AuthError> {
        let header = decode_header(token).map_err(invalid)?;
        // Access tokens are signed by the issuer's private key: a shared-secret
        // algorithm here would be a forgery with the public key as the secret.
        if matches!(
            header.alg,
            jsonwebtoken::Algorithm::HS256
                | jsonwebtoken::Algorithm::HS384
                | jsonwebtoken::Algorithm::HS512
        ) {
            return Err(invalid("signed with a shared-secret algorithm"));
        }
        let key = self.key(header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = leeway.as_secs();
        let data = decode::<Claims>(token, &key, &validation).map_err(invalid)?;
        let claims = data.claims;
        let scopes: Vec<String> = match (claims.scope, claims.scp) {
            (Some(scope), _) => scope.split_ascii_whitespace().map(str::to_owned).collect(),
            (None, Some(list)) => list,
            (None, None) => Vec::new(),
        };
        let client_id = claims
            .client_id
            .or(claims.azp)
            .ok_or_else(|| invalid("the token names no client (client_id or azp)"))?;
        let mut info = AuthInfo::new(client_id)
            .with_issuer(claims.iss)
            .with_scopes(scopes);
        info.subject = claims.sub;
        info.dpop_jkt = claims.cnf.and_then(|c| c.jkt);
        Ok(info)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<AuthInfo, AuthError>> {
        let token = token.to_owned();
        Box::pin(async move { self.inner.verify(&token, self.leeway).await })
    }
}
