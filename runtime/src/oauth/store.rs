//! Where an OAuth client keeps what outlives one authorization: its registration with
//! each authorization server, and the tokens it holds for each resource. In memory by
//! default; [`FileStore`] keeps them across runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::transport::TransportError;
use crate::util::lock;

/// A client's registration with one authorization server (its `client_id`, and its
/// secret if it is a confidential client).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Registration {
    /// The client identifier the authorization server knows.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint (`client_secret_basic`,
    /// `client_secret_post` or `none`), when registration said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
}

impl Registration {
    /// A registration for `client_id`, a public client until given a secret.
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            token_endpoint_auth_method: None,
        }
    }

    /// The client's secret.
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// The tokens held for one resource, from one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The issuer that issued them.
    pub issuer: String,
    /// The resource they are for (the `resource` they were requested with).
    #[serde(default)]
    pub resource: String,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The scopes asked for (the union of every challenge so far).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// How the access token is presented: `Bearer`, or `DPoP` for a token bound to the
    /// client's DPoP key (RFC 9449), as the token endpoint said.
    #[serde(default = "bearer")]
    pub token_type: String,
}

fn bearer() -> String {
    "Bearer".into()
}

impl Tokens {
    /// Whether the token is bound to the client's DPoP key.
    pub(crate) fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }
}

/// Keeps registrations (by issuer) and tokens (by resource). Implementations must be
/// safe to call concurrently.
pub trait CredentialStore: Send + Sync + 'static {
    /// The registration with the authorization server `issuer`, if any.
    fn registration(&self, issuer: &str) -> Option<Registration>;
    /// Keeps a registration with `issuer`.
    fn save_registration(
        &self,
        issuer: &str,
        registration: &Registration,
    ) -> Result<(), TransportError>;
    /// Forgets the registration with `issuer` (it was refused).
    fn forget_registration(&self, issuer: &str) -> Result<(), TransportError>;
    /// The tokens held for `resource`, if any.
    fn tokens(&self, resource: &str) -> Option<Tokens>;
    /// Keeps (or with `None` forgets) the tokens for `resource`.
    fn save_tokens(&self, resource: &str, tokens: Option<&Tokens>) -> Result<(), TransportError>;
    /// The client's DPoP private key (PKCS#8 PEM), if one was kept: the key its
    /// DPoP-bound tokens are bound to, so a restarted client keeps using them.
    fn dpop_key(&self) -> Option<String>;
    /// Keeps the client's DPoP private key (PKCS#8 PEM).
    fn save_dpop_key(&self, pem: &str) -> Result<(), TransportError>;
}

/// What a store holds.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Held {
    #[serde(default)]
    registrations: HashMap<String, Registration>,
    #[serde(default)]
    tokens: HashMap<String, Tokens>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_key: Option<String>,
}

/// What both stores are: the credentials in memory, written to a file after each
/// change when there is one.
#[derive(Debug, Default)]
struct Kept {
    path: Option<PathBuf>,
    held: Mutex<Held>,
}

impl Kept {
    fn write(&self, held: &Held) -> Result<(), TransportError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let fail = |e: std::io::Error| {
            TransportError::new(format!("cannot write {}: {e}", path.display()))
        };
        let text = serde_json::to_vec_pretty(held)
            .map_err(|e| TransportError::new(format!("cannot encode credentials: {e}")))?;
        let tmp = path.with_extension("tmp");
        {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&tmp).map_err(fail)?;
            std::io::Write::write_all(&mut file, &text).map_err(fail)?;
            file.sync_all().map_err(fail)?;
        }
        std::fs::rename(&tmp, path).map_err(fail)
    }

    fn change(&self, f: impl FnOnce(&mut Held)) -> Result<(), TransportError> {
        let mut held = lock(&self.held);
        f(&mut held);
        self.write(&held)
    }
}

impl CredentialStore for Kept {
    fn registration(&self, issuer: &str) -> Option<Registration> {
        lock(&self.held).registrations.get(issuer).cloned()
    }

    fn save_registration(
        &self,
        issuer: &str,
        registration: &Registration,
    ) -> Result<(), TransportError> {
        self.change(|h| {
            h.registrations
                .insert(issuer.to_owned(), registration.clone());
        })
    }

    fn forget_registration(&self, issuer: &str) -> Result<(), TransportError> {
        self.change(|h| {
            h.registrations.remove(issuer);
        })
    }

