//! Finding the authorization server: the MCP server's Protected Resource Metadata
//! (RFC 9728; the challenge's URL, then the path-aware and root well-known URIs), then
//! the authorization server's own metadata (RFC 8414 and OpenID Connect Discovery, in
//! the order the MCP spec gives), each checked as its RFC asks before it is used.

use serde::Deserialize;
use url::Url;

use crate::transport::TransportError;
use crate::transport::http::fetch::Fetch as OAuthHttp;

/// What an MCP server says of itself as a protected resource (RFC 9728).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct ResourceMetadata {
    /// The resource identifier: what tokens are requested for (`resource`, RFC 8707).
    pub resource: String,
    /// The authorization servers that issue tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes it knows, for a client that was given none.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// What an authorization server says of itself (RFC 8414, OpenID Connect Discovery).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct ServerMetadata {
    /// Its issuer identifier.
    pub issuer: String,
    /// Where the user authorizes (absent at a server that grants tokens only to
    /// machines).
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens become access tokens.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591), if offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes it knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// PKCE methods: tern requires `S256`.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// How clients may authenticate at the token endpoint.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// RFC 9207: authorization responses carry `iss`.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// Client ID Metadata Documents: a URL may be the `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    /// The grants it issues tokens for.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// The algorithms it takes in client assertions (`private_key_jwt`).
    #[serde(default)]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// The algorithms it takes in DPoP proofs (RFC 9449 §5.1): present when it binds
    /// tokens to keys.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// Where the user authorizes, once the server says it supports PKCE with S256 (the
    /// authorization code grant needs both).
    pub(crate) fn code_flow_endpoint(&self) -> Result<&str, TransportError> {
        let pkce = self
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"));
        if !pkce {
            return Err(TransportError::new(format!(
                "the authorization server {} does not say it supports PKCE with S256",
                self.issuer
            )));
        }
        self.authorization_endpoint.as_deref().ok_or_else(|| {
            TransportError::new(format!(
                "the authorization server {} has no authorization endpoint",
                self.issuer
            ))
        })
    }

    /// Whether it says it binds tokens to DPoP keys signed with ES256.
    pub(crate) fn takes_dpop(&self) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
    }

    /// Whether `scope` is among those it names.
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// Where to look for the Protected Resource Metadata of `resource`, in order: the
/// challenge's `resource_metadata`, the path-aware well-known URI, the root one.
pub(crate) fn resource_metadata_urls(resource: &Url, from_challenge: Option<&str>) -> Vec<Url> {
    let mut urls = Vec::new();
    if let Some(url) = from_challenge.and_then(|u| Url::parse(u).ok()) {
        urls.push(url);
    }
    let path = resource.path().trim_end_matches('/');
    let mut well_known = |suffix: &str| {
        let mut url = resource.clone();
        url.set_query(None);
        url.set_fragment(None);
        url.set_path(&format!("/.well-known/oauth-protected-resource{suffix}"));
        if !urls.contains(&url) {
            urls.push(url);
        }
    };
    if !path.is_empty() {
        well_known(path);
    }
    well_known("");
    urls
}

