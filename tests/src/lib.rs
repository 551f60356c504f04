//! Cross-crate integration, conformance and interoperability tests for tern.
//!
//! The tests live in `tests/tests/`; this library holds the helpers they share.

use std::path::{Path, PathBuf};

/// The workspace root (the directory holding the virtual `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The fetched schema folder, or a message saying how to fetch it.
pub fn schema_dir() -> Result<PathBuf, String> {
    let dir = workspace_root().join("schema");
    if dir.join("2026-07-28").join("schema.json").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "the schema is not fetched: run `schema/fetch` in {}",
            workspace_root().display()
        ))
    }
}

pub mod wire;
