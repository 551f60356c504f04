//! The crate's errors: [`Error`] for calls, with the detail one level down
//! ([`ProtocolError`], [`InputError`]), and [`ConfigError`] for configuration and
//! building, apart.

pub(crate) mod detail;

use detail::{ConfigError, InputError, ProtocolError};

/// Everything that can go wrong in tern, outside the wire errors a peer sends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server refused the `requestState` a retry echoed (-32602 "Invalid or expired
    /// requestState"): it expired, or the server that sealed it restarted or is another
    /// instance with a key of its own. The call can only start over.
    #[error("the server refused the requestState of the retry ({0}): start the call over")]
    StateRejected(Box<crate::jsonrpc::RpcError>),

    /// The task the call became was cancelled (by the server, or another client)
    /// before it finished.
    #[error("task {0} was cancelled")]
    TaskCancelled(String),

    /// A configuration value was rejected when it was built (see [`ConfigError`]).
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// The server broke the protocol: a result of the wrong shape or kind, a list
    /// without end (see [`ProtocolError`]).
    #[error(transparent)]
    Protocol(#[from] ProtocolError),

    /// The client could not answer the server's input requests (see [`InputError`]).
    #[error(transparent)]
    Input(#[from] InputError),

    /// The peer answered a request with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Rpc(Box<crate::jsonrpc::RpcError>),

    /// A message could not be carried to or from the peer.
    #[error(transparent)]
    Transport(#[from] crate::transport::TransportError),

    /// A [`PendingCall`](crate::client::PendingCall) cannot be resumed as asked: another
    /// method's, or answers to questions it does not hold.
    #[error("cannot resume this pending call: {0}")]
    Resume(String),

    /// Params or answers could not be encoded as JSON.
    #[error("could not encode a message: {0}")]
    Encode(serde_json::Error),
}

impl From<crate::jsonrpc::RpcError> for Error {
    fn from(e: crate::jsonrpc::RpcError) -> Self {
        Self::Rpc(Box::new(e))
    }
}

impl Error {
    /// The JSON-RPC error the server answered with, if that is what this is.
    ///
    /// Over HTTP a refusal arrives with a status (400, 404, …) and the JSON-RPC error in
    /// its body; that error is returned too.
    pub fn rpc(&self) -> Option<&crate::jsonrpc::RpcError> {
        match self {
            Self::Rpc(e) | Self::StateRejected(e) => Some(e),
            Self::Transport(e) => e.rpc_error(),
            _ => None,
        }
    }
}

impl From<crate::transport::CallError> for Error {
    fn from(e: crate::transport::CallError) -> Self {
        match e {
            crate::transport::CallError::Rpc(e) => Self::Rpc(Box::new(e)),
            crate::transport::CallError::Transport(e) => Self::Transport(e),
        }
    }
}

/// `Result` with tern's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
