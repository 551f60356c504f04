//! The expected fixture outputs compile (and decode what their schema describes).

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

use serde_json::json;

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