/// The metadata documents of the authorization server `issuer`, in the MCP spec's
/// order (RFC 8414 path insertion, OpenID path insertion, OpenID path appending; or,
/// without a path, RFC 8414 then OpenID).
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |path: String| {
        let mut url = issuer.clone();
        url.set_query(None);
        url.set_fragment(None);
        url.set_path(&path);
        url
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// Whether a Protected Resource Metadata `resource` may name the MCP endpoint
/// `endpoint`: the same origin, and a path that is the endpoint's or a parent of it.
pub(crate) fn resource_covers(resource: &str, endpoint: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    let same_origin = resource.scheme() == endpoint.scheme()
        && resource.host_str().map(str::to_ascii_lowercase)
            == endpoint.host_str().map(str::to_ascii_lowercase)
        && resource.port_or_known_default() == endpoint.port_or_known_default();
    let parent = resource.path().trim_end_matches('/');
    let path = endpoint.path().trim_end_matches('/');
    same_origin
        && (parent.is_empty()
            || path == parent
            || path
                .strip_prefix(parent)
                .is_some_and(|rest| rest.starts_with('/')))
}

/// The Protected Resource Metadata of `endpoint`: the first candidate that answers
/// with a document whose `resource` names the endpoint. A document for another
/// resource is refused, not skipped (RFC 9728 §3.3: it may be an attacker's).
pub(crate) async fn resource_metadata(
    http: &OAuthHttp,
    endpoint: &Url,
    from_challenge: Option<&str>,
) -> Result<ResourceMetadata, TransportError> {
    let urls = resource_metadata_urls(endpoint, from_challenge);
    let (url, answer) =
        first_document(http, urls, "no Protected Resource Metadata was found").await?;
    let metadata: ResourceMetadata = answer.json("the Protected Resource Metadata")?;
    if !resource_covers(&metadata.resource, endpoint) {
        return Err(TransportError::new(format!(
            "the Protected Resource Metadata at {url} is for {}, not {endpoint}",
            metadata.resource
        )));
    }
    if metadata.authorization_servers.is_empty() {
        return Err(TransportError::new(format!(
            "the Protected Resource Metadata at {url} names no authorization server"
        )));
    }
    Ok(metadata)
}

/// The first of `urls` that answers 2xx, and its answer; else why none did.
async fn first_document(
    http: &OAuthHttp,
    urls: Vec<Url>,
    none: &str,
) -> Result<(Url, crate::transport::http::fetch::Answer), TransportError> {
    let mut last = none.to_owned();
    for url in urls {
        match http.get(&url).await {
            Ok(answer) if answer.status.is_success() => return Ok((url, answer)),
            Ok(answer) => last = format!("{url}: HTTP {}", answer.status.as_u16()),
            // The fetch's own message names the URL; its `transport:` prefix is the
            // returned error's to add, once.
            Err(e) => last = e.message().to_owned(),
        }
    }
    Err(TransportError::new(last))
}

/// The metadata of the authorization server `issuer`, from the first document found
/// whose `issuer` is exactly `issuer`.
pub(crate) async fn server_metadata(
    http: &OAuthHttp,
    issuer: &str,
) -> Result<ServerMetadata, TransportError> {
    let issuer_url = Url::parse(issuer)
        .map_err(|e| TransportError::new(format!("the issuer {issuer:?} is not a URL: {e}")))?;
    let none = format!("no metadata was found for the authorization server {issuer}");
    let (url, answer) = first_document(http, server_metadata_urls(&issuer_url), &none).await?;
    let metadata: ServerMetadata = answer.json("the authorization server metadata")?;
    // RFC 8414 §3.3: identical, by simple string comparison, or not used at all.
    if metadata.issuer != issuer {
        return Err(TransportError::new(format!(
            "the authorization server metadata at {url} names the issuer {}, not {issuer}",
            metadata.issuer
        )));
    }
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: Vec<Url>) -> Vec<String> {
        list.into_iter().map(String::from).collect()
    }

    #[tokio::test]
    async fn an_unreachable_metadata_document_is_said_once_with_its_url() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let url = Url::parse(&format!("http://127.0.0.1:{port}/.well-known/x")).unwrap();
        let http = OAuthHttp::new().unwrap();
        let Err(error) = first_document(&http, vec![url], "none").await else {
            panic!("nothing listens there");
        };
        let said = error.to_string();
        assert_eq!(said.matches("transport:").count(), 1, "{said}");
        assert!(
            said.contains(&format!("127.0.0.1:{port}/.well-known/x")),
            "{said}"
        );
    }

    #[test]
    fn protected_resource_metadata_is_looked_for_in_the_spec_order() {
        let endpoint = Url::parse("https://mcp.example.com/public/mcp").unwrap();
        assert_eq!(
            urls(resource_metadata_urls(
                &endpoint,
                Some("https://meta.example.com/prm")
            )),
            [
                "https://meta.example.com/prm",
                "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        let root = Url::parse("https://mcp.example.com/").unwrap();
        assert_eq!(
            urls(resource_metadata_urls(&root, None)),
            ["https://mcp.example.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_is_looked_for_in_the_spec_order() {
        let tenant = Url::parse("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            urls(server_metadata_urls(&tenant)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let bare = Url::parse("https://auth.example.com").unwrap();
        assert_eq!(
            urls(server_metadata_urls(&bare)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_resource_covers_its_own_endpoint_and_those_below_it_only() {
        let endpoint = Url::parse("https://mcp.example.com/api/mcp").unwrap();
        assert!(resource_covers(
            "https://mcp.example.com/api/mcp",
            &endpoint
        ));
        assert!(resource_covers("https://mcp.example.com", &endpoint));
        assert!(resource_covers(
            "https://MCP.example.com:443/api",
            &endpoint
        ));
        assert!(!resource_covers("https://mcp.example.com/ap", &endpoint));
        assert!(!resource_covers(
            "https://evil.example.com/api/mcp",
            &endpoint
        ));
        assert!(!resource_covers(
            "http://mcp.example.com/api/mcp",
            &endpoint
        ));
        assert!(!resource_covers("not a url", &endpoint));
    }
}
