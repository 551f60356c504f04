//! `x-mcp-header`: tool arguments mirrored into `Mcp-Param-{Name}` headers.

use serde_json::{Map, Value};

/// One annotated tool argument: the `{Name}` of its `Mcp-Param-{Name}` header and the
/// chain of `properties` keys that leads to it from the schema root.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParamHeader {
    /// The header name part (`Region` for `Mcp-Param-Region`).
    pub name: String,
    /// The property path inside the call's `arguments`.
    pub path: Vec<String>,
}

impl ParamHeader {
    /// The header `Mcp-Param-{name}`, carrying the argument at `path` (property names
    /// from the arguments object down).
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        path: impl IntoIterator<Item = S>,
    ) -> Self {
        Self {
            name: name.into(),
            path: path.into_iter().map(Into::into).collect(),
        }
    }

    /// The full header name, lowercase.
    pub(crate) fn header_name(&self) -> String {
        format!(
            "{}{}",
            super::PARAM_HEADER_PREFIX,
            self.name.to_ascii_lowercase()
        )
    }

    /// The argument's value as the header states it, before encoding: strings as they
    /// are, integers in decimal, booleans as `true`/`false`; `None` when the argument is
    /// absent or null (then no header is sent or expected). Numbers are written as JSON
    /// writes them.
    pub(crate) fn value_in(&self, arguments: Option<&Map<String, Value>>) -> Option<String> {
        let (last, parents) = self.path.split_last()?;
        let mut object = arguments?;
        for key in parents {
            object = object.get(key)?.as_object()?;
        }
        match object.get(last)? {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Whether a header value states the same value as `body` (integers compare
    /// numerically, so `42.0` matches `42`).
    #[cfg(feature = "http-server")]
    pub(crate) fn matches(header: &str, body: &Value) -> bool {
        match body {
            Value::String(s) => s == header,
            Value::Bool(b) => header == if *b { "true" } else { "false" },
            // Peers print floats differently (`3.14159` vs `3.1415900000000001`).
            Value::Number(n) => match (n.as_f64(), header.trim().parse::<f64>()) {
                (Some(a), Ok(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                _ => false,
            },
            _ => false,
        }
    }
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`, or why the tool definition
/// is invalid (an empty or non-token name, a duplicate, a property that is not a
/// string, integer or boolean, or an annotation not reachable through
/// `properties` alone).
///
/// The property path and the `{Name}` are what the HTTP transports use to build or
/// check the header.
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut found)?;
    for (i, a) in found.iter().enumerate() {
        if found[..i]
            .iter()
            .any(|b| b.name.eq_ignore_ascii_case(&a.name))
        {
            return Err(format!("x-mcp-header \"{}\" is used twice", a.name));
        }
    }
    if annotated_elsewhere(input_schema, true) {
        return Err(
            "x-mcp-header is only allowed on properties reachable through `properties`".into(),
        );
    }
    Ok(found)
}

fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(name) = property.get("x-mcp-header") {
            let name = name
                .as_str()
                .filter(|n| !n.is_empty() && n.bytes().all(is_tchar))
                .ok_or_else(|| format!("x-mcp-header on `{key}` must be a non-empty HTTP token"))?;
            if !is_primitive(property.get("type")) {
                return Err(format!(
                    "x-mcp-header on `{key}` needs a string, integer or boolean property"
                ));
            }
            found.push(ParamHeader {
                name: name.to_owned(),
                path: path.clone(),
            });
        }
        collect(property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// Whether an annotation sits anywhere but on a chain of `properties` (under `items`,
/// `anyOf`, `$defs`...). `via_properties` says how this node was reached.
fn annotated_elsewhere(schema: &Value, via_properties: bool) -> bool {
    match schema {
        Value::Object(obj) => obj.iter().any(|(k, v)| match k.as_str() {
            "x-mcp-header" => !via_properties,
            "properties" => v.as_object().is_some_and(|props| {
                props
                    .values()
                    .any(|p| annotated_elsewhere(p, via_properties))
            }),
            _ => annotated_elsewhere(v, false),
        }),
        Value::Array(items) => items.iter().any(|v| annotated_elsewhere(v, false)),
        _ => false,
    }
}

/// Whether a property's `type` is a primitive a header can carry: string, integer or
/// boolean. The spec rules out `number` (a float has no single header spelling), and
/// conformance 0.2.0-alpha.12 checks that a client drops such a tool
/// (`invalid_number_header`); objects, arrays and nulls are out too. A type list
/// (`["string", "null"]`) counts when it names a primitive and nothing else but `null`.
fn is_primitive(ty: Option<&Value>) -> bool {
    let primitive = |t: &str| matches!(t, "string" | "integer" | "boolean");
    match ty {
        Some(Value::String(t)) => primitive(t),
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            names.len() == types.len()
                && names.iter().any(|t| primitive(t))
                && names.iter().all(|t| primitive(t) || *t == "null")
        }
        _ => false,
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_are_found_along_properties_chains() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        let found = param_headers(&schema).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].path, vec!["opts".to_owned(), "n".to_owned()]);
        let args = json!({"region": "eu", "opts": {"n": 42}});
        assert_eq!(found[1].value_in(args.as_object()).as_deref(), Some("42"));
    }

    #[test]
    fn integers_and_booleans_are_mirrored_as_json_writes_them() {
        let schema = json!({"properties": {
            "f": {"type": "integer", "x-mcp-header": "F"},
            "b": {"type": "boolean", "x-mcp-header": "B"},
            "e": {"type": ["string", "null"], "x-mcp-header": "E"}
        }});
        let found = param_headers(&schema).unwrap();
        let args = json!({"f": 125, "b": false, "e": ""});
        let values: Vec<_> = found.iter().map(|p| p.value_in(args.as_object())).collect();
        assert_eq!(
            values,
            vec![
                Some("125".into()),
                Some("false".into()),
                Some(String::new())
            ]
        );
    }

    #[test]
    fn invalid_annotations_are_rejected() {
        for schema in [
            json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "null", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Region:Primary"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
        ] {
            assert!(param_headers(&schema).is_err(), "{schema}");
        }
    }
}
