//! Who may talk to the endpoint (`admit`: the `Host`/`Origin` guard first), and who the
//! caller is: the access token in `Authorization` (`Bearer`, or `DPoP` with a
//! proof of its key, RFC 9449 §7), checked by the endpoint's verifier; and the
//! `WWW-Authenticate` challenge that says what a refused caller lacks.

use axum::response::Response;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};

use super::Shared;
use super::protected::{challenge, scheme_challenge};
use super::reply::rpc_error;
use crate::auth::{AuthError, AuthInfo};
use crate::jsonrpc::RpcError;
use crate::transport::http::fields::Fields;

/// Who may talk to the endpoint: the `Host`/`Origin` check (403), then the bearer token
/// (401). The identity of a verified token, if any.
pub(super) async fn admit(
    shared: &Shared,
    method: &str,
    headers: &impl Fields,
) -> Result<Option<crate::auth::AuthInfo>, Box<Response>> {
    if let Err(why) = shared.hosts.check(headers) {
        tracing::warn!(
            reason = %why,
            "rejected a request (DNS-rebinding protection)"
        );
        return Err(Box::new(rpc_error(
            StatusCode::FORBIDDEN,
            None,
            RpcError::invalid_request(format!("Forbidden: {why}")),
        )));
    }
    if let Some(bus) = &shared.bus {
        if let Err(e) = bus.ensure_started(&shared.server).await {
            tracing::warn!(error = %e, "the fleet's event bus did not start yet");
        }
    }
    authenticate(shared, method, headers)
        .await
        .map_err(|denied| Box::new(unauthorized(denied)))
}

fn unauthorized(denied: Unauthorized) -> Response {
    let mut response = rpc_error(
        denied.status,
        None,
        RpcError::invalid_request(denied.message),
    );
    if let Ok(v) = HeaderValue::from_str(&denied.challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    if let Some(Ok(nonce)) = denied.dpop_nonce.map(HeaderValue::try_from) {
        response.headers_mut().insert("dpop-nonce", nonce);
    }
    response
}

/// Why a request was not authenticated: what to put in `WWW-Authenticate`.
pub(crate) struct Unauthorized {
    /// 401, or 403 for a valid token without the scope the server requires.
    pub(crate) status: http::StatusCode,
    pub(crate) challenge: String,
    pub(crate) message: String,
    /// A `DPoP-Nonce` to give with the refusal.
    pub(crate) dpop_nonce: Option<String>,
}

/// How a token was presented.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

impl Unauthorized {
    fn new(status: http::StatusCode, challenge: String, message: String) -> Self {
        Self {
            status,
            challenge,
            message,
            dpop_nonce: None,
        }
    }

    /// 401 with a `DPoP` challenge naming `error`.
    fn dpop(metadata: Option<&str>, error: &str, why: &str) -> Self {
        Self::new(
            http::StatusCode::UNAUTHORIZED,
            dpop_challenge(metadata, Some((error, why))),
            format!("Unauthorized: {why}"),
        )
    }
}

/// The scheme and token of an `Authorization` value, when it presents one tern takes.
fn presented(value: &str) -> Option<(Scheme, &str)> {
    let (scheme, token) = value.split_once(' ')?;
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return None;
    };
    Some((scheme, token.trim())).filter(|(_, t)| !t.is_empty())
}

