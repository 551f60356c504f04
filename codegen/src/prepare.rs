//! Rewrites a protocol schema into what typify should see, and records what the
//! generator emits itself instead.
//!
//! typify makes the leaf structs. Everything the schema states through `const` values
//! (tags, method names, error codes), every union, and the JSON value types are taken
//! out of its hands here: each becomes a `$ref` to a definition that typify is told to
//! replace with a type this generator emits.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use serde_json::{Map, Value, json};

use crate::schema::{self, Defs};
use crate::{Error, Result};

/// Definition names that would shadow std or read badly, and what tern calls them.
const RENAMES: &[(&str, &str)] = &[
    ("Result", "BaseResult"),
    ("Request", "BaseRequest"),
    ("Notification", "BaseNotification"),
    ("Error", "ErrorObject"),
];

/// Schemas of properties that stay raw JSON whatever their declared shape: tool schemas,
/// tool arguments and structured content are the user's own JSON.
const RAW_JSON_PROPERTIES: &[(&str, &str, RawJson)] = &[
    ("Tool", "inputSchema", RawJson::Object),
    ("Tool", "outputSchema", RawJson::Object),
    ("CallToolResult", "structuredContent", RawJson::Any),
    ("ToolResultContent", "structuredContent", RawJson::Any),
    ("ToolUseContent", "input", RawJson::Object),
];

/// How raw a raw JSON property is.
#[derive(Clone, Copy)]
enum RawJson {
    /// A JSON object (a schema, tool arguments).
    Object,
    /// Any JSON value: published examples carry arrays as structured content.
    Any,
}

/// Required members a decoder must not insist on. The published example
/// `ReadResourceResultResponse/read-resource-result-response.json` omits the caching
/// fields, and servers of the previous version never send them; tern's servers always
/// do.
///
/// `_meta` is in the list too: a client fills it on every request, so users building
/// params leave it empty, and a server checks it explicitly on every request to answer
/// with the protocol's own error (-32602) rather than a decoding failure.
const LENIENT_REQUIRED: &[&str] = &["ttlMs", "cacheScope", "_meta"];

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

/// String enums whose values have a meaningful order the published schema loses (it
/// lists them alphabetically). The enum's variants, and so its derived `Ord`, follow
/// this order: log levels are RFC 5424 severities, least severe first.
const ORDERED_ENUMS: &[(&str, &[&str])] = &[(
    "LoggingLevel",
    &[
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ],
)];

/// Union definitions that cannot be dispatched from their own JSON: results are typed
/// per method (see the method markers), and an input response is decoded by the method
/// of the request that asked for it.
const NOT_DISPATCHABLE: &[&str] = &["ServerResult", "ClientResult", "InputResponse"];

/// A string constant the schema pins a property to, emitted as a zero-sized type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ConstStr {
    pub(crate) name: String,
    pub(crate) value: String,
    pub(crate) property: String,
}

/// An integer constant (an error code), emitted as an alias of `ErrorCode<N>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ConstInt {
    pub(crate) name: String,
    pub(crate) value: i64,
}

/// One test a union's deserializer makes to pick a variant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Check {
    /// The value at the path is one of these strings.
    OneOf(Vec<String>, Vec<String>),
    /// The value at the path is one of these strings, or absent.
    OneOfOrMissing(Vec<String>, Vec<String>),
    /// The object has a member at the path.
    Has(Vec<String>),
    /// The value is a JSON array.
    IsArray,
    /// The value is a JSON object.
    IsObject,
}

/// One variant of a union.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    pub(crate) name: String,
    /// The Rust type the variant holds, as a path in the version module.
    pub(crate) ty: String,
    pub(crate) checks: Vec<Check>,
}

/// A union the generator emits as an enum with a discriminating deserializer.
#[derive(Debug, Clone)]
pub(crate) struct Union {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// The member whose value names the variant, when there is one (`type`, `method`).
    pub(crate) tag: Option<(String, Vec<String>)>,
    pub(crate) variants: Vec<Variant>,
}

/// A "complete or input-required" result: an alias of `Outcome<Complete>`.
#[derive(Debug, Clone)]
pub(crate) struct OutcomeAlias {
    pub(crate) name: String,
    pub(crate) complete: String,
}

