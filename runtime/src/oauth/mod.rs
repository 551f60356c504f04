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
//!
//! A client with no user at a browser picks a machine grant instead of a user agent:
//! [`client_credentials`](OAuthClientBuilder::client_credentials) (a secret, or a
//! [`ClientKey`] for `private_key_jwt`),
//! [`workload_identity`](OAuthClientBuilder::workload_identity) (the JWT bearer grant
//! with a platform-issued token from a [`TokenSource`]) or
//! [`enterprise`](OAuthClientBuilder::enterprise) (the user's identity assertion
//! exchanged at the enterprise's [`IdentityProvider`] for an ID-JAG). A machine grant
//! fails once and clearly: it is not retried, and no other grant is tried.
//! [`dpop`](OAuthClientBuilder::dpop) binds tokens to a key of the client's (RFC 9449)
//! wherever the authorization server offers it.

mod agent;
mod challenge;
mod discovery;
mod endpoint;
mod flow;
mod grant;
mod jose;
mod store;

use std::collections::HashMap;
use std::sync::Arc;

use url::Url;

pub use agent::{FetchRedirect, LoopbackRedirect, UserAgent};
pub use grant::{IdentityProvider, TokenSource};
pub use jose::ClientKey;

pub(crate) use challenge::BearerChallenge;
pub(crate) use discovery::{ResourceMetadata, ServerMetadata};
pub use store::{CredentialStore, FileStore, MemoryStore, Registration, Tokens};

use crate::transport::http::client::{Authorizer, Challenge};

/// How many bound access tokens are remembered for proofs.
const MAX_BOUND: usize = 16;
use crate::transport::http::fetch::Fetch as OAuthHttp;
use crate::transport::{BoxFuture, TransportError};
use endpoint::TokenEndpoint;
use flow::{Authorization, Caller, Identity};
use grant::{Grant, MachineGrant};
use jose::DpopKey;

/// An OAuth 2.1 client for MCP servers behind authorization. Cheap to clone; give it
/// to [`HttpClientBuilder::authorizer`](crate::transport::http::client::HttpClientBuilder::authorizer).
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: OAuthHttp,
    identity: Identity,
    flow: Flow,
    /// Signs the client's assertions (`private_key_jwt`).
    key: Option<ClientKey>,
    /// Binds tokens to the client, where the authorization server does DPoP.
    dpop: Option<Arc<DpopKey>>,
    store: Arc<dyn CredentialStore>,
    /// One authorization at a time; the metadata of the servers seen.
    flight: tokio::sync::Mutex<HashMap<String, ServerMetadata>>,
    /// The DPoP-bound access tokens handed to transports, newest last (a few: one per
    /// resource, and the one it replaces): what a request's proof is made for, looked up
    /// without the store.
    bound: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_name", &self.inner.identity.client_name)
            .finish_non_exhaustive()
    }
}

/// How tokens are got: a user authorizes, or a machine grant.
enum Flow {
    Code(Arc<dyn UserAgent>),
    Machine(MachineGrant),
}

/// Builds an [`OAuthClient`].
pub struct OAuthClientBuilder {
    identity: Identity,
    agent: Option<Arc<dyn UserAgent>>,
    machine: Option<MachineGrant>,
    key: Option<ClientKey>,
    dpop: bool,
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
            machine: None,
            key: None,
            dpop: false,
            store: Arc::new(MemoryStore::default()),
        }
    }
}

impl OAuthClientBuilder {
    /// Where the user is sent to authorize: the authorization code grant, for a client
    /// that acts for a user (this or a machine grant is required).
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

    /// The client credentials grant (RFC 6749 §4.4): a service acting for itself, with
    /// `registration`'s secret, or with its [`signing_key`](Self::signing_key).
    pub fn client_credentials(mut self, registration: Registration) -> Self {
        self.identity.pre_registered = Some(registration);
        self.machine = Some(MachineGrant::ClientCredentials);
        self
    }

    /// Workload identity federation: the JWT bearer grant (RFC 7523 §2.1) with the
    /// workload's platform-issued token from `token`. A client registered beforehand
    /// ([`pre_registered`](Self::pre_registered)) sends its `client_id` too.
    pub fn workload_identity(mut self, token: TokenSource) -> Self {
        self.machine = Some(MachineGrant::Workload(token));
        self
    }

