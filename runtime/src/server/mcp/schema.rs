//! JSON Schema 2020-12 for typed arguments and forms, generated with schemars.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

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

/// Form schemas by type: generating one costs more than the rest of a round, and a
/// resolver renders its question every round.
static FORMS: OnceLock<RwLock<HashMap<TypeId, Form>>> = OnceLock::new();

/// A form's message and schema.
type Form = (Option<String>, Value);

/// [`form_schema`], generated once per type.
pub(crate) fn cached_form_schema<T: JsonSchema + 'static>() -> (Option<String>, Value) {
    let forms = FORMS.get_or_init(RwLock::default);
    let id = TypeId::of::<T>();
    if let Some(hit) = forms.read().ok().and_then(|m| m.get(&id).cloned()) {
        return hit;
    }
    let form = form_schema::<T>();
    if let Ok(mut m) = forms.write() {
        m.insert(id, form.clone());
    }
    form
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
