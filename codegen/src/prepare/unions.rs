//! Plans the enums of union definitions: their variants, names and the checks that
//! pick a variant from JSON.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{Check, ConstStr, Defs, Prepared, Union, Variant, rust_name, schema_error};
use crate::Result;
use crate::schema;

/// Union definitions that cannot be dispatched from their own JSON: results are typed
/// per method (see the method markers), and an input response is decoded by the method
/// of the request that asked for it.
const NOT_DISPATCHABLE: &[&str] = &["ServerResult", "ClientResult", "InputResponse"];

/// Finds every definition that is a union of references and plans its enum.
pub(super) fn collect_unions(
    version: &str,
    defs: &mut Map<String, Value>,
    p: &mut Prepared,
) -> Result<()> {
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in names {
        let Some(def) = defs.get(&name) else { continue };
        if def.get("anyOf").is_none() && def.get("oneOf").is_none() {
            continue;
        }
        let description = def
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if NOT_DISPATCHABLE.contains(&name.as_str()) {
            p.replacements
                .insert(name.clone(), "::serde_json::Value".to_owned());
            defs.insert(name.clone(), json!({"type": "object"}));
            if name == "InputResponse" {
                let u = plan_input_response(version, &p.original, &name, description)?;
                p.unions.push(u);
                p.replacements.insert(name.clone(), name.clone());
            }
            continue;
        }
        let members = def
            .get("anyOf")
            .or_else(|| def.get("oneOf"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let union = plan_union(
            version,
            &p.original,
            &mut p.consts,
            &name,
            description,
            &members,
        )?;
        p.replacements.insert(name.clone(), rust_name(&name));
        defs.insert(name.clone(), json!({"type": "object"}));
        p.unions.push(union);
    }
    if p.has_input_responses {
        p.replacements
            .insert("InputResponses".into(), "InputResponses".into());
        defs.insert("InputResponses".into(), json!({"type": "object"}));
    }
    Ok(())
}

/// `InputResponse` has no discriminator of its own: its variants are decoded by the
/// method of the request they answer, so it gets no deserializer, only the plan.
fn plan_input_response(
    version: &str,
    defs: &Defs,
    name: &str,
    description: Option<String>,
) -> Result<Union> {
    let members = defs
        .get(name)
        .and_then(Defs::union_members)
        .ok_or_else(|| schema_error(version, name, "expected a union of references"))?;
    let names = variant_names(&members);
    Ok(Union {
        name: name.to_owned(),
        description,
        tag: None,
        variants: members
            .iter()
            .zip(names)
            .map(|(m, v)| Variant {
                name: v,
                ty: rust_name(m),
                checks: Vec::new(),
            })
            .collect(),
    })
}

/// Splits a Rust type name into its words.
pub(super) fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, c) in name.char_indices() {
        if c.is_uppercase() || i == 0 {
            out.push(c.to_string());
        } else if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out
}

/// Readable variant names: the words every member shares at the start or the end are
/// dropped (`CallToolRequest` in `ClientRequest` becomes `CallTool`), and a trailing
/// `Content` is dropped from content blocks.
fn variant_names(members: &[String]) -> Vec<String> {
    let split: Vec<Vec<String>> = members.iter().map(|m| words(&rust_name(m))).collect();
    let shortest = split.iter().map(Vec::len).min().unwrap_or(0);
    let mut prefix = 0;
    while prefix < shortest && split.iter().all(|w| w[prefix] == split[0][prefix]) {
        prefix += 1;
    }
    let mut suffix = 0;
    while suffix < shortest - prefix
        && split
            .iter()
            .all(|w| w[w.len() - 1 - suffix] == split[0][split[0].len() - 1 - suffix])
    {
        suffix += 1;
    }
    if members.len() < 2 || split.iter().any(|w| w.len() <= prefix + suffix) {
        prefix = 0;
        suffix = 0;
    }
    split
        .iter()
        .map(|w| {
            let mut core: Vec<String> = w[prefix..w.len() - suffix].to_vec();
            if core.len() > 1 && core.last().is_some_and(|l| l == "Content") {
                core.pop();
            }
            core.concat()
        })
        .collect()
}

/// The checks that single out one member of a union from the others.
fn plan_union(
    version: &str,
    defs: &Defs,
    consts: &mut BTreeSet<ConstStr>,
    name: &str,
    description: Option<String>,
    members: &[Value],
) -> Result<Union> {
    let member_schemas: Vec<(String, Value)> = members
        .iter()
        .map(|m| match Defs::ref_name(m) {
            Some(r) => (r.to_owned(), defs.resolve(m).clone()),
            None => (String::new(), m.clone()),
        })
        .collect();
    let refs: Vec<String> = member_schemas
        .iter()
        .filter(|(r, _)| !r.is_empty())
        .map(|(r, _)| r.clone())
        .collect();
    let mut names = variant_names(&refs).into_iter();

    // The tag: a property every member pins to string values, distinct across members.
    let tag = candidate_tag(&member_schemas);

    let arrays = member_schemas
        .iter()
        .filter(|(r, s)| r.is_empty() && s.get("items").is_some())
        .count();
    let mut variants = Vec::new();
    for (r, s) in &member_schemas {
        if let (true, Some(value)) = (r.is_empty(), s.get("const").and_then(Value::as_str)) {
            // A string constant ("dynamic"): a zero-sized type of its own.
            let variant = rust_name(value);
            let ty = format!("{}{variant}", rust_name(name));
            consts.insert(ConstStr {
                name: ty.clone(),
                value: value.to_owned(),
                property: name.to_owned(),
            });
            variants.push(Variant {
                name: variant,
                ty,
                checks: vec![Check::IsString(value.to_owned())],
            });
            continue;
        }
        if r.is_empty() {
            let item = s
                .get("items")
                .and_then(Defs::ref_name)
                .ok_or_else(|| schema_error(version, name, "an array member needs a named item"))?;
            // One list member is the list; several (2025-03-26's batches of requests
            // and of responses) are told apart by what they list.
            let variant = if arrays == 1 {
                "Many".to_owned()
            } else {
                format!("Many{}", rust_name(item))
            };
            variants.push(Variant {
                name: variant,
                ty: format!("::std::vec::Vec<{}>", rust_name(item)),
                checks: vec![Check::IsArray],
            });
            continue;
        }
        let vname = names.next().unwrap_or_else(|| rust_name(r));
        variants.push(Variant {
            name: vname,
            ty: rust_name(r),
            checks: Vec::new(),
        });
    }
    let shapes = member_schemas.iter().any(|(r, _)| r.is_empty());
    if shapes {
        // One object or a list of them: the object is the single form.
        for v in &mut variants {
            if v.checks.is_empty() {
                v.checks.push(Check::IsObject);
                if v.name == rust_name(&refs[0]) || refs.len() == 1 {
                    v.name = "One".into();
                }
            }
        }
        return Ok(Union {
            name: name.to_owned(),
            description,
            tag: None,
            variants,
        });
    }

    // Per member: its tag test, plus the required members (one level deep) that the
    // others do not all require.
    let features: Vec<BTreeSet<Check>> = member_schemas
        .iter()
        .map(|(_, s)| features_of(s, &[]))
        .collect();
    for (i, v) in variants.iter_mut().enumerate() {
        let mut checks: Vec<Check> = Vec::new();
        if let Some((field, _)) = &tag {
            let prop = schema::properties(&member_schemas[i].1).and_then(|p| p.get(field));
            let values = prop.map(schema::tag_values).unwrap_or_default();
            if schema::required(&member_schemas[i].1).contains(field) {
                checks.push(Check::OneOf(vec![field.clone()], values));
            } else {
                checks.push(Check::OneOfOrMissing(vec![field.clone()], values));
            }
        }
        let tag_unique = tag.as_ref().is_some_and(|(field, _)| {
            let mine = tag_of(&member_schemas[i].1, field);
            member_schemas
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .all(|(_, (_, s))| tag_of(s, field).iter().all(|t| !mine.contains(t)))
        });
        if !tag_unique {
            for f in &features[i] {
                let everyone = features.iter().all(|other| other.contains(f));
                let is_tag = matches!(f, Check::OneOf(path, _) if tag.as_ref().is_some_and(|(t, _)| path.len() == 1 && &path[0] == t));
                if !everyone && !is_tag {
                    checks.push(f.clone());
                }
            }
        }
        v.checks = checks;
    }
    // Members that require the same things are told apart by an optional member only
    // one of them defines (`enumNames` marks the legacy titled enum); the one without
    // it is then the fallback.
    let defined = |i: usize| -> BTreeSet<String> {
        schema::properties(&member_schemas[i].1)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    for i in 0..variants.len() {
        for j in 0..variants.len() {
            if i == j || variants[i].checks != variants[j].checks {
                continue;
            }
            let extra: Vec<String> = defined(i).difference(&defined(j)).cloned().collect();
            if let Some(marker) = extra.first() {
                variants[i].checks.push(Check::Has(vec![marker.clone()]));
            }
        }
    }
    // Most specific first; two members with the same checks cannot be told apart.
    variants.sort_by_key(|v| std::cmp::Reverse(v.checks.len()));
    for (i, a) in variants.iter().enumerate() {
        for b in variants.iter().skip(i + 1) {
            if a.checks == b.checks {
                return Err(schema_error(
                    version,
                    name,
                    format!("members {} and {} cannot be told apart", a.ty, b.ty),
                ));
            }
        }
    }
    Ok(Union {
        name: name.to_owned(),
        description,
        tag,
        variants,
    })
}

fn tag_of(schema: &Value, field: &str) -> Vec<String> {
    schema::properties(schema)
        .and_then(|p| p.get(field))
        .map(schema::tag_values)
        .unwrap_or_default()
}

fn candidate_tag(members: &[(String, Value)]) -> Option<(String, Vec<String>)> {
    let (_, first) = members.first()?;
    let props = schema::properties(first)?;
    for field in props.keys() {
        let all: Vec<Vec<String>> = members.iter().map(|(_, s)| tag_of(s, field)).collect();
        if all.iter().any(Vec::is_empty) {
            continue;
        }
        let mut values: Vec<String> = all.concat();
        values.sort();
        values.dedup();
        if values.len() > 1 {
            let mut ordered: Vec<String> = Vec::new();
            for v in all.concat() {
                if !ordered.contains(&v) {
                    ordered.push(v);
                }
            }
            return Some((field.clone(), ordered));
        }
    }
    None
}

/// Required members and pinned values of an object schema, and of its required object
/// members one level down.
fn features_of(schema: &Value, path: &[String]) -> BTreeSet<Check> {
    let mut out = BTreeSet::new();
    let required = schema::required(schema);
    let props = schema::properties(schema).cloned().unwrap_or_default();
    for r in &required {
        let mut p = path.to_vec();
        p.push(r.clone());
        out.insert(Check::Has(p.clone()));
        if let Some(prop) = props.get(r) {
            let values = schema::tag_values(prop);
            if !values.is_empty() {
                out.insert(Check::OneOf(p.clone(), values));
            }
            if path.is_empty() && prop.get("properties").is_some() {
                out.extend(features_of(prop, &p));
            }
        }
    }
    out
}
