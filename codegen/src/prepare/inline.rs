//! Unions written inline in a property: each gets a name and becomes a definition.

use serde_json::{Map, Value, json};

use super::{Defs, OutcomeAlias, Prepared, rust_name, schema_error};
use crate::Result;
use crate::schema;

/// Names for unions written inline in a property, keyed by the sorted `$ref`s they list.
const INLINE_UNION_NAMES: &[(&[&str], &str)] = &[
    (
        &["BlobResourceContents", "TextResourceContents"],
        "AnyResourceContents",
    ),
    (
        &["PromptReference", "ResourceTemplateReference"],
        "CompleteReference",
    ),
];

/// Gives every union written inside a property a name of its own, so it becomes a
/// definition like the others.
pub(super) fn extract_inline_unions(
    version: &str,
    defs: &mut Map<String, Value>,
    p: &mut Prepared,
) -> Result<()> {
    let mut new_defs: Vec<(String, Value)> = Vec::new();
    let names: Vec<String> = defs.keys().cloned().collect();
    let snapshot = Defs { map: defs.clone() };
    for name in names {
        let Some(def) = defs.get_mut(&name) else {
            continue;
        };
        let mut failure = None;
        schema::visit_subschemas_mut(def, &name, &mut |path, sub| {
            if sub.get("anyOf").is_none() && sub.get("oneOf").is_none() {
                return;
            }
            let description = sub.get("description").cloned();
            let members = sub
                .get("anyOf")
                .or_else(|| sub.get("oneOf"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let refs: Vec<String> = members
                .iter()
                .filter_map(|m| Defs::ref_name(m).map(str::to_owned))
                .collect();
            let new_name;
            if refs.len() == 2 && refs.contains(&"InputRequiredResult".to_owned()) {
                let complete = refs
                    .iter()
                    .find(|r| *r != "InputRequiredResult")
                    .cloned()
                    .unwrap_or_default();
                let stem = complete.strip_suffix("Result").unwrap_or(&complete);
                new_name = format!("{stem}Outcome");
                if !p.outcomes.iter().any(|o| o.name == new_name) {
                    p.outcomes.push(OutcomeAlias {
                        name: new_name.clone(),
                        complete: rust_name(&complete),
                    });
                    p.replacements.insert(new_name.clone(), new_name.clone());
                    new_defs.push((new_name.clone(), json!({"type": "object"})));
                }
            } else if let Some(n) = known_union_name(&refs, members.len()) {
                new_name = n.to_owned();
                if !new_defs.iter().any(|(k, _)| *k == new_name) {
                    new_defs.push((new_name.clone(), json!({"anyOf": members})));
                }
            } else if path.ends_with("/additionalProperties")
                && members
                    .iter()
                    .any(|m| m.get("type").is_some_and(Value::is_array))
            {
                // The values of a submitted elicitation form.
                new_name = "ElicitValue".to_owned();
                p.replacements.insert(new_name.clone(), new_name.clone());
                if !new_defs.iter().any(|(k, _)| *k == new_name) {
                    new_defs.push((new_name.clone(), json!({"type": "object"})));
                }
            } else if let Some(array) = one_or_many(&members) {
                // "one content block, or a list of them": the list's item type names
                // the single form.
                let Some(item) = array.get("items").and_then(Defs::ref_name) else {
                    failure = Some(format!("an array member without a named item at {path}"));
                    return;
                };
                let block = item.to_owned();
                let stem = block.strip_suffix("Block").unwrap_or(&block);
                let stem = stem.strip_suffix("ContentBlock").unwrap_or(stem);
                new_name = format!("{}Content", stem.strip_suffix("Content").unwrap_or(stem));
                if !new_defs.iter().any(|(k, _)| *k == new_name) {
                    new_defs.push((
                        new_name.clone(),
                        json!({"anyOf": [
                            {"$ref": format!("#/$defs/{block}")},
                            {"type": "array", "items": {"$ref": format!("#/$defs/{block}")}}
                        ]}),
                    ));
                }
            } else {
                // Any other union: a definition of its own, named as typify names inline
                // types; planning its enum says if its members cannot be told apart.
                let Some(n) = free_name(&derived_name(path), &members, &snapshot, &new_defs) else {
                    failure = Some(format!("no free name for the inline union at {path}"));
                    return;
                };
                new_name = n;
                if !new_defs.iter().any(|(k, _)| *k == new_name) {
                    new_defs.push((new_name.clone(), json!({"anyOf": members})));
                }
            }
            let mut r = json!({"$ref": format!("#/$defs/{new_name}")});
            if let Some(d) = description {
                r["description"] = d;
            }
            *sub = r;
        });
        if let Some(message) = failure {
            return Err(schema_error(version, &name, message));
        }
    }
    for (k, v) in new_defs {
        defs.insert(k.clone(), v.clone());
        p.original.map.insert(k, v);
    }
    Ok(())
}

/// The list member of a union of one thing or a list of them (a content block, or a
/// list of content blocks; the one may be written out as its own members). A union
/// with a string constant among its members ("a list, or `\"dynamic\"`") is not one.
fn one_or_many(members: &[Value]) -> Option<&Value> {
    if members.iter().any(|m| m.get("const").is_some()) {
        return None;
    }
    members.iter().find(|m| m.get("items").is_some())
}

/// The [`INLINE_UNION_NAMES`] name of a union whose members are all these references.
fn known_union_name(refs: &[String], members: usize) -> Option<&'static str> {
    if refs.len() != members {
        return None;
    }
    let mut sorted = refs.to_vec();
    sorted.sort();
    INLINE_UNION_NAMES
        .iter()
        .find(|(set, _)| set.iter().copied().eq(sorted.iter().map(String::as_str)))
        .map(|(_, n)| *n)
}

/// The name typify would give an inline schema at `path` (`Def/properties/content` is
/// `DefContent`), with a word repeated at a junction said once.
fn derived_name(path: &str) -> String {
    let mut parts = path.split('/');
    let mut name = rust_name(parts.next().unwrap_or_default());
    while let Some(part) = parts.next() {
        match part {
            "properties" => name.push_str(&rust_name(parts.next().unwrap_or_default())),
            "items" => name.push_str("Item"),
            "additionalProperties" => name.push_str("Value"),
            _ => {
                // `anyOf/2`: the member's position names it.
                let index = parts.next().unwrap_or_default();
                name.push_str(&format!("Variant{index}"));
            }
        }
    }
    super::naming::collapse(&name)
}

/// `wanted`, or `wanted` + `Union`, whichever is not yet a definition; a union already
/// extracted under that name with the same members is the same union.
fn free_name(
    wanted: &str,
    members: &[Value],
    defs: &Defs,
    new_defs: &[(String, Value)],
) -> Option<String> {
    [wanted.to_owned(), format!("{wanted}Union")]
        .into_iter()
        .find(|n| {
            let existing = defs.map.keys().any(|k| rust_name(k) == *n);
            let extracted = new_defs.iter().find(|(k, _)| k == n);
            !existing
                && extracted.is_none_or(|(_, v)| {
                    v.get("anyOf").and_then(Value::as_array) == Some(&members.to_vec())
                })
        })
}
