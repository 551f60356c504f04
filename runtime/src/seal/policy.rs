//! `RequestStateSecurity`: the deployment's sealing policy, checked when it is built.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::clock::{Clock, SystemClock};
use super::keyring::{DEFAULT_MAX_TOKEN_LEN, Keyring};
use super::sealer::{BindPrincipal, Codec, RequestBinding, Sealer};
use super::{Principal, StateCodec};
use crate::ConfigError;

use super::Result;

/// The default time-to-live of one round's token.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

// Ten years: long enough for any real flow, short enough that expiry arithmetic on
// millisecond timestamps never comes near overflow.
const MAX_TTL: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// How the high-level server seals `requestState`.
///
/// Start from exactly one key source, [`ephemeral`](Self::ephemeral) (the default),
/// [`keys`](Self::keys) or [`codec`](Self::codec); adjust with the builder methods; then
/// [`build`](Self::build) it for a server to get a [`Sealer`].
pub struct RequestStateSecurity {
    source: Source,
    ttl: Duration,
    audience: Option<String>,
    bind_principal: Option<BindPrincipal>,
    max_token_len: usize,
    clock: Arc<dyn Clock>,
}

enum Source {
    Ephemeral,
    Keys(Keyring),
    Codec(Box<dyn StateCodec>),
}

impl RequestStateSecurity {
    fn from_source(source: Source) -> Self {
        Self {
            source,
            ttl: DEFAULT_TTL,
            audience: None,
            bind_principal: None,
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
            clock: Arc::new(SystemClock),
        }
    }

    /// A random key generated when the policy is built, good for one process only: a
    /// round that lands on another instance or after a restart is rejected and the client
    /// starts over.
    pub fn ephemeral() -> Self {
        Self::from_source(Source::Ephemeral)
    }

    /// Shared secrets (each at least 32 bytes): `keys[0]` seals, every key verifies.
    ///
    /// Required when a round can land on another instance or must survive a restart.
    /// Rotate in three phases, each fully rolled out before the next: `[OLD, NEW]`, then
    /// `[NEW, OLD]`, then `[NEW]` one TTL later.
    pub fn keys<I, S>(secrets: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        Ok(Self::from_source(Source::Keys(Keyring::new(secrets)?)))
    }

    /// The deployment's own codec, e.g. envelope encryption under a KMS data key.
    /// Expiry, audience, principal and request binding remain tern's job.
    pub fn codec(codec: impl StateCodec) -> Self {
        Self::from_source(Source::Codec(Box::new(codec)))
    }

    /// How long one round's token stays valid (default 600 s). Each round reseals with a
    /// How long a sealed state lives (what single-use redemptions are kept for).
    pub(crate) fn state_ttl(&self) -> Duration {
        self.ttl
    }

    /// fresh expiry, so this bounds thinking time per round, not the whole flow.
    pub fn ttl(mut self, ttl: Duration) -> Result<Self> {
        if ttl < Duration::from_millis(1) || ttl > MAX_TTL {
            return Err(ConfigError::InvalidTtl {
                got: format!("{ttl:?}"),
            });
        }
        self.ttl = ttl;
        Ok(self)
    }

    /// The audience written into every token and required on the way back (default: the
    /// server's name). Set it when the server has no name, or to let several services
    /// that share keys deliberately accept each other's state.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Supplies the principal from the deployment's own identity signal (for example
    /// behind an authenticating proxy, where the transport validates no token).
    ///
    /// The hook overrides the principal of a validated access token: it sees that one in
    /// `binding.principal`, and returning `None` keeps it. Whatever it returns must be
    /// consistent across rounds: a principal that appears, disappears or changes mid-flow
    /// is a rejection. A panicking hook fails closed.
    pub fn bind_principal<F>(mut self, hook: F) -> Self
    where
        F: Fn(&RequestBinding<'_>) -> Option<Principal> + Send + Sync + 'static,
    {
        self.bind_principal = Some(Arc::new(hook));
        self
    }

    /// The cap on a token's length in bytes, on seal and on verify (default 64 KiB).
    pub fn max_token_len(mut self, max_token_len: usize) -> Self {
        self.max_token_len = max_token_len;
        self
    }

    /// The clock for issue and expiry times (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Builds the sealer for a server named `server_name`.
    ///
    /// The audience is the explicit one, else the server's name. An explicit key ring or
    /// codec on an unnamed server with no audience is an error, since every service
    /// sharing that key would then accept each other's tokens. The ephemeral default is
    /// exempt: its key never leaves the process.
    pub fn build(self, server_name: Option<&str>) -> Result<Sealer> {
        let audience = match self.audience {
            Some(audience) if audience.is_empty() => return Err(ConfigError::EmptyAudience),
            Some(audience) => Some(audience),
            None => server_name
                .filter(|name| !name.is_empty())
                .map(str::to_owned),
        };
        let codec = match self.source {
            Source::Ephemeral => {
                Codec::Builtin(Keyring::ephemeral()?.with_max_token_len(self.max_token_len))
            }
            Source::Keys(keyring) if audience.is_some() => {
                Codec::Builtin(keyring.with_max_token_len(self.max_token_len))
            }
            Source::Codec(codec) if audience.is_some() => Codec::Custom(codec),
            Source::Keys(_) | Source::Codec(_) => return Err(ConfigError::MissingAudience),
        };
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        Ok(Sealer::new(
            codec,
            ttl_ms,
            audience,
            self.bind_principal,
            self.max_token_len,
            self.clock,
        ))
    }
}

impl Default for RequestStateSecurity {
    fn default() -> Self {
        Self::ephemeral()
    }
}

impl fmt::Debug for RequestStateSecurity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.source {
            Source::Ephemeral => "ephemeral",
            Source::Keys(_) => "keys",
            Source::Codec(_) => "codec",
        };
        f.debug_struct("RequestStateSecurity")
            .field("source", &source)
            .field("ttl", &self.ttl)
            .field("audience", &self.audience)
            .field("bind_principal", &self.bind_principal.is_some())
            .field("max_token_len", &self.max_token_len)
            .finish_non_exhaustive()
    }
}
