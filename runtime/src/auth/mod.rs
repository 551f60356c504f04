//! What the transport learned about the caller from a validated access token, and the
//! verifiers that validate them (`JwtVerifier`, feature `jwt`; `IntrospectionVerifier`,
//! feature `introspection`).

/// The identity carried by an access token that tern's token verifier accepted.
///
/// The server layer builds one per authenticated request; `requestState` sealing turns it
/// into a [`Principal`](crate::seal::Principal) so state minted for one caller fails for
/// another.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct AuthInfo {
    /// The OAuth client the token was issued to.
    pub client_id: String,
    /// The authorization server that issued the token, when the verifier reports it.
    pub issuer: Option<String>,
    /// The end user (or service) the token speaks for, when the verifier reports it.
    pub subject: Option<String>,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// How the token is bound: the RFC 7638 thumbprint of the key it is bound to (its
    /// `cnf.jkt`), for a DPoP-bound token, which the server then accepts only with a
    /// proof signed by that key; `None` for a bearer token.
    pub dpop_jkt: Option<String>,
}

impl AuthInfo {
    /// The identity of a token issued to `client_id`, with no issuer, subject or scopes
    /// yet (the `with_*` methods add them).
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            ..Self::default()
        }
    }

    /// The authorization server that issued the token.
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The end user (or service) the token speaks for.
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// The scopes the token grants.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The token is bound to the DPoP key whose thumbprint is `jkt` (its `cnf.jkt`).
    pub fn with_dpop_jkt(mut self, jkt: impl Into<String>) -> Self {
        self.dpop_jkt = Some(jkt.into());
        self
    }
}

/// The confirmation claim of a sender-constrained token (RFC 7800, RFC 9449 §6).
#[cfg(any(feature = "jwt", feature = "introspection"))]
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Confirmation {
    /// The SHA-256 thumbprint of the DPoP key the token is bound to.
    #[serde(default)]
    pub(crate) jkt: Option<String>,
}

/// Why a bearer token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The token is unknown, expired, revoked or malformed.
    #[error("invalid token: {0}")]
    InvalidToken(String),
    /// The token is valid but lacks a scope the server requires.
    #[error("insufficient scope: {0}")]
    InsufficientScope(String),
}

/// Checks the bearer tokens an HTTP transport receives (`Authorization: Bearer ...`).
///
/// The HTTP server calls it once per request when one is configured; an accepted token's
/// [`AuthInfo`] reaches the handler (and binds sealed `requestState` to the caller), a
/// rejected or missing one gets 401 with `WWW-Authenticate: Bearer`.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Validates `token` (the text after `Bearer `).
    fn verify(&self, token: &str) -> crate::transport::BoxFuture<'_, Result<AuthInfo, AuthError>>;
}

#[cfg(feature = "introspection")]
mod introspection;
#[cfg(feature = "introspection")]
#[cfg_attr(docsrs, doc(cfg(feature = "introspection")))]
pub use introspection::IntrospectionVerifier;
#[cfg(feature = "jwt")]
mod jwt;
#[cfg(feature = "jwt")]
#[cfg_attr(docsrs, doc(cfg(feature = "jwt")))]
pub use jwt::JwtVerifier;
