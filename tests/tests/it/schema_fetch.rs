//! `schema/fetch` copies the pinned schema and refuses any file whose sha256 differs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn shared_schema() -> PathBuf {
    tern_tests::workspace_root().join("../shared/schema")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A checkout holding only `schema/fetch` and the pins, with a `shared/` beside it.
fn sandbox() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("checkout");
    std::fs::create_dir_all(checkout.join("schema")).unwrap();
    for f in ["fetch", "SHA256SUMS"] {
        std::fs::copy(
            tern_tests::workspace_root().join("schema").join(f),
            checkout.join("schema").join(f),
        )
        .unwrap();
    }
    copy_dir(&shared_schema(), &dir.path().join("shared/schema"));
    (dir, checkout)
}

fn fetch(checkout: &Path, schema_dir: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new(checkout.join("schema/fetch"));
    cmd.env_remove("TERN_SCHEMA_DIR");
    if let Some(d) = schema_dir {
        cmd.env("TERN_SCHEMA_DIR", d);
    }
    cmd.output().unwrap()
}

#[test]
fn fetch_copies_and_verifies_from_shared_beside_the_checkout() {
    let (_dir, checkout) = sandbox();
    let out = fetch(&checkout, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pins = std::fs::read_to_string(checkout.join("schema/SHA256SUMS")).unwrap();
    let verified = format!("{} files verified", pins.lines().count());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&verified),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(checkout.join("schema/ext-apps/2.0.4/schema.json").is_file());
    assert!(checkout.join("schema/2026-07-28/schema.json").is_file());
    assert!(checkout.join("schema/2025-11-25/schema.json").is_file());
    assert!(
        checkout
            .join("schema/ext-tasks/draft/schema.json")
            .is_file()
    );
    for compat in ["2025-03-26", "2025-06-18"] {
        assert!(
            checkout
                .join(format!("schema/compat/{compat}/schema.json"))
                .is_file()
        );
    }
    assert!(
        checkout
            .join("schema/compat/draft-2026-03-15/schema.json")
            .is_file()
    );
    assert!(
        checkout
            .join("schema/2026-07-28/examples/AudioContent/audio-wav-content.json")
            .is_file()
    );
}

#[test]
fn fetch_rejects_a_file_whose_sha256_differs() {
    let (dir, checkout) = sandbox();
    let tampered = dir.path().join("tampered");
    copy_dir(&dir.path().join("shared/schema"), &tampered);
    let victim = tampered.join("2026-07-28/examples/TextContent");
    let file = std::fs::read_dir(&victim)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push(' ');
    std::fs::write(&file, text).unwrap();

    let out = fetch(&checkout, Some(&tampered));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("sha256 mismatch") && stderr.contains("TextContent"),
        "{stderr}"
    );
    assert!(
        !checkout.join("schema/2026-07-28").exists(),
        "nothing half-checked is left in place"
    );
}

#[test]
fn fetch_rejects_a_missing_file() {
    let (dir, checkout) = sandbox();
    std::fs::remove_file(dir.path().join("shared/schema/2025-11-25/schema.json")).unwrap();
    let out = fetch(&checkout, None);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("2025-11-25/schema.json is missing"));
}
