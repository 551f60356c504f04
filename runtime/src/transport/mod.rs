//! How messages travel. A [`MessageTransport`] carries whole JSON-RPC messages as text
//! in both directions (in-memory, stdio); the client reaches a server through a
//! [`ClientTransport`], which a message transport gives through
//! [`Connection`](crate::client::Connection) and which HTTP implements directly.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::jsonrpc::RpcError;
use crate::types::v2026_07_28::RequestId;

pub mod memory;

/// A boxed future, as transports return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a transport could not carry a message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("transport: {0}")]
pub struct TransportError(pub String);

/// The sending half of a message transport.
pub trait MessageSink: Send + Sync + 'static {
    /// Sends one JSON-RPC message.
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>>;
}

/// The receiving half of a message transport.
pub trait MessageSource: Send + 'static {
    /// The next message, or `None` when the peer is gone.
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>>;
}

/// A bidirectional carrier of JSON-RPC messages.
pub trait MessageTransport: Send + 'static {
    /// Splits the transport into its sending and receiving halves.
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>);
}

/// One request as the client hands it to a transport.
#[derive(Debug)]
pub struct OutgoingRequest {
    /// The JSON-RPC id (new for every request, retries included).
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params, `_meta` included.
    pub params: Value,
    /// Where this request's server notifications (progress, logs) go, if anywhere.
    pub notifications: Option<mpsc::UnboundedSender<Value>>,
}

/// Why a request got no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    /// The server answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The message never made it there or back.
    #[error(transparent)]
    Transport(#[from] TransportError),
}

/// What a client needs from a transport: send a request and await its result; send a
/// notification. Dropping the returned future abandons the request, and the transport
/// tells the server (`notifications/cancelled`, or closing the HTTP stream).
pub trait ClientTransport: Send + Sync + 'static {
    /// Sends `request` and resolves to its result.
    fn request(&self, request: OutgoingRequest) -> BoxFuture<'_, Result<Value, CallError>>;
    /// Sends a notification.
    fn notify(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<(), TransportError>>;
    /// A new request id.
    fn next_id(&self) -> RequestId;
}
