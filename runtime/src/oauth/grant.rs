//! The grants with no user at a browser: client credentials (a service with a secret
//! or a signing key), the JWT bearer grant (RFC 7523 §2.1) with a workload's token
//! (workload identity federation), and enterprise-managed authorization (an identity
//! assertion exchanged at the enterprise IdP for an ID-JAG, RFC 8693, then the JWT bearer
//! grant with it). Each gets a token for the resource, presented as the server said.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::discovery::ServerMetadata;
use super::endpoint::fail;
use super::flow::{Caller, tokens};
use super::store::{Registration, Tokens};
use crate::transport::{BoxFuture, TransportError};

/// The most bytes a token source yields.
const MAX_TOKEN_BYTES: usize = 64 * 1024;
/// How long a token command may run.
const COMMAND_DEADLINE: Duration = Duration::from_secs(10);

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

type Produce = dyn Fn() -> BoxFuture<'static, Result<String, TransportError>> + Send + Sync;

/// Where a token the client presents comes from (a workload's platform-issued JWT, a
/// user's ID token from the enterprise's single sign-on): read again each time a grant
/// needs it, so a rotated token is picked up.
#[derive(Clone)]
pub struct TokenSource(Source);

#[derive(Clone)]
enum Source {
    Value(String),
    File(PathBuf),
    Command(Vec<String>),
    Callback(Arc<Produce>),
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Source::Value(_) => f.write_str("TokenSource::value(..)"),
            Source::File(path) => write!(f, "TokenSource::file({})", path.display()),
            Source::Command(argv) => write!(f, "TokenSource::command({argv:?})"),
            Source::Callback(_) => f.write_str("TokenSource::from_fn(..)"),
        }
    }
}

impl TokenSource {
    /// A fixed token.
    pub fn value(token: impl Into<String>) -> Self {
        Self(Source::Value(token.into()))
    }

    /// The token in the file at `path` (a projected service-account token, say), read
    /// each time, surrounding whitespace trimmed; at most 64 KiB.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self(Source::File(path.into()))
    }

    /// What `program` with `args` prints on its standard output, run each time (no
    /// shell): it must exit successfully within 10 seconds and print at most 64 KiB.
    pub fn command<S: Into<String>>(
        program: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        let mut argv = vec![program.into()];
        argv.extend(args.into_iter().map(Into::into));
        Self(Source::Command(argv))
    }

    /// What `produce` resolves to, called each time.
    pub fn from_fn<F, Fut>(produce: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, TransportError>> + Send + 'static,
    {
        Self(Source::Callback(Arc::new(move || Box::pin(produce()))))
    }

    /// The token now.
    pub(crate) async fn read(&self) -> Result<String, TransportError> {
        let token = match &self.0 {
            Source::Value(token) => token.clone(),
            Source::File(path) => read_file(path).await?,
            Source::Command(argv) => run(argv).await?,
            Source::Callback(produce) => produce().await?,
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(fail(format!("{self:?} gave no token")));
        }
        if token.len() > MAX_TOKEN_BYTES {
            return Err(fail(format!(
                "{self:?} gave more than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        Ok(token.to_owned())
    }
}

async fn read_file(path: &std::path::Path) -> Result<String, TransportError> {
    use tokio::io::AsyncReadExt as _;
    let cannot = |e: std::io::Error| fail(format!("cannot read {}: {e}", path.display()));
    let file = tokio::fs::File::open(path).await.map_err(cannot)?;
    let mut text = String::new();
    file.take(MAX_TOKEN_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .await
        .map_err(cannot)?;
    Ok(text)
}

async fn run(argv: &[String]) -> Result<String, TransportError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(fail("an empty token command"));
    };
    let output = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(COMMAND_DEADLINE, output)
        .await
        .map_err(|_| {
            fail(format!(
                "{program} gave no token within {COMMAND_DEADLINE:?}"
            ))
        })?
        .map_err(|e| fail(format!("cannot run {program}: {e}")))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let said = said.lines().next().unwrap_or_default();
        return Err(fail(format!(
            "{program} failed ({}): {said}",
            output.status
        )));
    }
    String::from_utf8(output.stdout).map_err(|_| fail(format!("{program} printed no UTF-8")))
}

/// The enterprise's identity provider, for enterprise-managed authorization: where the
/// user's identity assertion (an ID token from single sign-on) is exchanged for an
/// ID-JAG that the MCP server's authorization server accepts.
#[derive(Debug, Clone)]
pub struct IdentityProvider {
    token_endpoint: String,
    id_token: TokenSource,
    client: Option<Registration>,
}

impl IdentityProvider {
    /// The IdP whose token endpoint is `token_endpoint`; `id_token` gives the user's
    /// ID token from it.
    pub fn new(token_endpoint: impl Into<String>, id_token: TokenSource) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            id_token,
            client: None,
        }
    }

    /// The client's own registration at the IdP: its `client_id` goes in the exchange,
    /// and its secret, if any, authenticates it there (`client_secret_basic`).
    pub fn client(mut self, registration: Registration) -> Self {
        self.client = Some(registration);
        self
    }
}

