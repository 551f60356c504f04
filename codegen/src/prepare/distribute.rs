//! Two rewrites for schemas written out longhand, as the tasks extension's is: an inline
//! shape identical to a named definition becomes a reference to it, and a definition
//! that is the `allOf` of a union and other members becomes the union of one `allOf`
//! per member of that union.
//!
//! The second is plain distribution: "a `Result`, and one of five task statuses, and
//! `resultType: complete`" is "one of five (a `Result` and that status and
//! `resultType: complete`)". Each of those gets a definition of its own, named after the
//! definition and the member (`GetTaskResultWorkingTask`), and the union's enum
//! dispatches on the members' discriminator as every other union does.

use serde_json::{Map, Value, json};

use super::schema_error;
use crate::Result;
use crate::schema::Defs;

/// Keywords that say nothing about a value's shape: two schemas differing only in
/// these accept the same values.
const ANNOTATIONS: [&str; 3] = ["description", "title", "$schema"];

/// A schema with its annotations removed at every level, for comparison.
fn shape_of(schema: &Value) -> Value {
    match schema {
        Value::Object(obj) => Value::Object(
            obj.iter()
                .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
                .map(|(k, v)| {
                    // Property names are data, not keywords: keep every one.
                    let v = if k == "properties" {
                        match v {
                            Value::Object(props) => Value::Object(
                                props
                                    .iter()
                                    .map(|(n, s)| (n.clone(), shape_of(s)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        shape_of(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape_of).collect()),
        other => other.clone(),
    }
}

/// Whether a definition is worth referring to in place of an inline copy: an object
/// with members or a composition. A bare `{"type": "string"}` is not.
fn is_named_shape(schema: &Value) -> bool {
    ["properties", "anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| schema.get(k).is_some())
}

/// Replaces every inline composition (`anyOf`, `oneOf`, `allOf`), and every inline member
/// of one, whose shape is exactly one named definition's with a reference to that
/// definition. Shapes two definitions share are left inline: which one was meant cannot
/// be told. A plain object in a property stays inline even when a definition looks the
/// same: `{"taskId": string}` as a request's params is not the definition that happens
/// to have that shape.
pub(super) fn share_named_shapes(defs: &mut Map<String, Value>) {
    let named: Vec<(String, Value)> = defs
        .iter()
        .filter(|(_, d)| is_named_shape(d))
        .map(|(n, d)| (n.clone(), shape_of(d)))
        .collect();
    for (name, def) in defs.iter_mut() {
        replace_copies(def, name, &named, Place::Root);
    }
}

/// Where a subschema sits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A definition itself.
    Root,
    /// A member of a composition.
    Member,
    /// Anywhere else: a property, `items`, `additionalProperties`.
    Other,
}

fn is_composition(schema: &Value) -> bool {
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| schema.get(k).is_some())
}

fn replace_copies(schema: &mut Value, owner: &str, named: &[(String, Value)], place: Place) {
    let candidate = match place {
        Place::Root => false,
        Place::Member => is_named_shape(schema),
        Place::Other => is_composition(schema),
    };
    if candidate {
        let shape = shape_of(schema);
        let mut matches = named.iter().filter(|(_, s)| *s == shape);
        if let (Some((target, _)), None) = (matches.next(), matches.next()) {
            if target != owner {
                *schema = json!({ "$ref": format!("#/$defs/{target}") });
                return;
            }
        }
    }
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for sub in props.values_mut() {
            replace_copies(sub, owner, named, Place::Other);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get_mut(key).filter(|s| s.is_object()) {
            replace_copies(sub, owner, named, Place::Other);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(members)) = obj.get_mut(key) {
            for sub in members {
                replace_copies(sub, owner, named, Place::Member);
            }
        }
    }
}

/// Rewrites each definition that is an `allOf` with a union among its members into a
/// union of new definitions, one per member of that union. A union member that is not a
/// union of references, or two union members in one `allOf`, are errors.
pub(super) fn distribute_unions(version: &str, defs: &mut Map<String, Value>) -> Result<()> {
    let snapshot = Defs { map: defs.clone() };
    let mut out = Map::new();
    for (name, def) in std::mem::take(defs) {
        let Some(members) = def.get("allOf").and_then(Value::as_array) else {
            out.insert(name, def);
            continue;
        };
        let unions: Vec<(usize, &Value)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                let m = snapshot.resolve(m);
                m.get("anyOf").is_some() || m.get("oneOf").is_some()
            })
            .collect();
        let [(at, union)] = unions.as_slice() else {
            if unions.len() > 1 {
                return Err(schema_error(
                    version,
                    &name,
                    "two `allOf` members are unions",
                ));
            }
            out.insert(name, def);
            continue;
        };
        let choices = Defs::union_members(snapshot.resolve(union)).ok_or_else(|| {
            schema_error(
                version,
                &name,
                "an `allOf` member is a union whose members are not all references",
            )
        })?;
        let mut refs = Vec::with_capacity(choices.len());
        let mut variants = Vec::with_capacity(choices.len());
        for choice in &choices {
            let variant = format!("{name}{choice}");
            if snapshot.get(&variant).is_some() {
                return Err(schema_error(
                    version,
                    &name,
                    format!("distributing over its union would define `{variant}`, which exists"),
                ));
            }
            let mut parts = members.clone();
            parts[*at] = json!({ "$ref": format!("#/$defs/{choice}") });
            let mut variant_def = json!({ "allOf": parts });
            if let Some(doc) = snapshot.get(choice).and_then(|c| c.get("description")) {
                variant_def["description"] = doc.clone();
            }
            refs.push(json!({ "$ref": format!("#/$defs/{variant}") }));
            variants.push((variant, variant_def));
        }
        let mut union_def = json!({ "anyOf": refs });
        if let Some(doc) = def.get("description") {
            union_def["description"] = doc.clone();
        }
        out.insert(name, union_def);
        out.extend(variants);
    }
    *defs = out;
    Ok(())
}

/// Rewrites every union of string constants (`anyOf: [{const: "a"}, {const: "b"}]`)
/// into the string enum it means (`enum: ["a", "b"]`), at any depth.
pub(super) fn constants_as_enums(defs: &mut Map<String, Value>) {
    for (name, def) in defs.iter_mut() {
        as_enum(def);
        crate::schema::visit_subschemas_mut(def, name, &mut |_, sub| as_enum(sub));
    }
}

fn as_enum(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some(key) = ["anyOf", "oneOf"]
        .into_iter()
        .find(|k| obj.contains_key(*k))
    else {
        return;
    };
    let Some(members) = obj.get(key).and_then(Value::as_array) else {
        return;
    };
    let values: Option<Vec<Value>> = members
        .iter()
        .map(|m| {
            let m = m.as_object()?;
            let only_const = m
                .keys()
                .all(|k| k == "const" || k == "type" || ANNOTATIONS.contains(&k.as_str()));
            let is_string = m.get("type").and_then(Value::as_str) == Some("string");
            (only_const && is_string)
                .then(|| m.get("const").filter(|c| c.is_string()).cloned())
                .flatten()
        })
        .collect();
    let Some(values) = values.filter(|v| !v.is_empty()) else {
        return;
    };
    obj.remove(key);
    obj.insert("type".into(), json!("string"));
    obj.insert("enum".into(), Value::Array(values));
}

/// Rewrites every "a value or null" union (`anyOf: [{type: "integer", ...}, {type:
/// "null"}]`) into the nullable type it means (`type: ["integer", "null"]`), at any depth.
/// A union whose other member is a reference or a composition is left alone.
pub(super) fn nullable_as_type_array(defs: &mut Map<String, Value>) {
    for (name, def) in defs.iter_mut() {
        as_nullable(def);
        crate::schema::visit_subschemas_mut(def, name, &mut |_, sub| as_nullable(sub));
    }
}

fn as_nullable(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Array(members)) = obj.get("anyOf") else {
        return;
    };
    let is_null = |m: &Value| m.get("type").and_then(Value::as_str) == Some("null");
    let [a, b] = members.as_slice() else { return };
    let other = match (is_null(a), is_null(b)) {
        (true, false) => b,
        (false, true) => a,
        _ => return,
    };
    let Some(Value::String(ty)) = other.get("type") else {
        return;
    };
    if is_composition(other) || other.get("$ref").is_some() {
        return;
    }
    let mut merged = other.clone();
    merged["type"] = json!([ty, "null"]);
    obj.remove("anyOf");
    if let Value::Object(m) = merged {
        for (k, v) in m {
            obj.entry(k).or_insert(v);
        }
    }
}
