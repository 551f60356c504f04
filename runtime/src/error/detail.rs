//! The detail of an [`Error`](super::Error), one level down, and the configuration
//! errors apart from the call-time ones.

/// A configuration value rejected when it was given or built: keys, audience, TTL.
/// Returned by the configuration calls themselves; inside a call-time [`Error`](super::Error)
/// only as [`Error::Config`](super::Error::Config).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A configuration value was rejected when it was built.
    #[error("invalid configuration: {0}")]
    Invalid(String),

    /// `RequestStateSecurity::keys` was given no key at all.
    #[error(
        "RequestStateSecurity::keys needs at least one key; generate one with \
         tern_mcp::seal::generate_secret_hex() and pass it as keys([secret])"
    )]
    EmptyKeyRing,

    /// A `requestState` secret is shorter than 32 bytes.
    #[error(
        "requestState key #{index} is {len} bytes; a requestState key must be at least 32 bytes: \
         generate one with tern_mcp::seal::generate_secret_hex()"
    )]
    KeyTooShort {
        /// Position of the offending key in the ring.
        index: usize,
        /// Its length in bytes.
        len: usize,
    },

    /// The same secret appears twice in the key ring.
    #[error(
        "requestState keys #{first} and #{second} are the same secret; list each key once \
         (rotation is [OLD, NEW] -> [NEW, OLD] -> [NEW])"
    )]
    DuplicateKey {
        /// Position of the first occurrence.
        first: usize,
        /// Position of the repeat.
        second: usize,
    },

    /// Two different secrets derived the same 4-byte key id (about one chance in four billion).
    #[error(
        "requestState keys #{first} and #{second} share a key id; replace one of them with a \
         fresh secret from tern_mcp::seal::generate_secret_hex()"
    )]
    KeyIdCollision {
        /// Position of the first key.
        first: usize,
        /// Position of the second key.
        second: usize,
    },

    /// A secret given as text could not be parsed.
    #[error(
        "a requestState secret must be {expected}; generate one with \
         tern_mcp::seal::generate_secret_hex() or `tern keys gen`"
    )]
    InvalidSecret {
        /// What the parser expected.
        expected: &'static str,
    },

    /// The `requestState` time-to-live is zero, negative, not finite or too large.
    #[error(
        "requestState ttl must be a finite number of seconds between 0.001 and 10 years \
         (got {got}); the default is 600"
    )]
    InvalidTtl {
        /// The rejected value, as given.
        got: String,
    },

    /// An explicit sealing policy on a server with no name and no audience.
    #[error(
        "a RequestStateSecurity with explicit keys or a codec needs an audience: give the server \
         a name or call .audience(\"your-service\") on the policy"
    )]
    MissingAudience,

    /// An empty audience would bind tokens to nothing.
    #[error("requestState audience must not be empty; use the service's name")]
    EmptyAudience,
}

/// How the server broke the protocol.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// A [`list_all`](crate::client::Client::list_all) call met more pages than its cap (1,000):
    /// the server keeps answering with a next cursor.
    #[error("{method}: more than {pages} pages; the server keeps answering with a next cursor")]
    TooManyPages {
        /// The list method.
        method: &'static str,
        /// The pages followed.
        pages: usize,
    },

    /// A tool's result does not conform to the `outputSchema` the client listed for it.
    #[error("the result of tool {tool} breaks its outputSchema: {detail}")]
    InvalidStructuredContent {
        /// The tool.
        tool: String,
        /// What is wrong, and where.
        detail: String,
    },

    /// The server answered input-required with neither requests nor state.
    #[error("the server answered input_required with neither inputRequests nor requestState")]
    EmptyInputRequired,

    /// A result carried a `resultType` this client does not know.
    #[error("the server answered with an unknown resultType \"{0}\"")]
    UnknownResultType(String),

    /// Era discovery found no protocol version both sides speak.
    #[error(
        "the server speaks none of the protocol versions this client does \
         (2026-07-28, 2025-11-25): {detail}"
    )]
    NoCommonVersion {
        /// What the server said.
        detail: String,
    },

    /// A result did not decode as the method's result type.
    #[error("malformed {method} result: {source}")]
    Decode {
        /// The method whose result it was.
        method: &'static str,
        /// The decoding error.
        source: serde_json::Error,
    },

    /// A `subscriptions/listen` stream could not be opened or ended at once.
    #[error("cannot listen: {0}")]
    Listen(String),

    /// A skill's file was not used: it is not in the skill's entry, or what the server
    /// served is not what the entry says (see
    /// [`Client::read_skill_file`](crate::client::Client::read_skill_file)).
    #[error("skill file {uri}: {failure}")]
    SkillFile {
        /// The file's URI.
        uri: String,
        /// What failed.
        failure: SkillFailure,
    },
}