/// Everything the generator learned from one schema.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) version: String,
    /// The rewritten definitions, for typify.
    pub(crate) defs: Map<String, Value>,
    /// The original definitions (after renames and `allOf` merging), for analysis.
    pub(crate) original: Defs,
    /// Schema name -> Rust type name, for every definition that has a Rust type.
    pub(crate) rust_names: BTreeMap<String, String>,
    /// Definition name -> the type typify must use instead of generating one.
    pub(crate) replacements: BTreeMap<String, String>,
    pub(crate) consts: BTreeSet<ConstStr>,
    pub(crate) codes: BTreeSet<ConstInt>,
    pub(crate) unions: Vec<Union>,
    pub(crate) outcomes: Vec<OutcomeAlias>,
    /// Whether this version has `InputRequiredResult` (and so `Outcome`).
    pub(crate) has_input_required: bool,
    /// Whether this version has `InputResponses` (decoded against `InputRequests`).
    pub(crate) has_input_responses: bool,
}

/// The Rust name typify gives a definition.
pub(crate) fn rust_name(def: &str) -> String {
    def.to_upper_camel_case()
}

fn schema_error(version: &str, definition: &str, message: impl Into<String>) -> Error {
    Error::Schema {
        version: version.to_owned(),
        definition: definition.to_owned(),
        message: message.into(),
    }
}

pub(crate) fn prepare(version: &str, root: &Value) -> Result<Prepared> {
    let mut defs = Defs::from_schema(version, root)?.map;
    rename_definitions(&mut defs);
    merge_all_of(version, &mut defs)?;
    order_enums(version, &mut defs)?;
    let original = Defs { map: defs.clone() };

    let mut p = Prepared {
        version: version.to_owned(),
        defs: Map::new(),
        original,
        rust_names: BTreeMap::new(),
        replacements: BTreeMap::new(),
        consts: BTreeSet::new(),
        codes: BTreeSet::new(),
        unions: Vec::new(),
        outcomes: Vec::new(),
        has_input_required: defs.contains_key("InputRequiredResult"),
        has_input_responses: defs.contains_key("InputResponses")
            && defs.contains_key("InputRequests"),
    };

    for (schema_name, _) in RENAMES {
        if let Some((_, to)) = RENAMES.iter().find(|(from, _)| from == schema_name) {
            if defs.contains_key(*to) {
                p.rust_names
                    .insert((*schema_name).to_owned(), (*to).to_owned());
            }
        }
    }

    replace_json_values(&mut defs, &mut p);
    raw_json_properties(&mut defs);
    lenient_required(&mut defs);
    extract_inline_unions(version, &mut defs, &mut p)?;
    collect_unions(version, &mut defs, &mut p)?;
    replace_consts(version, &mut defs, &mut p)?;
    replace_result_type(&mut defs, &mut p);
    open_objects(&mut defs);
    crate::naming::share_repeated_enums(&mut defs);
    crate::naming::untangle_inline_names(&mut defs);

    for name in defs.keys() {
        if !p.replacements.contains_key(name) || p.unions.iter().any(|u| &u.name == name) {
            p.rust_names
                .entry(schema_name_of(name).to_owned())
                .or_insert_with(|| rust_name(name));
        }
    }
    // The raw input-response map and the outcome aliases are types too.
    for o in &p.outcomes {
        p.rust_names.insert(o.name.clone(), o.name.clone());
    }
    if p.has_input_responses {
        p.rust_names
            .insert("InputResponses".into(), "InputResponses".into());
    }
    p.defs = rewrite_refs_for_typify(defs);
    // typify looks replacements up by the Rust name it would give the definition.
    p.replacements = std::mem::take(&mut p.replacements)
        .into_iter()
        .map(|(k, v)| (rust_name(&k), v))
        .collect();
    Ok(p)
}

/// The schema name of a (possibly renamed) definition.
fn schema_name_of(def: &str) -> &str {
    RENAMES
        .iter()
        .find(|(_, to)| *to == def)
        .map(|(from, _)| *from)
        .unwrap_or(def)
}

fn for_each_ref(value: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match value {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                if k == "$ref" {
                    if let Value::String(s) = v {
                        f(s);
                    }
                } else {
                    for_each_ref(v, f);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| for_each_ref(v, f)),
        _ => {}
    }
}

