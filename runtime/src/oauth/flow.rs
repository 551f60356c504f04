//! One authorization, as the MCP spec orders it: the client's identity with the chosen
//! authorization server (pre-registered, a Client ID Metadata Document, or dynamic
//! registration), the authorization code with PKCE S256 and `resource`, the redirect
//! checked (`state`, RFC 9207 `iss`), the code exchanged; and refreshing.
//!
//! The `oauth2` crate builds the authorization URL, the PKCE pair and the token
//! requests, and authenticates the client at the token endpoint.

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    TokenResponse as _, TokenUrl,
};
use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::agent::UserAgent;
use super::discovery::ServerMetadata;
use bytes::Bytes;
use http_body_util::Full;

use super::store::{Registration, Tokens};
use crate::transport::TransportError;
use crate::transport::http::fetch::Fetch as OAuthHttp;

type Client = BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// What the client says of itself when it registers, and how it may identify itself.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub(crate) client_name: String,
    /// Credentials the authorization server issued beforehand, used first.
    pub(crate) pre_registered: Option<Registration>,
    /// A Client ID Metadata Document URL, used where the server supports them.
    pub(crate) metadata_url: Option<String>,
    /// `native` or `web` (SEP-837), for dynamic registration.
    pub(crate) application_type: String,
}

fn fail(what: impl std::fmt::Display) -> TransportError {
    TransportError::new(format!("authorization failed: {what}"))
}

/// The client's registration with `server`, in the spec's order: pre-registered
/// credentials, a Client ID Metadata Document, dynamic registration.
pub(crate) async fn register(
    http: &OAuthHttp,
    server: &ServerMetadata,
    identity: &Identity,
    redirect_uri: &str,
) -> Result<Registration, TransportError> {
    if let Some(pre) = &identity.pre_registered {
        return Ok(pre.clone());
    }
    if let (Some(url), Some(true)) = (
        &identity.metadata_url,
        server.client_id_metadata_document_supported,
    ) {
        let mut registration = Registration::new(url.clone());
        registration.token_endpoint_auth_method = Some("none".into());
        return Ok(registration);
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(fail(format!(
            "{} offers no way to register (no pre-registered client, no Client ID Metadata \
             Document support, no registration endpoint)",
            server.issuer
        )));
    };
    let body = json!({
        "client_name": identity.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": identity.application_type,
    });
    let request = http::Request::builder()
        .method(http::Method::POST)
        .uri(endpoint.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .map_err(fail)?;
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        #[serde(default)]
        client_secret: Option<String>,
        #[serde(default)]
        token_endpoint_auth_method: Option<String>,
    }
    let registered: Registered = http
        .send(request)
        .await?
        .json("the registration response")?;
    Ok(Registration {
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        token_endpoint_auth_method: registered.token_endpoint_auth_method,
    })
}

/// How the client authenticates at `server`'s token endpoint: as registration said, else
/// with its secret as the server allows (`client_secret_basic` first), else as a public
/// client (`none`).
fn auth_method(registration: &Registration, server: &ServerMetadata) -> (AuthType, bool) {
    let allowed = server.token_endpoint_auth_methods_supported.as_deref();
    let method = match (
        &registration.token_endpoint_auth_method,
        &registration.client_secret,
    ) {
        (Some(m), _) => m.as_str(),
        (None, None) => "none",
        (None, Some(_)) => match allowed {
            Some(list)
                if !list.iter().any(|m| m == "client_secret_basic")
                    && list.iter().any(|m| m == "client_secret_post") =>
            {
                "client_secret_post"
            }
            _ => "client_secret_basic",
        },
    };
    match method {
        "client_secret_post" => (AuthType::RequestBody, true),
        "none" => (AuthType::RequestBody, false),
        _ => (AuthType::BasicAuth, true),
    }
}

fn client(
    registration: &Registration,
    server: &ServerMetadata,
    redirect_uri: &str,
) -> Result<Client, TransportError> {
    let (auth_type, with_secret) = auth_method(registration, server);
    let mut client = BasicClient::new(ClientId::new(registration.client_id.clone()))
        .set_auth_uri(AuthUrl::new(server.authorization_endpoint.clone()).map_err(fail)?)
        .set_token_uri(TokenUrl::new(server.token_endpoint.clone()).map_err(fail)?)
        .set_redirect_uri(RedirectUrl::new(redirect_uri.to_owned()).map_err(fail)?)
        .set_auth_type(auth_type);
    if let (true, Some(secret)) = (with_secret, &registration.client_secret) {
        client = client.set_client_secret(ClientSecret::new(secret.clone()));
    }
    Ok(client)
}

/// What one authorization needs.
pub(crate) struct Authorization<'a> {
    pub(crate) http: &'a OAuthHttp,
    pub(crate) server: &'a ServerMetadata,
    pub(crate) registration: &'a Registration,
    pub(crate) agent: &'a dyn UserAgent,
    /// The resource tokens are for (RFC 8707), from the Protected Resource Metadata.
    pub(crate) resource: &'a str,
    pub(crate) scopes: &'a [String],
}

