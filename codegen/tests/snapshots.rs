//! The generator on one small schema per pattern, and each version's method table.
//!
//! Each fixture's output is an insta snapshot (review with `cargo insta review`) and is
//! also kept in `tests/expected/<fixture>.rs`, which `tests/compile_expected.rs`
//! compiles; `TERN_BLESS=1 cargo test -p tern-codegen --test snapshots` rewrites those.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

const FIXTURES: &[&str] = &[
    "const_tag",
    "type_array",
    "any_of_refs",
    "all_of",
    "open_object",
    "recursion",
];

fn fixture(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"));
    tern_codegen::read_schema(&path).unwrap()
}

#[test]
fn fixture_outputs() {
    for name in FIXTURES {
        let out = tern_codegen::generate_version("fixture", &fixture(name)).unwrap();
        insta::assert_snapshot!(*name, out.source);
        let expected = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/expected")
            .join(format!("{name}.rs"));
        if std::env::var_os("TERN_BLESS").is_some() {
            std::fs::write(&expected, &out.source).unwrap();
        }
        let committed = std::fs::read_to_string(&expected).unwrap_or_default();
        assert!(
            committed == out.source,
            "{} is stale: run `TERN_BLESS=1 cargo test -p tern-codegen --test snapshots`",
            expected.display()
        );
    }
}

#[test]
fn method_tables() {
    let schema_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema");
    for v in tern_codegen::VERSIONS {
        let schema = tern_codegen::read_schema(&schema_dir.join(v.name).join("schema.json"))
            .expect("run schema/fetch first");
        let table = tern_codegen::method_table(v.name, &schema).unwrap();
        insta::assert_snapshot!(format!("methods_{}", v.module), table);
    }
}

#[test]
fn a_union_that_cannot_be_told_apart_is_an_error_naming_version_and_definition() {
    let schema = serde_json::json!({"$defs": {
        "A": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        "B": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        "AOrB": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}
    }});
    let err = tern_codegen::generate_version("test-version", &schema)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("test-version")
            && err.contains("AOrB")
            && err.contains("cannot be told apart"),
        "{err}"
    );
}

#[test]
fn a_typify_panic_is_an_error_naming_version_and_definition() {
    // A reference to a definition that does not exist makes typify panic.
    let schema = serde_json::json!({"$defs": {
        "Fine": {"type": "object", "properties": {"a": {"type": "string"}}},
        "Broken": {"type": "object", "properties": {"b": {"$ref": "#/$defs/Nowhere"}}}
    }});
    let err = tern_codegen::generate_version("test-version", &schema)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("test-version") && err.contains("Broken") && err.contains("panicked"),
        "{err}"
    );
}