fn rename_definitions(defs: &mut Map<String, Value>) {
    let mut renames: Vec<(String, String)> = RENAMES
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    for name in defs.keys() {
        if let Some(rest) = name.strip_prefix("JSONRPC") {
            renames.push((name.clone(), format!("JsonRpc{rest}")));
        }
    }
    let renames: Vec<_> = renames
        .into_iter()
        .filter(|(from, _)| defs.contains_key(from))
        .collect();
    let old = std::mem::take(defs);
    for (k, v) in old {
        let k = renames
            .iter()
            .find(|(from, _)| *from == k)
            .map(|(_, to)| to.clone())
            .unwrap_or(k);
        defs.insert(k, v);
    }
    for v in defs.values_mut() {
        for_each_ref(v, &mut |r| {
            for (from, to) in &renames {
                if r.rsplit('/').next() == Some(from.as_str()) {
                    *r = format!("#/$defs/{to}");
                }
            }
        });
    }
}

/// Replaces every `allOf` with one object schema holding the members' properties
/// (later members refine earlier ones) and the union of their `required` lists.
fn merge_all_of(version: &str, defs: &mut Map<String, Value>) -> Result<()> {
    let snapshot = Defs { map: defs.clone() };
    for (name, def) in defs.iter_mut() {
        let mut failure = None;
        merge_in(&snapshot, def, &mut failure);
        schema::visit_subschemas_mut(def, name, &mut |_, sub| {
            merge_in(&snapshot, sub, &mut failure)
        });
        if let Some(message) = failure {
            return Err(schema_error(version, name, message));
        }
    }
    Ok(())
}

fn merge_in(defs: &Defs, schema: &mut Value, failure: &mut Option<String>) {
    let Some(members) = schema.get("allOf").and_then(Value::as_array).cloned() else {
        return;
    };
    let mut props = Map::new();
    let mut required: Vec<String> = Vec::new();
    let mut additional = None;
    for member in &members {
        let mut member = defs.resolve(member).clone();
        if member.get("allOf").is_some() {
            merge_in(defs, &mut member, failure);
        }
        if member.get("anyOf").is_some() || member.get("oneOf").is_some() {
            *failure = Some("an `allOf` member is itself a union".into());
            return;
        }
        for (k, v) in schema::properties(&member).cloned().unwrap_or_default() {
            match (props.get_mut(&k), v) {
                (Some(Value::Object(existing)), Value::Object(refine)) => {
                    for (rk, rv) in refine {
                        existing.insert(rk, rv);
                    }
                    if existing.contains_key("const") {
                        existing.remove("enum");
                    }
                }
                (_, v) => {
                    props.insert(k, v);
                }
            }
        }
        for r in schema::required(&member) {
            if !required.contains(&r) {
                required.push(r);
            }
        }
        if let Some(a) = member.get("additionalProperties") {
            additional = Some(a.clone());
        }
    }
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    obj.remove("allOf");
    obj.insert("type".into(), json!("object"));
    obj.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        obj.insert("required".into(), json!(required));
    }
    if let Some(a) = additional {
        obj.insert("additionalProperties".into(), a);
    }
}

/// Puts the values of every [`ORDERED_ENUMS`] definition in their meaningful order. A
/// schema that lists other values is an error: guessing where a new value goes would
/// silently give it a wrong order.
fn order_enums(version: &str, defs: &mut Map<String, Value>) -> Result<()> {
    for (name, order) in ORDERED_ENUMS {
        let Some(Value::Array(values)) = defs.get_mut(*name).and_then(|d| d.get_mut("enum")) else {
            continue;
        };
        let mut given: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        let mut known = order.to_vec();
        given.sort_unstable();
        known.sort_unstable();
        if given != known {
            return Err(schema_error(
                version,
                name,
                format!("its values are not the ordered set {order:?}: update ORDERED_ENUMS"),
            ));
        }
        *values = order.iter().map(|v| json!(v)).collect();
    }
    Ok(())
}