impl Authorization<'_> {
    /// Sends the user to authorize, checks the redirect and exchanges the code.
    pub(crate) async fn run(&self) -> Result<Tokens, TransportError> {
        let redirect_uri = self.agent.redirect_uri();
        let client = client(self.registration, self.server, &redirect_uri)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(CsrfToken::new_random)
            .set_pkce_challenge(challenge)
            .add_extra_param("resource", self.resource);
        for scope in self.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        // OpenID Connect grants offline_access only with consent asked for (Core §11).
        if self.scopes.iter().any(|s| s == "offline_access") {
            request = request.add_extra_param("prompt", "consent");
        }
        let (url, state) = request.url();
        let redirect = self.agent.authorize(url).await?;
        let code = self.check_redirect(&redirect, state.secret())?;
        let exchange = client
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", self.resource);
        let response = exchange
            .request_async(&for_oauth2(self.http))
            .await
            .map_err(token_error)?;
        Ok(tokens(
            &self.server.issuer,
            self.resource,
            response,
            self.scopes,
            None,
        ))
    }

    /// The code in the redirect, once `state` and `iss` check out (RFC 9207 §2.4, as the
    /// MCP spec tabulates it: a present `iss` must be the issuer exactly; an absent one
    /// is refused when the server said it sends one).
    fn check_redirect(&self, redirect: &Url, state: &str) -> Result<String, TransportError> {
        let param = |name: &str| {
            redirect
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        match param("iss") {
            Some(iss) if iss != self.server.issuer => {
                return Err(fail(format!(
                    "the authorization response came from {iss}, not {}",
                    self.server.issuer
                )));
            }
            None if self.server.authorization_response_iss_parameter_supported == Some(true) => {
                return Err(fail(
                    "the authorization response lacks the iss its server promised",
                ));
            }
            _ => {}
        }
        if param("state").as_deref() != Some(state) {
            return Err(fail(
                "the authorization response's state is not the one sent",
            ));
        }
        if let Some(error) = param("error") {
            let description = param("error_description").unwrap_or_default();
            return Err(fail(format!(
                "the authorization server said {error}: {description}"
            )));
        }
        param("code").ok_or_else(|| fail("the authorization response carries no code"))
    }
}

/// Trades `held`'s refresh token for new tokens.
pub(crate) async fn refresh(
    http: &OAuthHttp,
    server: &ServerMetadata,
    registration: &Registration,
    redirect_uri: &str,
    held: &Tokens,
) -> Result<Tokens, TransportError> {
    let Some(refresh_token) = &held.refresh_token else {
        return Err(fail("no refresh token"));
    };
    let client = client(registration, server, redirect_uri)?;
    let response = client
        .exchange_refresh_token(&RefreshToken::new(refresh_token.clone()))
        .add_extra_param("resource", held.resource.as_str())
        .request_async(&for_oauth2(http))
        .await
        .map_err(token_error)?;
    Ok(tokens(
        &server.issuer,
        &held.resource,
        response,
        &held.scopes,
        Some(refresh_token),
    ))
}

fn tokens(
    issuer: &str,
    resource: &str,
    response: oauth2::basic::BasicTokenResponse,
    scopes: &[String],
    previous_refresh: Option<&String>,
) -> Tokens {
    Tokens {
        issuer: issuer.to_owned(),
        resource: resource.to_owned(),
        access_token: response.access_token().secret().clone(),
        // A refresh that issues no new refresh token keeps the old one (RFC 6749 §6).
        refresh_token: response
            .refresh_token()
            .map(|t| t.secret().clone())
            .or_else(|| previous_refresh.cloned()),
        scopes: scopes.to_vec(),
    }
}

fn token_error(
    e: RequestTokenError<TransportError, oauth2::basic::BasicErrorResponse>,
) -> TransportError {
    match e {
        RequestTokenError::ServerResponse(r) => fail(format!("the token endpoint said {r}")),
        RequestTokenError::Request(t) => t,
        RequestTokenError::Parse(e, _) => fail(format!("an unreadable token response: {e}")),
        RequestTokenError::Other(e) => fail(e),
    }
}

/// The client the `oauth2` crate's requests go through.
pub(crate) fn for_oauth2(
    http: &OAuthHttp,
) -> impl Fn(
    oauth2::HttpRequest,
) -> futures_util::future::BoxFuture<'static, Result<oauth2::HttpResponse, TransportError>>
+ '_ {
    move |request: oauth2::HttpRequest| {
        let http = http.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let request = http::Request::from_parts(parts, Full::new(Bytes::from(body)));
            let answer = http.send(request).await?;
            let mut response = http::Response::new(answer.body.to_vec());
            *response.status_mut() = answer.status;
            // The crate checks the content type before it parses the JSON.
            if let Some(content_type) = answer.content_type {
                response
                    .headers_mut()
                    .insert(http::header::CONTENT_TYPE, content_type);
            }
            Ok(response)
        })
    }
}
