//! Rewrites of a schema's shapes into what typify reads well: `allOf` merged, JSON
//! value types replaced, raw JSON members, lenient requirements, constants as
//! zero-sized types, `resultType`, open objects, and ordered enums.

use heck::ToUpperCamelCase;
use serde_json::{Map, Value, json};

use super::{ConstInt, ConstStr, Defs, Prepared, schema_error};
use crate::Result;
use crate::schema;

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

/// Replaces every `allOf` with one object schema holding the members' properties
/// (later members refine earlier ones) and the union of their `required` lists.
pub(super) fn merge_all_of(version: &str, defs: &mut Map<String, Value>) -> Result<()> {
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
pub(super) fn order_enums(version: &str, defs: &mut Map<String, Value>) -> Result<()> {
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
pub(super) fn replace_json_values(defs: &mut Map<String, Value>, p: &mut Prepared) {
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
///
/// A member that may be `null` stays required: its null is a value to write out (a
/// task's `ttlMs: null` says "no limit"), which a relaxed member would leave out.
pub(super) fn lenient_required(defs: &mut Map<String, Value>) {
    for def in defs.values_mut() {
        let nullable: Vec<String> = schema::properties(def)
            .map(|props| {
                props
                    .iter()
                    .filter(|(_, p)| {
                        p.get("type")
                            .and_then(Value::as_array)
                            .is_some_and(|t| t.iter().any(|t| t == "null"))
                    })
                    .map(|(n, _)| n.clone())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(Value::Array(required)) = def.get_mut("required") {
            required.retain(|r| {
                !r.as_str().is_some_and(|r| {
                    LENIENT_REQUIRED.contains(&r) && !nullable.iter().any(|n| n == r)
                })
            });
        }
    }
}

pub(super) fn raw_json_properties(defs: &mut Map<String, Value>) {
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

/// A tool call's `arguments` are kept as their JSON text (`ToolArguments`, from a
/// template): the tool decodes them into its own type, and the state digest reads the
/// same text, so the server builds no tree for them. Returns whether the schema has them.
pub(super) fn tool_arguments(defs: &mut Map<String, Value>, p: &mut Prepared) -> bool {
    let Some(slot) = defs
        .get_mut("CallToolRequestParams")
        .and_then(|d| d.get_mut("properties"))
        .and_then(|p| p.get_mut("arguments"))
    else {
        return false;
    };
    let mut replaced = json!({"$ref": "#/$defs/ToolArguments"});
    if let Some(description) = slot.get("description").cloned() {
        replaced["description"] = description;
    }
    *slot = replaced;
    defs.insert("ToolArguments".into(), json!({"type": "object"}));
    p.replacements
        .insert("ToolArguments".into(), "ToolArguments".into());
    true
}

/// Turns every `const` property into a reference to a zero-sized type, so a wrong
/// value (`"jsonrpc": "1.0"`) is an error rather than a string that happens to differ.
pub(super) fn replace_consts(
    version: &str,
    defs: &mut Map<String, Value>,
    p: &mut Prepared,
) -> Result<()> {
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
pub(super) fn replace_result_type(defs: &mut Map<String, Value>, p: &mut Prepared) {
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
            // A result pinned to a value this version does not define (the tasks
            // extension's `"task"`) keeps its constant: that value is its type.
            let pinned = crate::schema::Defs::ref_name(slot)
                .and_then(|r| p.consts.iter().find(|c| c.name == r));
            if pinned.is_some_and(|c| !["complete", "input_required"].contains(&c.value.as_str())) {
                continue;
            }
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

/// typify writes the default of a member whose type it was told to replace as a
/// function in a nested module, naming the replacement unqualified, which does not
/// resolve there for the types this generator emits itself. Such a member drops its
/// `default` and is optional instead (the draft of 2026-07-28 defaults `result_type`).
pub(super) fn drop_defaults_of_replaced(defs: &mut Map<String, Value>, p: &Prepared) {
    let local = |r: &str| {
        p.replacements
            .get(r)
            .is_some_and(|ty| !ty.starts_with("::"))
    };
    for (name, def) in defs.iter_mut() {
        schema::visit_subschemas_mut(def, name, &mut |_, sub| {
            let replaced = Defs::ref_name(sub).is_some_and(local);
            if let (true, Some(obj)) = (replaced, sub.as_object_mut()) {
                obj.remove("default");
            }
        });
    }
}

/// Objects in the protocol are open unless they say otherwise: members the schema does
/// not name must survive a round trip, so every object with named properties also
/// keeps the rest.
pub(super) fn open_objects(defs: &mut Map<String, Value>) {
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
