//! The crate's one error enum, and the exit code each error ends the process with.

use std::path::PathBuf;

use crate::exit;

/// Everything that can stop a `tern` command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CliError {
    /// The command line or an answer given on it is wrong.
    #[error("{0}")]
    Usage(String),

    /// A question the server asked has no answer, and there is no terminal to ask on.
    #[error(
        "no answer for the question `{key}` from {server}: \"{message}\" \
         (stdin is not a terminal); answer it with {hint}"
    )]
    NoAnswer {
        server: String,
        key: String,
        message: String,
        hint: String,
    },

    /// The SDK failed: a refusal, a protocol error, a transport failure.
    #[error(transparent)]
    Sdk(#[from] tern_mcp::Error),

    /// The HTTP transport or the OAuth client could not be set up.
    #[error(transparent)]
    Transport(#[from] tern_mcp::transport::TransportError),

    /// A command (the server, the sampling command) could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },

    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A file is not the JSON it should be.
    #[error("{}: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },

    /// The sampling command failed or answered something that is not a
    /// `CreateMessageResult`.
    #[error("the sampling command {0}")]
    Sampling(String),

    /// The terminal prompt failed.
    #[error("the terminal prompt failed: {0}")]
    Prompt(String),
}

/// The crate's result.
pub(crate) type Result<T> = std::result::Result<T, CliError>;

impl CliError {
    /// The exit code this error ends `tern` with.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) | Self::NoAnswer { .. } => exit::USAGE,
            _ => exit::FAILED,
        }
    }

    /// A usage error.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::Usage(message.into())
    }
}

impl From<dialoguer::Error> for CliError {
    fn from(e: dialoguer::Error) -> Self {
        Self::Prompt(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        Self::Prompt(e.to_string())
    }
}
