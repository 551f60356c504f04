//! OAuth 2.1 for the HTTP client (feature `oauth`): [`OAuthClient`], an
//! [`Authorizer`] that answers a server's 401 or 403 the way the MCP authorization spec
//! lays out, and the parts an application chooses: where the user is sent
//! ([`UserAgent`]: [`LoopbackRedirect`], [`FetchRedirect`], or its own) and where
//! credentials are kept ([`CredentialStore`]: [`MemoryStore`], [`FileStore`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tern_mcp::oauth::{LoopbackRedirect, OAuthClient};
//! use tern_mcp::transport::http::client::HttpClientTransport;
//!
//! let oauth = OAuthClient::builder("My MCP app")
//!     .user_agent(LoopbackRedirect::new(8976, |url| println!("Open {url} to sign in")))
//!     .build()?;
//! let transport = HttpClientTransport::builder("https://mcp.example.com/mcp")
//!     .authorizer(Arc::new(oauth))
//!     .build()?;
//! # let _ = transport;
//! # Ok(())
//! # }
//! ```
//!
//! On a 401 the client refreshes the token it holds if it can; otherwise it finds the
//! server's authorization server (Protected Resource Metadata, then the server's own
//! metadata, each checked), registers (pre-registered credentials, a Client ID Metadata
//! Document, or dynamic registration, in that order), and sends the user to authorize
//! with PKCE S256, `resource` and the scopes the challenge names (else those the
//! resource lists; `offline_access` added where the server offers refresh tokens). On a
//! 403 `insufficient_scope` it steps up with the union of its scopes and the
//! challenge's. The HTTP client resends a refused request at most three
//! times.

mod agent;
mod challenge;
mod discovery;
mod flow;
mod store;

use std::collections::HashMap;
use std::sync::Arc;

use url::Url;

pub use agent::{FetchRedirect, LoopbackRedirect, UserAgent};

pub(crate) use challenge::BearerChallenge;
pub(crate) use discovery::{ResourceMetadata, ServerMetadata};
pub use store::{CredentialStore, FileStore, MemoryStore, Registration, Tokens};

use crate::transport::http::client::{Authorizer, Challenge};
use crate::transport::http::fetch::Fetch as OAuthHttp;
use crate::transport::{BoxFuture, TransportError};
use flow::{Authorization, Identity};

/// An OAuth 2.1 client for MCP servers behind authorization. Cheap to clone; give it
/// to [`HttpClientBuilder::authorizer`](crate::transport::http::client::HttpClientBuilder::authorizer).
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: OAuthHttp,
    identity: Identity,
    agent: Arc<dyn UserAgent>,
    store: Arc<dyn CredentialStore>,
    /// One authorization at a time; the metadata of the servers seen.
    flight: tokio::sync::Mutex<HashMap<String, ServerMetadata>>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_name", &self.inner.identity.client_name)
            .finish_non_exhaustive()
    }
}

/// Builds an [`OAuthClient`].
pub struct OAuthClientBuilder {
    identity: Identity,
    agent: Option<Arc<dyn UserAgent>>,
    store: Arc<dyn CredentialStore>,
}

impl OAuthClient {
    /// A client that registers as `client_name`.
    pub fn builder(client_name: impl Into<String>) -> OAuthClientBuilder {
        OAuthClientBuilder {
            identity: Identity {
                client_name: client_name.into(),
                pre_registered: None,
                metadata_url: None,
                application_type: "native".into(),
            },
            agent: None,
            store: Arc::new(MemoryStore::default()),
        }
    }
}

impl OAuthClientBuilder {
    /// Where the user is sent to authorize (required).
    pub fn user_agent(mut self, agent: impl UserAgent) -> Self {
        self.agent = Some(Arc::new(agent));
        self
    }

    /// Credentials the authorization server issued beforehand: used before any other
    /// way of registering.
    pub fn pre_registered(mut self, registration: Registration) -> Self {
        self.identity.pre_registered = Some(registration);
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document: used as the
    /// `client_id` where the authorization server supports such documents.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.identity.metadata_url = Some(url.into());
        self
    }

    /// `web` for a client whose redirect URI is a web server's (default `native`: a
    /// desktop, mobile or command-line app), as dynamic registration declares it.
    pub fn web_application(mut self) -> Self {
        self.identity.application_type = "web".into();
        self
    }

    /// Where registrations and tokens are kept (default: in memory).
    pub fn store(mut self, store: Arc<dyn CredentialStore>) -> Self {
        self.store = store;
        self
    }

    /// Builds the client. Fails without a user agent.
    pub fn build(self) -> Result<OAuthClient, TransportError> {
        let agent = self
            .agent
            .ok_or_else(|| TransportError::new("an OAuthClient needs a user agent"))?;
        Ok(OAuthClient {
            inner: Arc::new(Inner {
                http: OAuthHttp::new()?,
                identity: self.identity,
                agent,
                store: self.store,
                flight: tokio::sync::Mutex::new(HashMap::new()),
            }),
        })
    }
}

