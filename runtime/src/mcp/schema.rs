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

/// The elicitation form for `T`: its object schema as a form schema may say it (every
/// property a primitive, an enum or a list of enum members; references inlined; one type
/// each), and the message (the type's doc comment, or its title).
///
/// What serde and schemars say carries over: a field's default (`#[serde(default)]`)
/// becomes its `default` (SEP-1034); a Rust enum becomes a single-select (`enum`, or
/// `oneOf` with a `title` per variant when the variants have doc comments) and a `Vec`
/// of one a multi-select (`items` with `enum`, or `anyOf` with titles), as SEP-1330
/// names them.
pub(crate) fn form_schema<T: JsonSchema>() -> (Option<String>, Value) {
    let mut schema = object_schema::<T>();
    let description = schema
        .remove("description")
        .and_then(|d| d.as_str().map(str::to_owned));
    let title = schema
        .remove("title")
        .and_then(|d| d.as_str().map(str::to_owned));
    schema.remove("$schema");
    let defs = match schema.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    schema.remove("additionalProperties");
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for prop in props.values_mut() {
            if let Value::Object(p) = prop {
                form_field(p, &defs);
            }
        }
    }
    (description.or(title), Value::Object(schema))
}

/// One property as a form field.
fn form_field(field: &mut Map<String, Value>, defs: &Map<String, Value>) {
    inline(field, defs);
    // `Option<T>`: `anyOf: [T, null]` (or a `type` list with "null") is T.
    if let Some(Value::Array(any)) = field.get("anyOf").cloned() {
        let mut present = any.iter().filter(|s| s.get("type") != Some(&json!("null")));
        if let (Some(Value::Object(only)), None) = (present.next(), present.next()) {
            field.remove("anyOf");
            for (k, v) in only {
                field.entry(k.clone()).or_insert_with(|| v.clone());
            }
            inline(field, defs);
        }
    }
    if let Some(Value::Array(types)) = field.get("type").cloned() {
        if let Some(first) = types.iter().find(|t| *t != "null") {
            field.insert("type".into(), first.clone());
        }
    }
    if let Some(Value::Array(choices)) = field.remove("oneOf") {
        field.insert("oneOf".into(), Value::Array(titled(&choices)));
        field.insert("type".into(), json!("string"));
    }
    if field.get("type") == Some(&json!("array")) {
        if let Some(Value::Object(items)) = field.get_mut("items") {
            inline(items, defs);
            // A multi-select's titled members are `anyOf`.
            if let Some(Value::Array(choices)) = items.remove("oneOf") {
                items.remove("type");
                items.insert("anyOf".into(), Value::Array(titled(&choices)));
            }
        }
    }
}

/// Replaces a local `$ref` with the definition it names (the field's own keywords,
/// such as its description or default, win).
fn inline(field: &mut Map<String, Value>, defs: &Map<String, Value>) {
    let Some(Value::String(reference)) = field.remove("$ref") else {
        return;
    };
    let name = reference.rsplit('/').next().unwrap_or_default();
    if let Some(Value::Object(def)) = defs.get(name) {
        for (k, v) in def {
            field.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// Enum members as SEP-1330 titles them: `{const, title}`, the title from the
/// variant's title or doc comment, or the value itself.
fn titled(choices: &[Value]) -> Vec<Value> {
    choices
        .iter()
        .filter_map(|choice| {
            let value = choice
                .get("const")
                .or_else(|| choice.get("enum").and_then(|e| e.get(0)))?;
            let title = choice
                .get("title")
                .or_else(|| choice.get("description"))
                .unwrap_or(value);
            Some(json!({"const": value, "title": title}))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Size {
        Small,
        Large,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Colour {
        /// Bright red
        Red,
        /// Deep blue
        Blue,
    }

    fn default_name() -> String {
        "John Doe".into()
    }

    /// Your preferences
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Preferences {
        #[serde(default = "default_name")]
        name: String,
        #[serde(default)]
        verified: bool,
        size: Size,
        colour: Option<Colour>,
        sizes: Vec<Size>,
        colours: Vec<Colour>,
    }

    #[test]
    fn defaults_and_every_enum_form_come_from_the_rust_types() {
        let (message, form) = super::form_schema::<Preferences>();
        assert_eq!(message.as_deref(), Some("Your preferences"));
        let p = &form["properties"];
        assert_eq!(p["name"]["default"], "John Doe", "{form:#}");
        assert_eq!(p["verified"]["default"], false);
        assert_eq!(p["size"]["type"], "string");
        assert_eq!(p["size"]["enum"], json!(["Small", "Large"]));
        assert_eq!(p["colour"]["type"], "string", "{form:#}");
        assert_eq!(
            p["colour"]["oneOf"],
            json!([{"const": "Red", "title": "Bright red"}, {"const": "Blue", "title": "Deep blue"}])
        );
        assert_eq!(p["sizes"]["type"], "array");
        assert_eq!(p["sizes"]["items"]["enum"], json!(["Small", "Large"]));
        assert_eq!(
            p["colours"]["items"]["anyOf"],
            json!([{"const": "Red", "title": "Bright red"}, {"const": "Blue", "title": "Deep blue"}])
        );
        assert!(form.get("$defs").is_none());
        // And the generated form type takes all of it.
        let typed: Result<crate::types::v2026_07_28::ElicitRequestFormParamsRequestedSchema, _> =
            serde_json::from_value(form.clone());
        assert!(typed.is_ok(), "{typed:?}: {form:#}");
    }
}
