//! The committed `generated/` crate is exactly what the generator makes from the
//! fetched schema.

use tern_codegen::{REGENERATE, generate, stale};

#[test]
fn generated_files_are_current() {
    let root = tern_tests::workspace_root();
    let files = generate(&tern_tests::schema_dir().unwrap()).unwrap();
    let stale = stale(&files, &root.join("generated")).unwrap();
    assert!(
        stale.is_empty(),
        "generated files are stale: {stale:?}\nrun `{REGENERATE}` and commit the result"
    );
}

#[test]
fn a_stale_file_is_named() {
    let files = generate(&tern_tests::schema_dir().unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    tern_codegen::write(&files, dir.path()).unwrap();
    assert!(stale(&files, dir.path()).unwrap().is_empty());

    let edited = dir.path().join("src/v2026_07_28.rs");
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(
        &edited,
        text.replace("pub struct Tool ", "pub struct Tool2 "),
    )
    .unwrap();
    std::fs::remove_file(dir.path().join("src/rpc.rs")).unwrap();
    let mut named = stale(&files, dir.path()).unwrap();
    named.sort();
    assert_eq!(named, vec![dir.path().join("src/rpc.rs"), edited]);
}

#[test]
fn the_check_command_names_the_regeneration_command() {
    let files = generate(&tern_tests::schema_dir().unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    tern_codegen::write(&files, dir.path()).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "// edited by hand\n").unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["run", "-q", "-p", "tern-codegen", "--", "--check", "--out"])
        .arg(dir.path())
        .current_dir(tern_tests::workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--check passed on an edited file");
    assert!(
        stderr.contains("stale:") && stderr.contains("lib.rs"),
        "{stderr}"
    );
    assert!(stderr.contains(REGENERATE), "{stderr}");
}