    fn tokens(&self, resource: &str) -> Option<Tokens> {
        lock(&self.held).tokens.get(resource).cloned()
    }

    fn save_tokens(&self, resource: &str, tokens: Option<&Tokens>) -> Result<(), TransportError> {
        self.change(|h| match tokens {
            Some(t) => {
                h.tokens.insert(resource.to_owned(), t.clone());
            }
            None => {
                h.tokens.remove(resource);
            }
        })
    }

    fn dpop_key(&self) -> Option<String> {
        lock(&self.held).dpop_key.clone()
    }

    fn save_dpop_key(&self, pem: &str) -> Result<(), TransportError> {
        self.change(|h| h.dpop_key = Some(pem.to_owned()))
    }
}

/// The default store: this process's memory.
#[derive(Debug, Default)]
pub struct MemoryStore(Kept);

/// A store in one JSON file, rewritten whole on each change (via a temporary file and a
/// rename) and readable only by its owner (mode 0600 on Unix): refresh tokens and
/// client secrets are credentials.
#[derive(Debug)]
pub struct FileStore(Kept);

/// The most a credential file may hold: far more than any server's credentials take.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The bytes of the file at `path`, refused once more than [`MAX_FILE_BYTES`] came (a
/// bound on what is read, never on what its metadata says).
fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("more than {MAX_FILE_BYTES} bytes, the most a credential file may hold"),
        ));
    }
    Ok(bytes)
}

impl FileStore {
    /// The store in `path`, read now if it exists.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, TransportError> {
        let path = path.into();
        let held = match read_bounded(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                TransportError::new(format!("{} is not a credential file: {e}", path.display()))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Held::default(),
            Err(e) => {
                return Err(TransportError::new(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        Ok(Self(Kept {
            path: Some(path),
            held: Mutex::new(held),
        }))
    }
}

/// Both stores answer through what they keep.
macro_rules! through_kept {
    ($store:ty) => {
        impl CredentialStore for $store {
            fn registration(&self, issuer: &str) -> Option<Registration> {
                self.0.registration(issuer)
            }
            fn save_registration(
                &self,
                issuer: &str,
                r: &Registration,
            ) -> Result<(), TransportError> {
                self.0.save_registration(issuer, r)
            }
            fn forget_registration(&self, issuer: &str) -> Result<(), TransportError> {
                self.0.forget_registration(issuer)
            }
            fn tokens(&self, resource: &str) -> Option<Tokens> {
                self.0.tokens(resource)
            }
            fn save_tokens(
                &self,
                resource: &str,
                t: Option<&Tokens>,
            ) -> Result<(), TransportError> {
                self.0.save_tokens(resource, t)
            }
            fn dpop_key(&self) -> Option<String> {
                self.0.dpop_key()
            }
            fn save_dpop_key(&self, pem: &str) -> Result<(), TransportError> {
                self.0.save_dpop_key(pem)
            }
        }
    };
}
through_kept!(MemoryStore);
through_kept!(FileStore);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_store_keeps_credentials_across_opens_and_only_for_its_owner() {
        let dir = std::env::temp_dir().join(format!("tern-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("credentials.json");
        let _ = std::fs::remove_file(&path);
        let store = FileStore::open(&path).unwrap();
        store
            .save_registration("https://as", &Registration::new("c").with_secret("s"))
            .unwrap();
        let tokens = Tokens {
            issuer: "https://as".into(),
            resource: "https://mcp".into(),
            access_token: "a".into(),
            refresh_token: Some("r".into()),
            scopes: vec!["x".into()],
            token_type: "DPoP".into(),
        };
        store.save_dpop_key("-----BEGIN PRIVATE KEY-----").unwrap();
        store.save_tokens("https://mcp", Some(&tokens)).unwrap();
        let again = FileStore::open(&path).unwrap();
        assert_eq!(
            again
                .registration("https://as")
                .unwrap()
                .client_secret
                .as_deref(),
            Some("s")
        );
        assert_eq!(again.tokens("https://mcp"), Some(tokens));
        assert_eq!(
            again.dpop_key().as_deref(),
            Some("-----BEGIN PRIVATE KEY-----")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        again.save_tokens("https://mcp", None).unwrap();
        assert_eq!(FileStore::open(&path).unwrap().tokens("https://mcp"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