impl Authorizer for OAuthClient {
    fn authorize<'a>(
        &'a self,
        challenge: Challenge<'a>,
    ) -> BoxFuture<'a, Result<Option<String>, TransportError>> {
        Box::pin(self.inner.answer(challenge))
    }
}

impl Inner {
    async fn answer(&self, challenge: Challenge<'_>) -> Result<Option<String>, TransportError> {
        let mut servers = self.flight.lock().await;
        let endpoint = Url::parse(&challenge.resource.to_string())
            .map_err(|e| TransportError::new(format!("the MCP endpoint is not a URL: {e}")))?;
        let key = endpoint.as_str().to_owned();
        let bearer = challenge
            .www_authenticate
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
        let held = self.store.tokens(&key);
        // Another request already got a newer token while this one waited.
        if let Some(held) = &held {
            if challenge.token.is_some_and(|t| t != held.access_token) {
                return Ok(Some(held.access_token.clone()));
            }
        }
        let step_up = challenge.status == 403;
        if step_up && !bearer.is_insufficient_scope() {
            // A 403 for another reason is not ours to mend.
            return Ok(None);
        }
        let prm = discovery::resource_metadata(
            &self.http,
            &endpoint,
            bearer.resource_metadata.as_deref(),
        )
        .await?;
        // The first authorization server listed (RFC 9728 §7.6 leaves the choice).
        let issuer = prm.authorization_servers[0].clone();
        // A refresh only with the server that still issues this resource's tokens: one
        // that moved (another issuer now) means registering and authorizing there.
        let same_issuer = held.as_ref().filter(|t| t.issuer == issuer);
        if !step_up {
            if let Some(token) = self.refreshed(&mut servers, &key, same_issuer).await {
                return Ok(Some(token));
            }
        }
        let server = discovery::server_metadata(&self.http, &issuer).await?;
        servers.insert(issuer.clone(), server.clone());
        let registration = match self.store.registration(&issuer) {
            Some(r) => r,
            None => {
                let redirect = self.agent.redirect_uri();
                let r = flow::register(&self.http, &server, &self.identity, &redirect).await?;
                self.store.save_registration(&issuer, &r)?;
                r
            }
        };
        let scopes = choose_scopes(&bearer, &prm, &server, held.as_ref(), step_up);
        let tokens = Authorization {
            http: &self.http,
            server: &server,
            registration: &registration,
            agent: self.agent.as_ref(),
            resource: &prm.resource,
            scopes: &scopes,
        }
        .run()
        .await?;
        self.store.save_tokens(&key, Some(&tokens))?;
        Ok(Some(tokens.access_token))
    }

    /// A new access token from the held refresh token, if there is one and the server
    /// takes it; `None` (and the tokens forgotten) otherwise.
    async fn refreshed(
        &self,
        servers: &mut HashMap<String, ServerMetadata>,
        key: &str,
        held: Option<&Tokens>,
    ) -> Option<String> {
        let held = held.filter(|t| t.refresh_token.is_some())?;
        let registration = self.store.registration(&held.issuer)?;
        let server = match servers.get(&held.issuer) {
            Some(s) => s.clone(),
            None => discovery::server_metadata(&self.http, &held.issuer)
                .await
                .ok()?,
        };
        let redirect = self.agent.redirect_uri();
        match flow::refresh(&self.http, &server, &registration, &redirect, held).await {
            Ok(tokens) => {
                self.store.save_tokens(key, Some(&tokens)).ok()?;
                Some(tokens.access_token)
            }
            Err(e) => {
                tracing::debug!(error = %e, "the refresh token was refused: authorizing anew");
                let _ = self.store.save_tokens(key, None);
                None
            }
        }
    }
}

/// The scopes to ask for: the challenge's (with those held, on a step-up or a second
/// authorization), else the resource's `scopes_supported`, else none; and
/// `offline_access` where the authorization server offers it.
fn choose_scopes(
    bearer: &BearerChallenge,
    prm: &ResourceMetadata,
    server: &ServerMetadata,
    held: Option<&Tokens>,
    step_up: bool,
) -> Vec<String> {
    let challenged = bearer.scopes();
    let wanted: Vec<String> = if !challenged.is_empty() {
        challenged
    } else {
        prm.scopes_supported.clone().unwrap_or_default()
    };
    // On a step-up, the union: what was asked before stays asked.
    let mut scopes: Vec<String> = match held {
        Some(t) if step_up => t.scopes.clone(),
        _ => Vec::new(),
    };
    for scope in wanted {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if server.supports_scope("offline_access") && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".into());
    }
    scopes
}
