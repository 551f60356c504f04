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

use super::endpoint::{TokenEndpoint, fail};
use super::jose::ClientKey;
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

/// How a client authenticates at a token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `client_secret_basic`: id and secret in the `Authorization` header.
    Basic,
    /// `client_secret_post`: id and secret in the form.
    Post,
    /// `private_key_jwt`: a signed assertion in the form (RFC 7523 §2.2).
    KeyJwt,
    /// `none`: a public client, its id in the form.
    None,
}

/// Form fields: names and values.
pub(crate) type Fields = Vec<(&'static str, String)>;

/// What authenticates a client at a token endpoint: form fields, or the `Basic`
/// credentials (id, secret).
pub(crate) struct Credentials<'a> {
    pub(crate) fields: Fields,
    pub(crate) basic: Option<(&'a str, &'a str)>,
}

/// Who the client is at one authorization server, what it signs with, and the token
/// endpoint's way in.
#[derive(Clone)]
pub(crate) struct Caller<'a> {
    pub(crate) registration: &'a Registration,
    pub(crate) key: Option<&'a ClientKey>,
    pub(crate) endpoint: TokenEndpoint,
}

impl Caller<'_> {
    /// How the client authenticates at `server`'s token endpoint: as registration
    /// said, else with its key, else with its secret as the server allows
    /// (`client_secret_basic` first), else as a public client.
    pub(crate) fn method(&self, server: &ServerMetadata) -> Method {
        let allowed = server.token_endpoint_auth_methods_supported.as_deref();
        let allows = |m: &str| allowed.is_some_and(|list| list.iter().any(|x| x == m));
        match (
            self.registration.token_endpoint_auth_method.as_deref(),
            self.key,
            &self.registration.client_secret,
        ) {
            (Some("private_key_jwt"), Some(_), _) | (None, Some(_), _) => Method::KeyJwt,
            (Some("client_secret_post"), _, Some(_)) => Method::Post,
            (Some("client_secret_basic"), _, Some(_)) => Method::Basic,
            (Some(_), _, _) | (None, None, None) => Method::None,
            (None, None, Some(_))
                if !allows("client_secret_basic") && allows("client_secret_post") =>
            {
                Method::Post
            }
            (None, None, Some(_)) => Method::Basic,
        }
    }

    /// The form fields and the `Basic` credentials that authenticate the client at
    /// `server` (an assertion signed now, for `private_key_jwt`).
    pub(crate) fn credentials(
        &self,
        server: &ServerMetadata,
    ) -> Result<Credentials<'_>, TransportError> {
        let id = self.registration.client_id.as_str();
        let secret = self
            .registration
            .client_secret
            .as_deref()
            .unwrap_or_default();
        let (fields, basic) = match self.method(server) {
            Method::Basic => (Vec::new(), Some((id, secret))),
            Method::Post => (
                vec![
                    ("client_id", id.to_owned()),
                    ("client_secret", secret.to_owned()),
                ],
                None,
            ),
            Method::KeyJwt => (self.assertion_fields(server)?, None),
            Method::None => (vec![("client_id", id.to_owned())], None),
        };
        Ok(Credentials { fields, basic })
    }

    /// `client_id`, `client_assertion_type` and a `client_assertion` for `server`.
    fn assertion_fields(&self, server: &ServerMetadata) -> Result<Fields, TransportError> {
        let Some(key) = self.key else {
            return Err(fail("private_key_jwt needs the client's signing key"));
        };
        if let Some(algs) = &server.token_endpoint_auth_signing_alg_values_supported {
            if !algs.iter().any(|a| a == key.algorithm()) {
                return Err(fail(format!(
                    "{} takes client assertions signed with {}, not {}",
                    server.issuer,
                    algs.join(", "),
                    key.algorithm()
                )));
            }
        }
        let id = &self.registration.client_id;
        Ok(vec![
            ("client_id", id.clone()),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ),
            ("client_assertion", key.assertion(id, &server.issuer)?),
        ])
    }

    /// The `oauth2` crate's client for the authorization code grant at `server`.
    fn oauth2_client(
        &self,
        server: &ServerMetadata,
        redirect_uri: &str,
    ) -> Result<Client, TransportError> {
        let method = self.method(server);
        let auth_type = match method {
            Method::Basic => AuthType::BasicAuth,
            _ => AuthType::RequestBody,
        };
        let auth_url = server.authorization_endpoint.clone().unwrap_or_default();
        let mut client = BasicClient::new(ClientId::new(self.registration.client_id.clone()))
            .set_auth_uri(AuthUrl::new(auth_url).map_err(fail)?)
            .set_token_uri(TokenUrl::new(server.token_endpoint.clone()).map_err(fail)?)
            .set_redirect_uri(RedirectUrl::new(redirect_uri.to_owned()).map_err(fail)?)
            .set_auth_type(auth_type);
        if let (Method::Basic | Method::Post, Some(secret)) =
            (method, &self.registration.client_secret)
        {
            client = client.set_client_secret(ClientSecret::new(secret.clone()));
        }
        Ok(client)
    }

    /// The assertion fields a `private_key_jwt` client adds to the `oauth2` crate's
    /// requests (which send only its id).
    fn extra_fields(&self, server: &ServerMetadata) -> Result<Fields, TransportError> {
        match self.method(server) {
            Method::KeyJwt => Ok(self
                .assertion_fields(server)?
                .into_iter()
                .filter(|(name, _)| *name != "client_id")
                .collect()),
            _ => Ok(Vec::new()),
        }
    }
}

