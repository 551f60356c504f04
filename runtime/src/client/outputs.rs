//! The `outputSchema`s of the tools a client listed, compiled once, and the check of a
//! call's `structuredContent` against its tool's (feature `schema-validation`).

#[cfg(feature = "schema-validation")]
use std::collections::HashMap;
#[cfg(feature = "schema-validation")]
use std::sync::{Arc, Mutex};

use super::Client;
#[cfg(feature = "schema-validation")]
use crate::Error;
use crate::types::v2026_07_28::{CallToolResult, Tool};
#[cfg(feature = "schema-validation")]
use crate::util::lock;

/// The most tools whose output schemas a client remembers: a server listing more than
/// this many is not checked beyond them.
#[cfg(feature = "schema-validation")]
const MAX_SCHEMAS: usize = 4096;

/// The compiled output schemas, by tool name, each beside the schema it was compiled
/// from (a list seen again compiles nothing again); nothing without the feature.
#[derive(Default)]
pub(crate) struct OutputSchemas {
    #[cfg(feature = "schema-validation")]
    by_tool: Mutex<HashMap<String, (Schema, Arc<jsonschema::Validator>)>>,
}

#[cfg(feature = "schema-validation")]
type Schema = serde_json::Map<String, serde_json::Value>;

/// Remembers the output schemas of `tools` as listed (a tool listed without one
/// forgets any it had).
pub(crate) fn learn_output_schemas(client: &Client, tools: &[Tool]) {
    #[cfg(feature = "schema-validation")]
    {
        let mut by_tool = lock(&client.inner.outputs.by_tool);
        for tool in tools {
            let Some(schema) = &tool.output_schema else {
                by_tool.remove(&tool.name);
                continue;
            };
            match by_tool.get(&tool.name) {
                Some((known, _)) if known == schema => continue,
                None if by_tool.len() >= MAX_SCHEMAS => continue,
                _ => {}
            }
            let what = format!("the outputSchema of listed tool {}", tool.name);
            match crate::util::schema::compile(schema, &what) {
                Some(v) => by_tool.insert(tool.name.clone(), (schema.clone(), v)),
                None => by_tool.remove(&tool.name),
            };
        }
    }
    #[cfg(not(feature = "schema-validation"))]
    let _ = (tools, &client.inner.outputs);
}

/// Whether any listed tool has an output schema to check results against.
pub(crate) fn lists_output_schemas(client: &Client) -> bool {
    #[cfg(feature = "schema-validation")]
    {
        !lock(&client.inner.outputs.by_tool).is_empty()
    }
    #[cfg(not(feature = "schema-validation"))]
    {
        let _ = client;
        false
    }
}

/// Checks a complete result of tool `name` against the `outputSchema` the client
/// listed for it: a result that is not an error must carry `structuredContent`
/// that conforms.
pub(crate) fn check_output(
    client: &Client,
    name: &str,
    result: &CallToolResult,
) -> crate::Result<()> {
    #[cfg(feature = "schema-validation")]
    {
        if result.is_error == Some(true) {
            return Ok(());
        }
        let Some(validator) = lock(&client.inner.outputs.by_tool)
            .get(name)
            .map(|(_, v)| Arc::clone(v))
        else {
            return Ok(());
        };
        let fail = |detail: String| {
            Error::Protocol(crate::ProtocolError::InvalidStructuredContent {
                tool: name.to_owned(),
                detail,
            })
        };
        let Some(content) = &result.structured_content else {
            return Err(fail(
                "no structuredContent, though the tool lists an outputSchema".into(),
            ));
        };
        crate::util::schema::check(&validator, content, "the content").map_err(fail)?;
    }
    #[cfg(not(feature = "schema-validation"))]
    let _ = (client, name, result);
    Ok(())
}