/// The schema's own JSON value types are replaced by `serde_json`'s: the published
/// `JSONValue` forbids `null` and floats, which real JSON has.
fn replace_json_values(defs: &mut Map<String, Value>, p: &mut Prepared) {
    let table = [
        ("JSONValue", "::serde_json::Value"),
        (
            "JSONObject",
            "::serde_json::Map<::std::string::String, ::serde_json::Value>",
        ),
        ("JSONArray", "::std::vec::Vec<::serde_json::Value>"),
    ];
    for (def, ty) in table {
        if let Some(slot) = defs.get_mut(def) {
            *slot = json!({"type": "object"});
            p.replacements.insert(def.to_owned(), ty.to_owned());
        }
    }
    // Raw JSON members refer to it even where the schema has no `JSONValue`.
    if !defs.contains_key("JSONValue") {
        defs.insert("JSONValue".into(), json!({"type": "object"}));
        p.replacements
            .insert("JSONValue".into(), "::serde_json::Value".into());
    }
    // JSON numbers keep their spelling (`50` stays `50`, not `50.0`).
    defs.insert("JSONNumber".into(), json!({"type": "number"}));
    p.replacements
        .insert("JSONNumber".into(), "::serde_json::Number".into());
    for (name, def) in defs.iter_mut() {
        schema::visit_subschemas_mut(def, name, &mut |_, sub| {
            let Some(obj) = sub.as_object() else { return };
            let plain_number = obj.get("type") == Some(&json!("number"))
                && obj.keys().all(|k| k == "type" || k == "description");
            if plain_number {
                let description = obj.get("description").cloned();
                let mut r = json!({"$ref": "#/$defs/JSONNumber"});
                if let Some(d) = description {
                    r["description"] = d;
                }
                *sub = r;
            }
        });
    }
}

/// Drops [`LENIENT_REQUIRED`] members from every `required` list.
fn lenient_required(defs: &mut Map<String, Value>) {
    for def in defs.values_mut() {
        if let Some(Value::Array(required)) = def.get_mut("required") {
            required.retain(|r| !r.as_str().is_some_and(|r| LENIENT_REQUIRED.contains(&r)));
        }
    }
}

fn raw_json_properties(defs: &mut Map<String, Value>) {
    for (def, prop, kind) in RAW_JSON_PROPERTIES {
        if let Some(slot) = defs
            .get_mut(*def)
            .and_then(|d| d.get_mut("properties"))
            .and_then(|p| p.get_mut(*prop))
        {
            let description = slot.get("description").cloned();
            let mut raw = match kind {
                RawJson::Object => json!({"type": "object", "additionalProperties": {}}),
                RawJson::Any => json!({"$ref": "#/$defs/JSONValue"}),
            };
            if let Some(d) = description {
                raw["description"] = d;
            }
            *slot = raw;
        }
    }
}

/// Gives every union written inside a property a name of its own, so it becomes a
/// definition like the others.
fn extract_inline_unions(
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
            } else if refs.len() == members.len() {
                let mut sorted = refs.clone();
                sorted.sort();
                let Some((_, n)) = INLINE_UNION_NAMES
                    .iter()
                    .find(|(set, _)| set.iter().copied().eq(sorted.iter().map(String::as_str)))
                else {
                    failure = Some(format!("no name for the inline union at {path}"));
                    return;
                };
                new_name = (*n).to_owned();
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
            } else if let Some(array) = members.iter().find(|m| m.get("items").is_some()) {
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
                failure = Some(format!(
                    "an inline union the generator cannot name at {path}"
                ));
                return;
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
    let _ = snapshot;
    for (k, v) in new_defs {
        defs.insert(k.clone(), v.clone());
        p.original.map.insert(k, v);
    }
    Ok(())
}