/// Why a skill's file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFailure {
    /// The skill's entry does not list the file.
    #[error("the skill's entry does not list it")]
    Unlisted,
    /// The server's answer held no contents for the file.
    #[error("the server's answer holds no contents for it")]
    Missing,
    /// The file's length is not the one listed.
    #[error("{served} bytes served where the entry lists {listed}")]
    Size {
        /// The length the entry lists.
        listed: u64,
        /// The length served.
        served: u64,
    },
    /// The file's SHA-256 is not the one listed.
    #[error("its digest is not the one the entry lists")]
    Digest,
    /// The `SKILL.md`'s front matter is not the entry's: the field that differs, or why
    /// it could not be read.
    #[error("its front matter differs from the entry's: {0}")]
    FrontMatter(String),
}

/// Why the client could not answer the server's input requests.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The server kept answering input-required beyond the client's cap.
    #[error(
        "the server still required input after {max_rounds} rounds \
         (ClientLimits::max_rounds = {max_rounds}); raise the cap with \
         ClientBuilder::limits or drive the loop yourself"
    )]
    RoundsExceeded {
        /// The cap in force.
        max_rounds: usize,
    },

    /// The server asked for input of a kind this client has no callback for.
    #[error(
        "the server sent a `{method}` input request but this client has no callback for it; \
         register one with ClientBuilder::on_elicitation, on_sampling or on_list_roots"
    )]
    NoCallback {
        /// The input request's method.
        method: String,
    },

    /// A callback answering an input request failed; the call was abandoned.
    #[error("the `{method}` callback failed: {error}")]
    Callback {
        /// The input request's method.
        method: String,
        /// What the callback returned.
        error: Box<crate::jsonrpc::RpcError>,
    },

    /// The server asked for more input in one round than this client answers.
    #[error(
        "the server sent {asked} input requests in one round; this client answers at most \
         {max} (ClientLimits::max_input_requests)"
    )]
    TooManyRequests {
        /// How many the server sent.
        asked: usize,
        /// The cap in force.
        max: usize,
    },
}

/// A store could not answer: a replay store ([`ReplayStore`](crate::server::replay::ReplayStore))
/// or a task store ([`TaskStore`](crate::tasks::TaskStore)) whose backend is unreachable
/// or answered nonsense. The request it served fails with an internal error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{store}: {message}")]
pub struct StoreError {
    store: &'static str,
    message: String,
    #[source]
    source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
    lease_lost: bool,
}

impl StoreError {
    /// A task store refused a write by an instance whose lease on the task another
    /// instance took over (its fencing token is not the task's any more): that
    /// instance's body must stop, and nothing it writes is kept.
    pub fn lease_lost(store: &'static str) -> Self {
        Self {
            lease_lost: true,
            ..Self::new(store, "the task's lease is held by another instance")
        }
    }

    /// Whether this is [`lease_lost`](Self::lease_lost): the writer lost its lease.
    pub fn is_lease_lost(&self) -> bool {
        self.lease_lost
    }

    /// `store` (such as "task store") failed as `message` says.
    pub fn new(store: &'static str, message: impl Into<String>) -> Self {
        Self {
            store,
            message: message.into(),
            source: None,
            lease_lost: false,
        }
    }

    /// `store`'s backend failed; its own error is kept as this one's
    /// [`source`](std::error::Error::source).
    pub fn caused_by(
        store: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            store,
            message: source.to_string(),
            source: Some(std::sync::Arc::new(source)),
            lease_lost: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_failure_keeps_the_backends_error_as_its_source() {
        let backend = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = StoreError::caused_by("task store", backend);
        assert_eq!(e.to_string(), "task store: refused");
        let source = std::error::Error::source(&e).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("refused"));
        assert!(std::error::Error::source(&StoreError::new("task store", "full")).is_none());
    }
}
