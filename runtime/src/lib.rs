//! tern: a Rust SDK for the Model Context Protocol 2026-07-28.
#![deny(missing_docs)]

pub mod auth;
mod error;
pub mod seal;

pub use error::{Error, Result};
pub use tern_types as types;
