//! The generator survives schemas it was not written against: every schema under
//! `schema/compat/` (fetched by `schema/fetch`: a released version and a draft) is
//! generated with the library and compiled, all of them as modules of one scratch copy
//! of `tern-types`, with `cargo check`. A failure shows the compiler's errors.
//!
//! The scratch crate lives under `target/compat-check/` with its own target directory
//! there, so its dependencies are built once and later runs only check the modules.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `schema/compat/<name>/schema.json`, by name.
fn compat_schemas() -> Vec<(String, PathBuf)> {
    let dir = workspace().join("schema/compat");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run `schema/fetch` first)", dir.display()));
    let mut out: Vec<(String, PathBuf)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path().join("schema.json");
            let name = path.parent()?.file_name()?.to_str()?.to_owned();
            path.is_file().then_some((name, path))
        })
        .collect();
    out.sort();
    out
}

/// `2025-06-18` is module `v2025_06_18`, `draft-2026-03-15` is `draft_2026_03_15`.
fn module_name(name: &str) -> String {
    let snake = name.replace(['-', '.'], "_");
    if snake.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v{snake}")
    } else {
        snake
    }
}

fn write(path: &Path, contents: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Unchanged files keep their timestamps, so cargo does not recheck for nothing.
    if std::fs::read_to_string(path).ok().as_deref() != Some(contents) {
        std::fs::write(path, contents).unwrap();
    }
}

#[test]
fn every_compat_schema_generates_and_compiles() {
    let schemas = compat_schemas();
    assert!(
        schemas.len() >= 2,
        "expected the compat schemas under schema/compat (run `schema/fetch`)"
    );
    let root = workspace().join("target/compat-check");
    let krate = root.join("crate");
    let mut lib = String::from(
        "//! Scratch copy of tern-types holding the compat schemas' modules.\n\
         #![allow(warnings)]\n\n#[rustfmt::skip]\npub mod rpc;\n",
    );
    let mut modules = Vec::new();
    for (name, path) in &schemas {
        let schema = tern_codegen::read_schema(path).unwrap();
        let generated =
            tern_codegen::generate_version(name, &schema).unwrap_or_else(|e| panic!("{name}: {e}"));
        let module = module_name(name);
        write(&krate.join(format!("src/{module}.rs")), &generated.source);
        lib.push_str(&format!("#[rustfmt::skip]\npub mod {module};\n"));
        modules.push(module);
    }
    // Modules of schemas no longer there would be compiled too: remove them.
    for entry in std::fs::read_dir(krate.join("src")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if !["lib", "rpc"].contains(&stem) && !modules.iter().any(|m| m == stem) {
            std::fs::remove_file(&path).unwrap();
        }
    }
    for part in ["rpc.rs", "rpc/unions.rs"] {
        let text = std::fs::read_to_string(workspace().join("generated/src").join(part)).unwrap();
        write(&krate.join("src").join(part), &text);
    }
    write(&krate.join("src/lib.rs"), &lib);
    write(
        &krate.join("Cargo.toml"),
        "[package]\nname = \"tern-compat-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         # Not a member of the tern workspace.\n[workspace]\n\n\
         [dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n\
         serde_json = { version = \"1\", features = [\"preserve_order\", \"raw_value\"] }\n\
         memchr = \"2\"\n",
    );
    // The workspace's lock pins the same serde versions tern-types builds with, which
    // are already downloaded.
    let lock = std::fs::read_to_string(workspace().join("Cargo.lock")).unwrap();
    if !krate.join("Cargo.lock").exists() {
        write(&krate.join("Cargo.lock"), &lock);
    }

    let out = Command::new(env!("CARGO"))
        .args([
            "check",
            "--quiet",
            "--message-format",
            "short",
            "--manifest-path",
        ])
        .arg(krate.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the generated compat modules ({}) do not compile:\n{}",
        modules.join(", "),
        String::from_utf8_lossy(&out.stderr)
    );
}
