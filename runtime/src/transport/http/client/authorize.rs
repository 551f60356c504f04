//! What the HTTP client consults when a server refuses it for want of authorization: an
//! [`Authorizer`] (tern's OAuth 2.1 client, `tern_mcp::oauth::OAuthClient`, or one of the
//! application's own) turns a 401 or 403 and its `WWW-Authenticate` challenge into a
//! new access token, and the request goes again with it.

use http::{Method, Uri};

use crate::transport::{BoxFuture, TransportError};

/// How many times one request is sent again after its server refused it for want of
/// authorization (an authorization, then step-ups): past it, the refusal stands.
pub(crate) const MAX_AUTHORIZATION_RETRIES: usize = 3;

/// A refusal for want of authorization, as the server gave it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Challenge<'a> {
    /// The MCP endpoint that refused.
    pub resource: &'a Uri,
    /// 401 (no or a bad token) or 403 (a token without the scope the request needs).
    pub status: u16,
    /// The `WWW-Authenticate` header, if the server sent one.
    pub www_authenticate: Option<&'a str>,
    /// The access token the refused request carried, if any.
    pub token: Option<&'a str>,
    /// The `DPoP-Nonce` the server gave with its refusal (RFC 9449 §9), if any.
    pub dpop_nonce: Option<&'a str>,
}

/// Gets the access tokens an HTTP client sends. Consulted only when a server refuses
/// a request with 401 or 403; its answer is sent on every request from then on.
pub trait Authorizer: Send + Sync + std::fmt::Debug + 'static {
    /// Answers `challenge` with a new access token (authorizing, refreshing or stepping
    /// up as the challenge asks), or `None` when it has none to offer, so the refusal
    /// stands.
    fn authorize<'a>(
        &'a self,
        challenge: Challenge<'a>,
    ) -> BoxFuture<'a, Result<Option<String>, TransportError>>;

    /// For a token bound to the client's key (DPoP, RFC 9449): the proof to send in the
    /// `DPoP` header of a request with `method` to `uri` that carries `token`, which
    /// then goes as `Authorization: DPoP`. The default, `None`, sends bearer tokens.
    fn dpop_proof(&self, method: &Method, uri: &Uri, token: &str) -> Option<String> {
        let _ = (method, uri, token);
        None
    }
}