/// A grant with no user at a browser.
#[derive(Debug, Clone)]
pub(crate) enum MachineGrant {
    ClientCredentials,
    Workload(TokenSource),
    Enterprise(IdentityProvider),
}

/// What one machine grant needs.
pub(crate) struct Grant<'a> {
    pub(crate) caller: Caller<'a>,
    pub(crate) server: &'a ServerMetadata,
    pub(crate) resource: &'a str,
    pub(crate) scopes: &'a [String],
}

impl Grant<'_> {
    /// Runs `grant` once: an error from the server stands (no other grant is tried).
    pub(crate) async fn run(&self, grant: &MachineGrant) -> Result<Tokens, TransportError> {
        let scope = self.scopes.join(" ");
        let mut form: Vec<(&str, String)> = Vec::new();
        let public = Caller {
            key: None,
            ..self.caller.clone()
        };
        let credentials = match grant {
            MachineGrant::ClientCredentials => {
                form.push(("grant_type", "client_credentials".into()));
                self.caller.credentials(self.server)?
            }
            MachineGrant::Workload(source) => {
                form.push(("grant_type", JWT_BEARER.into()));
                form.push(("assertion", source.read().await?));
                // A workload is its assertion: a client id only where one is known.
                if self.caller.registration.client_id.is_empty() {
                    super::flow::Credentials {
                        fields: Vec::new(),
                        basic: None,
                    }
                } else {
                    public.credentials(self.server)?
                }
            }
            MachineGrant::Enterprise(idp) => {
                form.push(("grant_type", JWT_BEARER.into()));
                form.push(("assertion", self.id_jag(idp).await?));
                self.caller.credentials(self.server)?
            }
        };
        form.extend(credentials.fields);
        form.push(("resource", self.resource.to_owned()));
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let response = self
            .caller
            .endpoint
            .post_form(&self.server.token_endpoint, &pairs, credentials.basic)
            .await?;
        Ok(tokens(
            &self.server.issuer,
            self.resource,
            response,
            self.scopes,
            None,
        ))
    }

    /// The ID-JAG for this authorization server and resource, exchanged at the IdP for
    /// the user's ID token (RFC 8693 §2.1).
    async fn id_jag(&self, idp: &IdentityProvider) -> Result<String, TransportError> {
        let id_token = idp.id_token.read().await?;
        let scope = self.scopes.join(" ");
        let mut form: Vec<(&str, &str)> = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", &id_token),
            ("subject_token_type", ID_TOKEN),
            ("audience", &self.server.issuer),
            ("resource", self.resource),
        ];
        if !scope.is_empty() {
            form.push(("scope", &scope));
        }
        let mut basic = None;
        if let Some(client) = &idp.client {
            match &client.client_secret {
                Some(secret) => basic = Some((client.client_id.as_str(), secret.as_str())),
                None => form.push(("client_id", &client.client_id)),
            }
        }
        // The IdP is not the MCP server's authorization server: no DPoP proof there.
        let endpoint = super::endpoint::TokenEndpoint {
            dpop: None,
            http: self.caller.endpoint.http.clone(),
        };
        #[derive(serde::Deserialize)]
        struct Exchanged {
            access_token: String,
            #[serde(default)]
            issued_token_type: String,
        }
        let answer: Exchanged = endpoint
            .post_form(&idp.token_endpoint, &form, basic)
            .await?;
        if answer.issued_token_type != ID_JAG {
            return Err(fail(format!(
                "the identity provider issued a {:?}, not an ID-JAG",
                answer.issued_token_type
            )));
        }
        Ok(answer.access_token)
    }
}
