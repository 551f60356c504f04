//! The endpoint as an OAuth 2.1 protected resource: its Protected Resource Metadata
//! (RFC 9728) served at the well-known URIs, the `WWW-Authenticate` challenges that
//! point to it, and the scopes a request needs (per tool, prompt or resource) checked
//! before it is served: 403 `insufficient_scope` naming them.

use axum::body::Body;
use axum::response::Response;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde::Serialize;

use crate::auth::AuthInfo;
use crate::jsonrpc::{self, RpcError};

/// What the endpoint says of itself as a protected resource (RFC 9728 §2), served at
/// `/.well-known/oauth-protected-resource{path}` (and at the root well-known URI).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProtectedResource {
    /// The resource identifier: the endpoint's public URL, which tokens are issued for.
    pub resource: String,
    /// The authorization servers that issue its tokens.
    pub authorization_servers: Vec<String>,
    /// The scopes a client needs for basic use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How tokens are sent: in the `Authorization` header only.
    pub bearer_methods_supported: Vec<String>,
    /// A name for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

impl ProtectedResource {
    /// The resource at `resource` (the endpoint's public URL), whose tokens
    /// `authorization_server` issues.
    pub fn new(resource: impl Into<String>, authorization_server: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: None,
            bearer_methods_supported: vec!["header".into()],
            resource_name: None,
        }
    }

    /// The scopes a client needs for basic use.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The path of the path-aware well-known URI (`/.well-known/oauth-protected-resource`
    /// followed by the resource's path), and the metadata's URL.
    pub(crate) fn well_known(&self) -> (String, String) {
        let (origin, path) = split_url(&self.resource);
        let path = format!("{WELL_KNOWN}{}", path.trim_end_matches('/'));
        let url = format!("{origin}{path}");
        (path, url)
    }
}

impl ProtectedResource {
    /// Whether `path` is one of the well-known URIs this metadata is served at.
    pub(crate) fn serves(&self, path: &[u8]) -> bool {
        path == WELL_KNOWN.as_bytes() || path == self.well_known().0.as_bytes()
    }
}

/// The well-known URI prefix of RFC 9728.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// `scheme://authority` and the path of an absolute URL (the path `/` when it has none).
fn split_url(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, "/"),
    }
}

/// The metadata document, as a response.
pub(crate) fn metadata_response(metadata: &ProtectedResource) -> Response {
    let body = serde_json::to_string(metadata).unwrap_or_else(|_| "{}".into());
    let mut response = Response::new(Body::from(body));
    let h = response.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
    response
}

/// The scopes of `required` that `auth` lacks.
pub(crate) fn missing_scopes(required: &[String], auth: Option<&AuthInfo>) -> Vec<String> {
    let granted = auth.map(|a| a.scopes.as_slice()).unwrap_or_default();
    required
        .iter()
        .filter(|s| !granted.contains(s))
        .cloned()
        .collect()
}

/// A `Bearer` challenge: the metadata URL, an error and the scopes it concerns.
pub(crate) fn challenge(
    metadata_url: Option<&str>,
    error: Option<&str>,
    scope: Option<&str>,
) -> String {
    let scope = scope.filter(|s| !s.is_empty()).map(|s| ("scope", s));
    scheme_challenge("Bearer", error, None, scope, metadata_url)
}

/// A challenge of `scheme` (RFC 9110 §11.6.1, the parameters as RFC 6750 §3 and RFC 9449
/// §7.1 order them): `error` and its description, one more parameter, the metadata URL.
/// The description keeps only what a quoted string may carry.
pub(crate) fn scheme_challenge(
    scheme: &str,
    error: Option<&str>,
    description: Option<&str>,
    param: Option<(&str, &str)>,
    metadata_url: Option<&str>,
) -> String {
    let mut params = Vec::new();
    if let Some(e) = error {
        params.push(format!("error=\"{e}\""));
    }
    if let Some(why) = description {
        let why: String = why
            .chars()
            .filter(|c| *c != '"' && *c != '\\' && (' '..='~').contains(c))
            .collect();
        params.push(format!("error_description=\"{why}\""));
    }
    if let Some((name, value)) = param {
        params.push(format!("{name}=\"{value}\""));
    }
    if let Some(url) = metadata_url {
        params.push(format!("resource_metadata=\"{url}\""));
    }
    if params.is_empty() {
        scheme.to_owned()
    } else {
        format!("{scheme} {}", params.join(", "))
    }
}

/// 403 `insufficient_scope` for a request that needs `scopes` (all it needs, in one
/// challenge, as the spec asks).
pub(crate) fn insufficient_scope(metadata_url: Option<&str>, scopes: &[String]) -> Response {
    let scope = scopes.join(" ");
    let text = jsonrpc::response(
        None,
        &Err(RpcError::invalid_request(format!(
            "Forbidden: the token lacks the scope this request needs ({scope})"
        ))),
    );
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = StatusCode::FORBIDDEN;
    let h = response.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let value = challenge(metadata_url, Some("insufficient_scope"), Some(&scope));
    if let Ok(v) = HeaderValue::from_str(&value) {
        h.insert(WWW_AUTHENTICATE, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_well_known_uri_inserts_the_resource_path() {
        let m = ProtectedResource::new("https://mcp.example.com/public/mcp", "https://as");
        assert_eq!(
            m.well_known(),
            (
                "/.well-known/oauth-protected-resource/public/mcp".into(),
                "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp".into()
            )
        );
        let root = ProtectedResource::new("https://mcp.example.com", "https://as");
        assert_eq!(root.well_known().0, "/.well-known/oauth-protected-resource");
    }

    #[test]
    fn a_challenge_names_the_error_the_scopes_and_the_metadata() {
        assert_eq!(
            challenge(Some("https://m"), Some("insufficient_scope"), Some("a b")),
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://m""#
        );
        assert_eq!(challenge(None, None, None), "Bearer");
        let auth = AuthInfo::new("c").with_scopes(["a"]);
        assert_eq!(
            missing_scopes(&["a".into(), "b".into()], Some(&auth)),
            ["b"]
        );
        assert_eq!(missing_scopes(&["a".into()], None), ["a"]);
    }
}
