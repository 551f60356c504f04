//! Each version's method table (an insta snapshot: review with `cargo insta review`),
//! how the generator names inline shapes, and the errors it gives on shapes it cannot
//! express.
//!
//! The fixtures' outputs are checked in `tests/compile_expected.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

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

#[test]
fn an_inline_union_is_named_after_its_parent_and_property() {
    let schema = serde_json::json!({"$defs": {
        "Circle": {"type": "object", "properties": {"type": {"const": "circle"}, "r": {"type": "number"}}, "required": ["type"]},
        "Square": {"type": "object", "properties": {"type": {"const": "square"}, "side": {"type": "number"}}, "required": ["type"]},
        "Drawing": {"type": "object", "properties": {
            "shape": {"anyOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]}
        }}
    }});
    let out = tern_codegen::generate_version("test-version", &schema).unwrap();
    assert!(
        out.source.contains("pub enum DrawingShape {"),
        "{}",
        out.source
    );
    assert!(
        out.source
            .contains("pub shape: ::std::option::Option<DrawingShape>")
    );
}

#[test]
fn an_inline_union_that_cannot_be_told_apart_is_an_error_naming_its_parent() {
    let schema = serde_json::json!({"$defs": {
        "A": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        "B": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        "Holder": {"type": "object", "properties": {
            "either": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}
        }}
    }});
    let err = tern_codegen::generate_version("test-version", &schema)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("test-version")
            && err.contains("HolderEither")
            && err.contains("cannot be told apart"),
        "{err}"
    );
}
