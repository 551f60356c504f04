//! The generator on one small schema per pattern (`tests/fixtures/<name>.json`): its
//! output is exactly `tests/expected/<name>.rs`, which this test compiles and uses to
//! decode what the schema describes. `TERN_BLESS=1 cargo test -p tern-codegen`
//! rewrites the expected files after an intended change.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Generated modules reach the shared items through `crate::rpc`: the template itself,
/// so its crate-private macros are in reach as they are inside `tern-types`.
#[rustfmt::skip]
#[allow(dead_code, unreachable_pub, unused_imports, unused_macros)]
#[path = "../src/templates/rpc.rs"]
mod rpc;

#[rustfmt::skip]
#[allow(dead_code)]
#[path = "expected/all_of.rs"]
mod all_of;
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "expected/any_of_refs.rs"]
mod any_of_refs;
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "expected/const_tag.rs"]
mod const_tag;
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "expected/open_object.rs"]
mod open_object;
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "expected/recursion.rs"]
mod recursion;
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "expected/type_array.rs"]
mod type_array;

use std::path::Path;

use serde_json::json;

/// Every fixture, each with a module above.
const FIXTURES: &[&str] = &[
    "const_tag",
    "type_array",
    "any_of_refs",
    "all_of",
    "open_object",
    "recursion",
];

#[test]
fn every_fixture_has_an_expected_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(str::to_owned)
        })
        .collect();
    found.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|f| (*f).to_owned()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "list each fixture in FIXTURES and add its module"
    );
}

#[test]
fn expected_files_are_what_the_generator_makes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let bless = std::env::var_os("TERN_BLESS").is_some();
    let mut stale = Vec::new();
    for name in FIXTURES {
        let schema =
            tern_codegen::read_schema(&root.join(format!("fixtures/{name}.json"))).unwrap();
        let out = tern_codegen::generate_version("fixture", &schema).unwrap();
        let expected = root.join(format!("expected/{name}.rs"));
        if bless {
            std::fs::write(&expected, &out.source).unwrap();
        }
        let committed = std::fs::read_to_string(&expected).unwrap_or_default();
        if committed != out.source {
            let line = committed
                .lines()
                .zip(out.source.lines())
                .position(|(a, b)| a != b)
                .map_or_else(|| "the end".to_owned(), |i| format!("line {}", i + 1));
            stale.push(format!(
                "{} (first difference at {line})",
                expected.display()
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "stale: {}\nrun `TERN_BLESS=1 cargo test -p tern-codegen` and review the diff",
        stale.join(", ")
    );
}

#[test]
fn const_tag_dispatches_on_type() {
    let shape: const_tag::Shape =
        serde_json::from_value(json!({"type": "square", "side": 2})).unwrap();
    assert!(matches!(shape, const_tag::Shape::Square(_)));
    assert!(
        serde_json::from_value::<const_tag::Circle>(json!({"type": "square", "radius": 1}))
            .is_err()
    );
}

#[test]
fn type_array_takes_both_kinds() {
    let a: type_array::Holder = serde_json::from_value(json!({"token": 3})).unwrap();
    let b: type_array::Holder = serde_json::from_value(json!({"token": "x"})).unwrap();
    assert_ne!(a, b);
}

#[test]
fn any_of_refs_dispatches_on_required_members() {
    let body: any_of_refs::Body =
        serde_json::from_value(json!({"uri": "u", "blob": "AA=="})).unwrap();
    assert!(matches!(body, any_of_refs::Body::Blob(_)));
}

#[test]
fn all_of_merges_and_pins_the_code() {
    let ok: all_of::NotFound =
        serde_json::from_value(json!({"code": -32002, "message": "m", "uri": "u"})).unwrap();
    assert_eq!(serde_json::to_value(&ok).unwrap()["code"], -32002);
    assert!(
        serde_json::from_value::<all_of::NotFound>(json!({"code": -1, "message": "m", "uri": "u"}))
            .is_err()
    );
}

#[test]
fn open_object_keeps_unknown_members() {
    let v = json!({"name": "n", "vendor/x": [1, null], "tags": []});
    let item: open_object::Item = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&item).unwrap(), v);
}

#[test]
fn recursion_nests() {
    let v = json!({"label": "root", "children": [{"label": "leaf", "children": []}]});
    let node: recursion::Node = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&node).unwrap(), v);
}
