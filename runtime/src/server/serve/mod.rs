//! Serving a [`Server`](super::Server) on a transport: the message-transport loop
//! (in-memory, stdio) in `messages`, and the Streamable HTTP endpoint in [`http`].
//!
//! Both adapters hand each request to the server's one pipeline
//! ([`Server::accept`](super::Server::accept), then
//! [`Accepted::serve`](super::Accepted::serve)) and map its
//! [`Verdict`](super::Verdict) onto their wire.

#[cfg(feature = "http-server")]
pub mod http;
mod messages;

pub use messages::END_OF_INPUT_DRAIN;
