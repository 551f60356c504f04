//! tern: a Rust SDK for the Model Context Protocol 2026-07-28.
#![deny(missing_docs)]

pub mod ask;
pub mod auth;
pub mod client;
mod error;
pub mod jsonrpc;
mod legacy;
pub mod protocol;
pub mod seal;
pub mod server;
pub mod transport;
mod util;

pub use error::{Error, Result};
pub use legacy::Era;
pub use tern_types as types;
