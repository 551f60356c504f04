//! Names for the types typify makes from inline schemas.
//!
//! typify names an inline schema after its parent and property (`ListToolsResult` +
//! `cacheScope`), which repeats a type once per definition that writes it inline and
//! stutters where the property repeats the parent's last word
//! (`UnsupportedProtocolVersionError` + `error` + `data`). Both are settled here, on
//! the schema typify will read: identical inline enums become one shared definition,
//! and other inline shapes get a `title`, which typify takes as the type's name.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::rust_name;

/// Inline string enums that repeat, identical, under the same property name in more
/// than one place become one definition named after the property (`cacheScope` in
/// seven results is one `CacheScope`). Returns the new definitions' names.
pub(super) fn share_repeated_enums(defs: &mut Map<String, Value>) -> Vec<String> {
    // Property name -> the distinct enum shapes written inline under it, with counts.
    let mut seen: Vec<(String, Value, usize)> = Vec::new();
    for (name, def) in defs.iter_mut() {
        crate::schema::visit_subschemas_mut(def, name, &mut |path, sub| {
            if let Some((property, shape)) = inline_enum(path, sub) {
                match seen
                    .iter_mut()
                    .find(|(p, s, _)| *p == property && *s == shape)
                {
                    Some(entry) => entry.2 += 1,
                    None => seen.push((property, shape, 1)),
                }
            }
        });
    }
    let mut shared: Vec<(String, Value, String)> = Vec::new();
    for (property, shape, count) in &seen {
        let type_name = rust_name(property);
        let one_shape = seen.iter().filter(|(p, _, _)| p == property).count() == 1;
        let free = !defs.keys().any(|k| rust_name(k) == type_name);
        if *count > 1 && one_shape && free {
            shared.push((property.clone(), shape.clone(), type_name));
        }
    }
    let mut descriptions: Vec<Option<Value>> = vec![None; shared.len()];
    for (name, def) in defs.iter_mut() {
        crate::schema::visit_subschemas_mut(def, name, &mut |path, sub| {
            let Some((property, shape)) = inline_enum(path, sub) else {
                return;
            };
            let Some(i) = shared
                .iter()
                .position(|(p, s, _)| *p == property && *s == shape)
            else {
                return;
            };
            let description = sub.get("description").cloned();
            if descriptions[i].is_none() {
                descriptions[i].clone_from(&description);
            }
            let mut r = json!({"$ref": format!("#/$defs/{}", shared[i].2)});
            if let Some(d) = description {
                r["description"] = d;
            }
            *sub = r;
        });
    }
    let mut added = Vec::new();
    for ((_, mut shape, type_name), description) in shared.into_iter().zip(descriptions) {
        if let (Some(obj), Some(d)) = (shape.as_object_mut(), description) {
            obj.insert("description".into(), d);
        }
        defs.insert(type_name.clone(), shape);
        added.push(type_name);
    }
    added
}

/// A property whose schema is an inline string enum: its name and the schema without
/// its description.
fn inline_enum(path: &str, sub: &Value) -> Option<(String, Value)> {
    let (parent, property) = path.rsplit_once('/')?;
    if !parent.ends_with("/properties") {
        return None;
    }
    let obj = sub.as_object()?;
    let values = obj.get("enum")?.as_array()?;
    if !values.iter().all(Value::is_string) || obj.contains_key("$ref") {
        return None;
    }
    let mut shape = obj.clone();
    shape.remove("description");
    Some((property.to_owned(), Value::Object(shape)))
}

/// Gives every inline object or enum whose typify name would stutter a `title` that
/// does not: the definition name and property path with a word repeated at a junction
/// said once (`UnsupportedProtocolVersionError` / `error` / `data` is
/// `UnsupportedProtocolVersionErrorData`). Where that name is already a definition's
/// (the `error` member itself), `Object` is appended: it is the JSON-RPC error object.
pub(super) fn untangle_inline_names(defs: &mut Map<String, Value>) {
    let mut taken: BTreeSet<String> = defs.keys().map(|k| rust_name(k)).collect();
    for (name, def) in defs.iter_mut() {
        let base = rust_name(name);
        walk(def, &base, &base, &mut taken);
    }
}

/// `intended` is the collapsed path name of `schema`, `typify` the name typify gives
/// it (its title, else its parent's name and property).
fn walk(schema: &mut Value, intended: &str, typify: &str, taken: &mut BTreeSet<String>) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (property, sub) in props.iter_mut() {
            let default = rust_name(&format!("{typify}_{property}"));
            let wanted = collapse(&format!("{intended}{}", rust_name(property)));
            let named = name_child(sub, &wanted, &default, taken);
            walk(sub, &wanted, &named, taken);
        }
    }
    if let Some(items) = obj.get_mut("items") {
        let default = format!("{typify}Item");
        let wanted = collapse(&format!("{intended}Item"));
        let named = name_child(items, &wanted, &default, taken);
        walk(items, &wanted, &named, taken);
    }
}

/// Titles `sub` with `wanted` (or a free variant of it) when typify would otherwise
/// name it `default`; returns the name typify will use.
fn name_child(
    sub: &mut Value,
    wanted: &str,
    default: &str,
    taken: &mut BTreeSet<String>,
) -> String {
    let Some(obj) = sub.as_object_mut() else {
        return default.to_owned();
    };
    let shaped = obj.contains_key("properties") || obj.contains_key("enum");
    if let Some(title) = obj.get("title").and_then(Value::as_str) {
        return rust_name(title);
    }
    if !shaped || wanted == default {
        return default.to_owned();
    }
    let choice = [wanted.to_owned(), format!("{wanted}Object")]
        .into_iter()
        .find(|c| !taken.contains(c));
    match choice {
        Some(c) => {
            taken.insert(c.clone());
            obj.insert("title".into(), json!(c));
            c
        }
        None => default.to_owned(),
    }
}

/// Drops a word that repeats the one before it (`ErrorError` is `Error`).
pub(super) fn collapse(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for word in super::words(name) {
        if words.last() != Some(&word) {
            words.push(word);
        }
    }
    words.concat()
}
