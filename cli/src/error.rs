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

    /// The gateway could not listen on its address, or stopped serving.
    #[error("could not serve on {address}: {source}")]
    Serve {
        address: String,
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

    /// The user pressed Ctrl-C at a prompt.
    #[error("interrupted: no answer was sent")]
    Interrupted,

    /// An error, and what else is known about it (a stdio server's exit status).
    #[error("{source}; {context}")]
    Context {
        source: Box<CliError>,
        context: String,
    },

    /// An error, and what to do about it (printed on a line of its own).
    #[error("{source}")]
    Hinted { source: Box<CliError>, hint: String },
}

/// The crate's result.
pub(crate) type Result<T> = std::result::Result<T, CliError>;

impl CliError {
    /// The exit code this error ends `tern` with.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_)
            | Self::NoAnswer { .. }
            | Self::File { .. }
            | Self::Json { .. }
            | Self::Interrupted => exit::USAGE,
            Self::Context { source, .. } | Self::Hinted { source, .. } => source.exit_code(),
            _ => exit::FAILED,
        }
    }

    /// What kind of error this is, for `--json`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Usage(_) => "usage",
            Self::NoAnswer { .. } => "no_answer",
            Self::Sdk(e) if e.rpc().is_some() => "server_error",
            Self::Sdk(tern_mcp::Error::Transport(_)) | Self::Transport(_) => "transport",
            Self::Sdk(_) => "protocol",
            Self::Spawn { .. } => "spawn",
            Self::Serve { .. } => "serve",
            Self::File { .. } | Self::Json { .. } => "file",
            Self::Sampling(_) => "sampling",
            Self::Prompt(_) => "prompt",
            Self::Interrupted => "interrupted",
            Self::Context { source, .. } | Self::Hinted { source, .. } => source.kind(),
        }
    }

    /// The message, each `transport: ` said once (a transport failure the SDK wraps in
    /// another one repeats its prefix).
    pub(crate) fn message(&self) -> String {
        let mut text = self.to_string();
        while text.contains("transport: transport: ") {
            text = text.replace("transport: transport: ", "transport: ");
        }
        text
    }

    /// The advice this error carries, if it was given one where it happened.
    pub(crate) fn hint(&self) -> Option<&str> {
        match self {
            Self::Hinted { hint, .. } => Some(hint),
            Self::Context { source, .. } => source.hint(),
            _ => None,
        }
    }

    /// The transport failure underneath, if that is what this is.
    pub(crate) fn transport(&self) -> Option<&tern_mcp::transport::TransportError> {
        match self {
            Self::Sdk(tern_mcp::Error::Transport(e)) | Self::Transport(e) => Some(e),
            Self::Context { source, .. } | Self::Hinted { source, .. } => source.transport(),
            _ => None,
        }
    }

    /// Whether the connection failed (not a refusal the server answered with).
    pub(crate) fn is_connection(&self) -> bool {
        self.transport()
            .is_some_and(|t| t.http_status().is_none() && t.rpc_error().is_none())
    }

    /// This error with advice on a line below it.
    pub(crate) fn with_hint(self, hint: impl Into<String>) -> Self {
        Self::Hinted {
            source: Box::new(self),
            hint: hint.into(),
        }
    }

    /// A usage error.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::Usage(message.into())
    }
}

impl From<dialoguer::Error> for CliError {
    /// Ctrl-C at a prompt comes back as an interrupted read: the prompt had hidden the
    /// cursor (a selection list does) and leaves it so, so it is shown again here.
    fn from(e: dialoguer::Error) -> Self {
        let dialoguer::Error::IO(io) = &e;
        if io.kind() == std::io::ErrorKind::Interrupted {
            let _ = console::Term::stderr().show_cursor();
            return Self::Interrupted;
        }
        Self::Prompt(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        Self::Prompt(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transport_failure_wrapped_in_another_says_transport_once() {
        // What the SDK's OAuth discovery makes of a transport error it passes on.
        let inner = tern_mcp::transport::TransportError::new("connection refused");
        let outer = tern_mcp::transport::TransportError::new(inner.to_string());
        let error = CliError::Transport(outer);
        assert_eq!(
            error.to_string(),
            "transport: transport: connection refused"
        );
        assert_eq!(error.message(), "transport: connection refused");
    }
}
