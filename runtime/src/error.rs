//! The crate's one error enum.

/// Everything that can go wrong in tern, outside the wire errors a peer sends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value was rejected when it was built.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// `RequestStateSecurity::keys` was given no key at all.
    #[error(
        "RequestStateSecurity::keys needs at least one key; generate one with \
         tern::seal::generate_secret_hex() and pass it as keys([secret])"
    )]
    EmptyKeyRing,

    /// A `requestState` secret is shorter than 32 bytes.
    #[error(
        "requestState key #{index} is {len} bytes; a requestState key must be at least 32 bytes: \
         generate one with tern::seal::generate_secret_hex()"
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
         fresh secret from tern::seal::generate_secret_hex()"
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
         tern::seal::generate_secret_hex() or generate_secret_base64()"
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

/// `Result` with tern's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