/// Finds every definition that is a union of references and plans its enum.
fn collect_unions(version: &str, defs: &mut Map<String, Value>, p: &mut Prepared) -> Result<()> {
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
        let union = plan_union(version, &p.original, &name, description, &members)?;
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
pub(crate) fn words(name: &str) -> Vec<String> {
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
pub(crate) fn variant_names(members: &[String]) -> Vec<String> {
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

    let mut variants = Vec::new();
    for (r, s) in &member_schemas {
        if r.is_empty() {
            let item = s
                .get("items")
                .and_then(Defs::ref_name)
                .ok_or_else(|| schema_error(version, name, "an array member needs a named item"))?;
            variants.push(Variant {
                name: "Many".into(),
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

/// Turns every `const` property into a reference to a zero-sized type, so a wrong
/// value (`"jsonrpc": "1.0"`) is an error rather than a string that happens to differ.
fn replace_consts(version: &str, defs: &mut Map<String, Value>, p: &mut Prepared) -> Result<()> {
    let names: Vec<String> = defs.keys().cloned().collect();
    let mut new_defs = Vec::new();
    for def_name in names {
        let Some(def) = defs.get_mut(&def_name) else {
            continue;
        };
        let mut failure = None;
        schema::visit_subschemas_mut(def, &def_name, &mut |path, sub| {
            let Some(c) = sub.get("const").cloned() else {
                return;
            };
            let property = path.rsplit('/').next().unwrap_or_default().to_owned();
            match c {
                Value::String(value) => {
                    let type_name = if property == "jsonrpc" {
                        "JsonRpcVersion".to_owned()
                    } else {
                        format!(
                            "{}{}",
                            value.to_upper_camel_case(),
                            property.to_upper_camel_case()
                        )
                    };
                    p.consts.insert(ConstStr {
                        name: type_name.clone(),
                        value,
                        property,
                    });
                    p.replacements.insert(type_name.clone(), type_name.clone());
                    new_defs.push(type_name.clone());
                    *sub = json!({"$ref": format!("#/$defs/{type_name}")});
                }
                Value::Number(n) => {
                    let Some(value) = n.as_i64() else {
                        failure = Some(format!("a non-integer number constant at {path}"));
                        return;
                    };
                    let type_name = format!(
                        "{}{}",
                        def_name.strip_suffix("Error").unwrap_or(&def_name),
                        property.to_upper_camel_case()
                    );
                    p.codes.insert(ConstInt {
                        name: type_name.clone(),
                        value,
                    });
                    p.replacements.insert(type_name.clone(), type_name.clone());
                    new_defs.push(type_name.clone());
                    *sub = json!({"$ref": format!("#/$defs/{type_name}")});
                }
                other => {
                    failure = Some(format!("an unsupported constant {other} at {path}"));
                }
            }
        });
        if let Some(message) = failure {
            return Err(schema_error(version, &def_name, message));
        }
    }
    for n in new_defs {
        if defs.contains_key(&n)
            && !p.consts.iter().any(|c| c.name == n)
            && !p.codes.iter().any(|c| c.name == n)
        {
            return Err(schema_error(
                version,
                &n,
                "a constant's type name collides with a definition",
            ));
        }
        defs.insert(n, json!({"type": "string"}));
    }
    Ok(())
}

/// `resultType` becomes tern's `ResultType` enum wherever it appears.
fn replace_result_type(defs: &mut Map<String, Value>, p: &mut Prepared) {
    if !defs.contains_key("ResultType") {
        return;
    }
    for (name, def) in defs.iter_mut() {
        if name == "ResultType" {
            continue;
        }
        if let Some(slot) = def
            .get_mut("properties")
            .and_then(|props| props.get_mut("resultType"))
        {
            let mut r = json!({"$ref": "#/$defs/ResultType"});
            if let Some(d) = slot.get("description") {
                r["description"] = d.clone();
            }
            *slot = r;
        }
    }
    p.replacements
        .insert("ResultType".into(), "ResultType".into());
}

/// Objects in the protocol are open unless they say otherwise: members the schema does
/// not name must survive a round trip, so every object with named properties also
/// keeps the rest.
fn open_objects(defs: &mut Map<String, Value>) {
    fn open(schema: &mut Value) {
        if let Some(obj) = schema.as_object_mut() {
            if obj.contains_key("properties") && !obj.contains_key("additionalProperties") {
                obj.insert("additionalProperties".into(), json!({}));
            }
        }
    }
    for (name, def) in defs.iter_mut() {
        open(def);
        schema::visit_subschemas_mut(def, name, &mut |_, sub| open(sub));
    }
}

/// typify reads draft-07 style references.
fn rewrite_refs_for_typify(mut defs: Map<String, Value>) -> Map<String, Value> {
    for v in defs.values_mut() {
        for_each_ref(v, &mut |r| {
            if let Some(name) = r.strip_prefix("#/$defs/") {
                *r = format!("#/definitions/{name}");
            }
        });
    }
    defs
}
