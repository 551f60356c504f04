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

#[test]
fn extension_method_tables() {
    let schema_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema");
    for ext in tern_codegen::EXTENSIONS {
        let base = tern_codegen::read_schema(&schema_dir.join(ext.base.name).join("schema.json"))
            .expect("run schema/fetch first");
        let schema = ext
            .schema
            .read(&schema_dir)
            .expect("run schema/fetch first");
        let core = tern_codegen::generate_version(ext.base.name, &base).unwrap();
        let out = tern_codegen::generate_extension(ext, &base, &core.source, &schema).unwrap();
        let table = tern_codegen::render_methods(ext.id, &out.methods);
        insta::assert_snapshot!(format!("methods_{}", ext.module), table);
    }
}

/// A core schema for the extension tests: a result, a request envelope and the client
/// request union an extension's requests join.
fn core_schema() -> serde_json::Value {
    serde_json::json!({"$defs": {
        "Result": {"type": "object", "properties": {"_meta": {"type": "object", "additionalProperties": {}}}},
        "JSONRPCRequest": {"type": "object", "properties": {
            "jsonrpc": {"const": "2.0"}, "id": {"type": "integer"}, "method": {"type": "string"}
        }, "required": ["jsonrpc", "id", "method"]},
        "PingRequest": {"allOf": [{"$ref": "#/$defs/JSONRPCRequest"}, {"type": "object", "properties": {"method": {"const": "ping"}}, "required": ["method"]}]},
        "ClientRequest": {"anyOf": [{"$ref": "#/$defs/PingRequest"}]},
        "Shared": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    }})
}

fn extension(
    defs: serde_json::Value,
) -> Result<tern_codegen::GeneratedVersion, tern_codegen::Error> {
    let base = core_schema();
    let core = tern_codegen::generate_version("core", &base).unwrap();
    let mut ext_defs = base["$defs"].clone();
    for (k, v) in defs.as_object().unwrap() {
        ext_defs[k] = v.clone();
    }
    let ext = tern_codegen::Extension {
        id: "example/ext",
        schema: tern_codegen::ExtensionSchema::Pinned("ext"),
        module: "ext",
        base: tern_codegen::Version {
            name: "core",
            module: "core",
        },
        task_results: &[],
    };
    tern_codegen::generate_extension(
        ext,
        &base,
        &core.source,
        &serde_json::json!({"$defs": ext_defs}),
    )
}

#[test]
fn an_all_of_over_a_union_is_a_union_of_all_ofs_and_core_types_are_not_repeated() {
    let out = extension(serde_json::json!({
        "Up": {"type": "object", "properties": {"state": {"const": "up"}, "since": {"type": "string"}}, "required": ["state", "since"]},
        "Down": {"type": "object", "properties": {"state": {"const": "down"}, "error": {"type": "string"}}, "required": ["state", "error"]},
        "Status": {"anyOf": [
            {"type": "object", "properties": {"state": {"const": "up"}, "since": {"type": "string"}}, "required": ["state", "since"]},
            {"type": "object", "properties": {"state": {"const": "down"}, "error": {"type": "string"}}, "required": ["state", "error"]}
        ]},
        "StatusResult": {"allOf": [{"$ref": "#/$defs/Result"}, {"anyOf": [
            {"type": "object", "properties": {"state": {"const": "up"}, "since": {"type": "string"}}, "required": ["state", "since"]},
            {"type": "object", "properties": {"state": {"const": "down"}, "error": {"type": "string"}}, "required": ["state", "error"]}
        ]}]},
        "StatusRequest": {"allOf": [{"$ref": "#/$defs/JSONRPCRequest"}, {"type": "object", "properties": {"method": {"const": "status/get"}}, "required": ["method"]}]}
    }))
    .unwrap();
    let src = &out.source;
    // The inline copies became references: the union's variants are the named shapes.
    assert!(src.contains("pub enum Status {"), "{src}");
    assert!(
        src.contains("Up(Up)") && src.contains("Down(Down)"),
        "{src}"
    );
    // The result distributes over the union, one struct per status.
    assert!(src.contains("pub enum StatusResult {"), "{src}");
    assert!(
        src.contains("pub struct StatusResultUp {")
            && src.contains("pub struct StatusResultDown {"),
        "{src}"
    );
    // Core types come from the core module, not again.
    assert!(src.contains("use crate::core::*;"), "{src}");
    assert!(
        !src.contains("pub struct Shared ") && !src.contains("pub struct BaseResult "),
        "{src}"
    );
    // Only the extension's own method is in its table.
    let methods: Vec<&str> = out.methods.iter().map(|m| m.method.as_str()).collect();
    assert_eq!(methods, ["status/get"]);
}

#[test]
fn an_extension_that_repeats_a_core_type_differently_is_an_error_naming_it() {
    let err = extension(serde_json::json!({
        "Shared": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    }))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("Shared") && err.contains("differently"),
        "{err}"
    );
}

#[test]
fn an_all_of_with_two_unions_is_an_error() {
    let schema = serde_json::json!({"$defs": {
        "A": {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
        "B": {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]},
        "AB": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
        "Both": {"allOf": [{"$ref": "#/$defs/AB"}, {"$ref": "#/$defs/AB"}]}
    }});
    let err = tern_codegen::generate_version("test-version", &schema)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Both") && err.contains("two `allOf` members are unions"),
        "{err}"
    );
}