/// The identity behind the request's token, if the endpoint checks tokens: `method` is
/// the request's, for the DPoP proof.
pub(crate) async fn authenticate(
    shared: &Shared,
    method: &str,
    headers: &impl Fields,
) -> Result<Option<AuthInfo>, Unauthorized> {
    let Some(verifier) = &shared.verifier else {
        return Ok(None);
    };
    let metadata = shared.resource_metadata.as_deref();
    let Some((scheme, token)) = headers.text(&AUTHORIZATION).and_then(presented) else {
        let mut offered = challenge(metadata, None, None);
        if shared.offers_dpop {
            offered = format!("{offered}, {}", dpop_challenge(metadata, None));
        }
        return Err(Unauthorized::new(
            http::StatusCode::UNAUTHORIZED,
            offered,
            "Unauthorized: an access token is required".into(),
        ));
    };
    let info = verifier.verify(token).await.map_err(|e| match e {
        // The token is good but not for everything: 403 naming what it lacks.
        AuthError::InsufficientScope(scope) => Unauthorized::new(
            http::StatusCode::FORBIDDEN,
            challenge(metadata, Some("insufficient_scope"), Some(&scope)),
            format!("Forbidden: the token lacks the scope {scope}"),
        ),
        e if scheme == Scheme::Dpop => {
            Unauthorized::dpop(metadata, "invalid_token", &e.to_string())
        }
        e => Unauthorized::new(
            http::StatusCode::UNAUTHORIZED,
            challenge(metadata, Some("invalid_token"), None),
            format!("Unauthorized: {e}"),
        ),
    })?;
    match (scheme, info.dpop_jkt.as_deref()) {
        (Scheme::Bearer, None) => Ok(Some(info)),
        (Scheme::Bearer, Some(_)) => Err(Unauthorized::dpop(
            metadata,
            "invalid_token",
            "the token is bound to a DPoP key: present it with the DPoP scheme and a proof",
        )),
        (Scheme::Dpop, None) => Err(Unauthorized::dpop(
            metadata,
            "invalid_token",
            "the token is not bound to a DPoP key: present it as a Bearer token",
        )),
        (Scheme::Dpop, Some(jkt)) => {
            prove(shared, method, headers, token, jkt).await?;
            Ok(Some(info))
        }
    }
}

/// Checks the request's DPoP proof for `token`, bound to `jkt`.
#[cfg(feature = "dpop")]
async fn prove(
    shared: &Shared,
    method: &str,
    headers: &impl Fields,
    token: &str,
    jkt: &str,
) -> Result<(), Unauthorized> {
    use super::dpop::{Refusal, Request};
    static DPOP: http::HeaderName = http::HeaderName::from_static("dpop");
    let metadata = shared.resource_metadata.as_deref();
    let urls: Vec<String> = match &shared.protected {
        Some(resource) => vec![resource.resource.clone()],
        None => {
            let host = headers.text(&http::header::HOST).unwrap_or_default();
            let path = &shared.path;
            vec![
                format!("http://{host}{path}"),
                format!("https://{host}{path}"),
            ]
        }
    };
    let request = Request {
        method,
        urls: &urls,
        token,
        jkt,
    };
    shared
        .dpop
        .check(headers.values(&DPOP), &request)
        .await
        .map_err(|refusal| match refusal {
            Refusal::Invalid(why) => Unauthorized::dpop(metadata, "invalid_dpop_proof", &why),
            Refusal::UseNonce(nonce) => Unauthorized {
                dpop_nonce: Some(nonce),
                ..Unauthorized::dpop(
                    metadata,
                    "use_dpop_nonce",
                    "the DPoP proof needs the server's nonce",
                )
            },
        })
}

/// Without the `dpop` feature, a bound token cannot be proved: refused.
#[cfg(not(feature = "dpop"))]
async fn prove(
    shared: &Shared,
    _method: &str,
    _headers: &impl Fields,
    _token: &str,
    _jkt: &str,
) -> Result<(), Unauthorized> {
    Err(Unauthorized::dpop(
        shared.resource_metadata.as_deref(),
        "invalid_token",
        "this server does not check DPoP proofs (tern's `dpop` feature is off)",
    ))
}

/// A `DPoP` challenge (RFC 9449 §7.1): an error and why, the algorithms taken, and the
/// metadata URL.
fn dpop_challenge(metadata: Option<&str>, error: Option<(&str, &str)>) -> String {
    #[cfg(feature = "dpop")]
    let algs = super::dpop::ALGS;
    #[cfg(not(feature = "dpop"))]
    let algs = "ES256";
    let (error, why) = error.unzip();
    scheme_challenge("DPoP", error, why, Some(("algs", algs)), metadata)
}