    /// Enterprise-managed authorization: the user's identity assertion exchanged at
    /// `idp` for an ID-JAG (RFC 8693), then the JWT bearer grant with it at the MCP
    /// server's authorization server, as the client
    /// [`pre_registered`](Self::pre_registered) there.
    pub fn enterprise(mut self, idp: IdentityProvider) -> Self {
        self.machine = Some(MachineGrant::Enterprise(idp));
        self
    }

    /// Authenticates the client at token endpoints with assertions signed by `key`
    /// (`private_key_jwt`, RFC 7523 §2.2) rather than a secret.
    pub fn signing_key(mut self, key: ClientKey) -> Self {
        self.key = Some(key);
        self
    }

    /// Binds tokens to a key of the client's (DPoP, RFC 9449) wherever the authorization
    /// server offers it: a proof on every token request and every request to the MCP
    /// server, each server's nonce honoured. The key is kept in the
    /// [`store`](Self::store) (made on first use), so a restarted client keeps using the
    /// tokens bound to it.
    pub fn dpop(mut self) -> Self {
        self.dpop = true;
        self
    }

    /// Builds the client. Fails without a user agent or a machine grant, with both, or
    /// when the grant lacks the credentials it needs.
    pub fn build(self) -> Result<OAuthClient, TransportError> {
        let flow = match (self.agent, self.machine) {
            (Some(agent), None) => Flow::Code(agent),
            (None, Some(grant)) => {
                let registration = self.identity.pre_registered.as_ref();
                let needs = match &grant {
                    MachineGrant::ClientCredentials => registration
                        .is_none_or(|r| r.client_secret.is_none() && self.key.is_none())
                        .then_some("client credentials need a secret or a signing key"),
                    MachineGrant::Enterprise(_) => registration.is_none().then_some(
                        "enterprise-managed authorization needs the client's pre-registered \
                         credentials at the authorization server",
                    ),
                    MachineGrant::Workload(_) => None,
                };
                if let Some(needs) = needs {
                    return Err(TransportError::new(format!("an OAuthClient's {needs}")));
                }
                Flow::Machine(grant)
            }
            (None, None) => {
                return Err(TransportError::new(
                    "an OAuthClient needs a user agent or a machine grant",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(TransportError::new(
                    "an OAuthClient has either a user agent or a machine grant, not both",
                ));
            }
        };
        let dpop = if self.dpop {
            Some(Arc::new(match self.store.dpop_key() {
                Some(pem) => DpopKey::from_pem(&pem)?,
                None => {
                    let (key, pem) = DpopKey::generate()?;
                    self.store.save_dpop_key(&pem)?;
                    key
                }
            }))
        } else {
            None
        };
        Ok(OAuthClient {
            inner: Arc::new(Inner {
                http: OAuthHttp::new()?,
                identity: self.identity,
                flow,
                key: self.key,
                dpop,
                store: self.store,
                flight: tokio::sync::Mutex::new(HashMap::new()),
                bound: std::sync::Mutex::default(),
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

    fn dpop_proof(&self, method: &http::Method, uri: &http::Uri, token: &str) -> Option<String> {
        let dpop = self.inner.dpop.as_ref()?;
        if !crate::util::lock(&self.inner.bound)
            .iter()
            .any(|t| t == token)
        {
            return None;
        }
        dpop.proof(method.as_str(), &uri.to_string(), Some(token))
            .map_err(|e| tracing::warn!(error = %e, "could not sign a DPoP proof"))
            .ok()
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
                return Ok(Some(self.hand_out(held)));
            }
        }
        // The server wants a nonce in the proofs (RFC 9449 §9): the same token again.
        if let (Some(dpop), Some(nonce), Some(sent)) =
            (&self.dpop, challenge.dpop_nonce, challenge.token)
        {
            if bearer.error.as_deref() == Some("use_dpop_nonce") && dpop.remember_nonce(&key, nonce)
            {
                return Ok(Some(sent.to_owned()));
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
        if let (false, Flow::Code(agent)) = (step_up, &self.flow) {
            if let Some(token) = self
                .refreshed(&mut servers, agent.as_ref(), &key, same_issuer)
                .await
            {
                return Ok(Some(token));
            }
        }
        let server = discovery::server_metadata(&self.http, &issuer).await?;
        servers.insert(issuer.clone(), server.clone());
        let scopes = choose_scopes(&bearer, &prm, held.as_ref(), step_up);
        let tokens = self.obtain(&server, &issuer, &prm.resource, scopes).await?;
        self.store.save_tokens(&key, Some(&tokens))?;
        Ok(Some(self.hand_out(&tokens)))
    }

    /// The access token of `tokens`, for a transport to send; remembered as bound when
    /// it is, so its requests carry proofs.
    fn hand_out(&self, tokens: &Tokens) -> String {
        if tokens.is_dpop() {
            let mut bound = crate::util::lock(&self.bound);
            if !bound.contains(&tokens.access_token) {
                if bound.len() >= MAX_BOUND {
                    bound.pop_front();
                }
                bound.push_back(tokens.access_token.clone());
            }
        }
        tokens.access_token.clone()
    }

    /// New tokens for `resource`, by the client's grant at `server`.
    async fn obtain(
        &self,
        server: &ServerMetadata,
        issuer: &str,
        resource: &str,
        scopes: Vec<String>,
    ) -> Result<Tokens, TransportError> {
        match &self.flow {
            Flow::Code(agent) => {
                let registration = self.registration(server, issuer, agent.as_ref()).await?;
                let scopes = with_offline_access(scopes, server);
                Authorization {
                    server,
                    caller: self.caller(&registration, server),
                    agent: agent.as_ref(),
                    resource,
                    scopes: &scopes,
                }
                .run()
                .await
            }
            Flow::Machine(grant) => {
                let registration = self
                    .identity
                    .pre_registered
                    .clone()
                    .unwrap_or_else(|| Registration::new(""));
                Grant {
                    caller: self.caller(&registration, server),
                    server,
                    resource,
                    scopes: &scopes,
                }
                .run(grant)
                .await
            }
        }
    }

    /// How the client calls `server`'s token endpoint as `registration`: its key, and
    /// its DPoP key where the server binds tokens.
    fn caller<'a>(&'a self, registration: &'a Registration, server: &ServerMetadata) -> Caller<'a> {
        Caller {
            registration,
            key: self.key.as_ref(),
            endpoint: TokenEndpoint {
                http: self.http.clone(),
                dpop: self.dpop.clone().filter(|_| server.takes_dpop()),
            },
        }
    }

    /// The client's registration with `issuer`: kept, else made (and kept).
    async fn registration(
        &self,
        server: &ServerMetadata,
        issuer: &str,
        agent: &dyn UserAgent,
    ) -> Result<Registration, TransportError> {
        if let Some(r) = self.store.registration(issuer) {
            return Ok(r);
        }
        let redirect = agent.redirect_uri();
        let r = flow::register(&self.http, server, &self.identity, &redirect).await?;
        self.store.save_registration(issuer, &r)?;
        Ok(r)
    }

    /// A new access token from the held refresh token, if there is one and the server
    /// takes it; `None` (and the tokens forgotten) otherwise.
    async fn refreshed(
        &self,
        servers: &mut HashMap<String, ServerMetadata>,
        agent: &dyn UserAgent,
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
        let redirect = agent.redirect_uri();
        let caller = self.caller(&registration, &server);
        match flow::refresh(caller, &server, &redirect, held).await {
            Ok(tokens) => {
                self.store.save_tokens(key, Some(&tokens)).ok()?;
                Some(self.hand_out(&tokens))
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
/// authorization), else the resource's `scopes_supported`, else none.
fn choose_scopes(
    bearer: &BearerChallenge,
    prm: &ResourceMetadata,
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
    scopes
}

/// `scopes` with `offline_access` where the authorization server offers it (a user's
/// authorization outlives the access token).
fn with_offline_access(mut scopes: Vec<String>, server: &ServerMetadata) -> Vec<String> {
    if server.supports_scope("offline_access") && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".into());
    }
    scopes
}
