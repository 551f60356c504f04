//! The crate's one error enum.

/// Everything that can go wrong in tern, outside the wire errors a peer sends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value was rejected when it was built.
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// `Result` with tern's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
