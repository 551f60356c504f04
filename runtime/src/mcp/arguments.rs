//! A call's arguments and the type they decode into: whether a tool's `inputSchema`
//! refuses more than that decoding (decided when the tool is registered: the schema is
//! checked first only then, see `ToolEntry::decode`), and the decoding of a tree that
//! names the field at fault.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::jsonrpc::RpcError;

/// Keywords that describe and refuse nothing.
const ANNOTATIONS: [&str; 5] = ["$schema", "title", "description", "default", "examples"];

/// Whether decoding into the type `schema` was derived from refuses everything the
/// schema does: an object of strings and booleans (each perhaps `null`) and lists of
/// strings, whose required members that type requires as well, and no keyword that asks
/// more (bounds, patterns, formats, references, unions: any of them and the schema is
/// checked). A member's type that decodes more than its schema says (a hand-written
/// `Deserialize` beside a derived `JsonSchema`) is the type's own decision.
pub(crate) fn decoding_refuses_all(schema: &Map<String, Value>) -> bool {
    schema.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "object",
        "properties" => value
            .as_object()
            .is_some_and(|members| members.values().all(plain_member)),
        "required" => value
            .as_array()
            .is_some_and(|r| r.iter().all(Value::is_string)),
        "additionalProperties" => value.is_boolean(),
        key => ANNOTATIONS.contains(&key),
    })
}

/// A string, a boolean (either perhaps `null`) or a list of strings.
fn plain_member(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return false;
    };
    let leaf = |t: &Value| matches!(t.as_str(), Some("string" | "boolean" | "null"));
    let is_list = schema.get("type").is_some_and(|t| t == "array");
    schema.iter().all(|(key, value)| match key.as_str() {
        "type" if is_list => true,
        "type" => leaf(value) || value.as_array().is_some_and(|ts| ts.iter().all(leaf)),
        "items" => {
            is_list
                && value
                    .as_object()
                    .is_some_and(|i| i.len() == 1 && i.get("type").is_some_and(|t| t == "string"))
        }
        key => ANNOTATIONS.contains(&key),
    }) && schema.contains_key("type")
        && (!is_list || schema.contains_key("items"))
}

/// `arguments` (a tree) as `A`, naming the field at fault when they do not fit.
pub(crate) fn decode_tree<A: DeserializeOwned>(
    kind: &str,
    name: &str,
    arguments: Value,
) -> Result<A, RpcError> {
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            invalid(kind, name, &inner)
        } else {
            RpcError::invalid_params(format!(
                "Invalid arguments for {kind} {name}: `{path}`: {inner}"
            ))
        }
    })
}

/// -32602: `kind` `name`'s arguments are not what it takes.
pub(crate) fn invalid(kind: &str, name: &str, error: &impl std::fmt::Display) -> RpcError {
    RpcError::invalid_params(format!("Invalid arguments for {kind} {name}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;

    fn derived<T: JsonSchema>() -> bool {
        decoding_refuses_all(&crate::mcp::schema::object_schema::<T>())
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Plain {
        /// A name.
        name: String,
        note: Option<String>,
        dry_run: bool,
        tags: Vec<String>,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Counted {
        count: u32,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Nested {
        inner: Plain,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Bounded {
        #[schemars(length(min = 1))]
        name: String,
    }

    #[test]
    fn only_a_schema_that_refuses_no_more_than_decoding_is_left_unchecked() {
        assert!(derived::<Plain>());
        assert!(derived::<crate::mcp::NoArgs>());
        assert!(!derived::<Counted>(), "an unsigned integer has a minimum");
        assert!(!derived::<Nested>(), "a nested object is read by reference");
        assert!(!derived::<Bounded>(), "a length bound");
        let given = serde_json::json!({"type": "object", "properties": {"n": {"type": "string", "pattern": "^a"}}});
        assert!(!decoding_refuses_all(given.as_object().unwrap()));
    }
}
