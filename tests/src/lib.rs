//! Cross-crate integration, conformance and interoperability tests for tern.
//!
//! The tests live in `tests/tests/`; this library holds the helpers they share.

use std::path::PathBuf;

/// The workspace root (the directory holding the virtual `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}
