//! Reading the schema: definitions, references and the few walks the generator needs.

use serde_json::{Map, Value};

use crate::{Error, Result};

/// The `$defs` (or legacy `definitions`) table of a schema, in file order.
#[derive(Debug, Clone)]
pub(crate) struct Defs {
    pub(crate) map: Map<String, Value>,
}

impl Defs {
    pub(crate) fn from_schema(version: &str, schema: &Value) -> Result<Self> {
        let map = schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| Error::Schema {
                version: version.to_owned(),
                definition: "(root)".to_owned(),
                message: "the schema has no `$defs` table".to_owned(),
            })?;
        Ok(Self { map })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// Follows a `{"$ref": "#/$defs/X"}` schema to the name `X`.
    pub(crate) fn ref_name(schema: &Value) -> Option<&str> {
        let r = schema.get("$ref")?.as_str()?;
        r.strip_prefix("#/$defs/")
            .or_else(|| r.strip_prefix("#/definitions/"))
    }

    /// The definition a schema points at, or the schema itself when it is inline.
    pub(crate) fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match Self::ref_name(schema).and_then(|n| self.get(n)) {
            Some(target) => target,
            None => schema,
        }
    }

    /// The `$ref` names listed by an `anyOf`, when every member is a reference.
    pub(crate) fn union_members(schema: &Value) -> Option<Vec<String>> {
        let members = schema.get("anyOf").or_else(|| schema.get("oneOf"))?;
        let members = members.as_array()?;
        members
            .iter()
            .map(|m| Self::ref_name(m).map(str::to_owned))
            .collect()
    }
}

/// A property's `const` string value.
pub(crate) fn const_str(schema: &Value) -> Option<&str> {
    schema.get("const")?.as_str()
}

/// The string values a property may take: its `const`, or every entry of its `enum`.
pub(crate) fn tag_values(schema: &Value) -> Vec<String> {
    if let Some(c) = const_str(schema) {
        return vec![c.to_owned()];
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The names listed in an object schema's `required`.
pub(crate) fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The `properties` table of an object schema.
pub(crate) fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

/// Calls `f` on every subschema of `schema` (not on `schema` itself), depth first,
/// passing a JSON-pointer-like path. Only schema positions are visited: the keys of
/// `properties` are property names, never keywords.
pub(crate) fn visit_subschemas_mut(
    schema: &mut Value,
    path: &str,
    f: &mut dyn FnMut(&str, &mut Value),
) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (name, sub) in props.iter_mut() {
            let p = format!("{path}/properties/{name}");
            f(&p, sub);
            visit_subschemas_mut(sub, &p, f);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get_mut(key) {
            if sub.is_object() {
                let p = format!("{path}/{key}");
                f(&p, sub);
                visit_subschemas_mut(sub, &p, f);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(members)) = obj.get_mut(key) {
            for (i, sub) in members.iter_mut().enumerate() {
                let p = format!("{path}/{key}/{i}");
                f(&p, sub);
                visit_subschemas_mut(sub, &p, f);
            }
        }
    }
}
