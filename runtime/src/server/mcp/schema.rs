//! JSON Schema 2020-12 for typed arguments and forms, generated with schemars.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

/// The object schema of `T`, for a tool's `inputSchema` or `outputSchema`. A type whose
/// schema is not an object (such as `()`) gets the empty object schema.
pub(crate) fn object_schema<T: JsonSchema>() -> Map<String, Value> {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(map) if map.get("type") == Some(&json!("object")) => map,
        _ => match json!({"type": "object", "properties": {}}) {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    }
}

/// The elicitation form for `T`: its object schema without the keywords a form schema
/// does not allow, and the message (the type's doc comment, or its title).
pub(crate) fn form_schema<T: JsonSchema>() -> (Option<String>, Value) {
    let mut schema = object_schema::<T>();
    let description = schema
        .remove("description")
        .and_then(|d| d.as_str().map(str::to_owned));
    let title = schema
        .remove("title")
        .and_then(|d| d.as_str().map(str::to_owned));
    schema.remove("$schema");
    schema.remove("$defs");
    schema.remove("additionalProperties");
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for prop in props.values_mut() {
            if let Value::Object(p) = prop {
                // schemars spells optional strings as ["string", "null"]; forms take one type.
                if let Some(Value::Array(types)) = p.get("type").cloned() {
                    if let Some(first) = types.iter().find(|t| *t != "null") {
                        p.insert("type".into(), first.clone());
                    }
                }
            }
        }
    }
    (description.or(title), Value::Object(schema))
}
