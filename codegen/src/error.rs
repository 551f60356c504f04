//! The crate's one error type.

use std::path::PathBuf;

/// What can go wrong while generating.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A schema file could not be read.
    #[error("cannot read {path}: {source} (run `schema/fetch` first)")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A schema file is not JSON.
    #[error("{path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The schema has a shape the generator does not handle.
    #[error("schema {version}, definition {definition}: {message}")]
    Schema {
        /// The protocol version.
        version: String,
        /// The definition at fault.
        definition: String,
        /// What is wrong.
        message: String,
    },
    /// A built-in template does not parse (a bug in the generator).
    #[error("generator template does not parse: {0}")]
    Template(String),
    /// The generated code does not parse (a bug in the generator).
    #[error("generated code for {version} does not parse: {message}")]
    Unparsable {
        /// The protocol version.
        version: String,
        /// The parser's message.
        message: String,
    },
    /// A generated file could not be written or read back.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
