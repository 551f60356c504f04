//! tern: a Rust SDK for the Model Context Protocol 2026-07-28.
#![deny(missing_docs)]

pub use tern_types as types;