/// What one authorization needs.
pub(crate) struct Authorization<'a> {
    pub(crate) server: &'a ServerMetadata,
    pub(crate) caller: Caller<'a>,
    pub(crate) agent: &'a dyn UserAgent,
    /// The resource tokens are for (RFC 8707), from the Protected Resource Metadata.
    pub(crate) resource: &'a str,
    pub(crate) scopes: &'a [String],
}

impl Authorization<'_> {
    /// Sends the user to authorize, checks the redirect and exchanges the code.
    pub(crate) async fn run(&self) -> Result<Tokens, TransportError> {
        self.server.code_flow_endpoint()?;
        let redirect_uri = self.agent.redirect_uri();
        let client = self.caller.oauth2_client(self.server, &redirect_uri)?;
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
        let mut exchange = client
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", self.resource);
        for (name, value) in self.caller.extra_fields(self.server)? {
            exchange = exchange.add_extra_param(name, value);
        }
        let response = exchange
            .request_async(&for_oauth2(&self.caller.endpoint))
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
    caller: Caller<'_>,
    server: &ServerMetadata,
    redirect_uri: &str,
    held: &Tokens,
) -> Result<Tokens, TransportError> {
    let Some(refresh_token) = &held.refresh_token else {
        return Err(fail("no refresh token"));
    };
    let client = caller.oauth2_client(server, redirect_uri)?;
    let refresh = RefreshToken::new(refresh_token.clone());
    let mut exchange = client
        .exchange_refresh_token(&refresh)
        .add_extra_param("resource", held.resource.as_str());
    for (name, value) in caller.extra_fields(server)? {
        exchange = exchange.add_extra_param(name, value);
    }
    let response = exchange
        .request_async(&for_oauth2(&caller.endpoint))
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

pub(crate) fn tokens(
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
        // The crate reads the type in lower case; kept as RFC 9449 spells it.
        token_type: match response.token_type() {
            oauth2::basic::BasicTokenType::Extension(t) if t.eq_ignore_ascii_case("dpop") => {
                "DPoP".into()
            }
            oauth2::basic::BasicTokenType::Extension(t) => t.clone(),
            _ => "Bearer".into(),
        },
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

/// The client the `oauth2` crate's requests go through: the token endpoint's, with its
/// DPoP proofs.
pub(crate) fn for_oauth2(
    endpoint: &TokenEndpoint,
) -> impl Fn(
    oauth2::HttpRequest,
) -> futures_util::future::BoxFuture<'static, Result<oauth2::HttpResponse, TransportError>>
+ '_ {
    move |request: oauth2::HttpRequest| {
        let endpoint = endpoint.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let answer = endpoint.send(&parts, &body).await?;
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
