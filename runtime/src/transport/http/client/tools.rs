//! The tool headers: the `Mcp-Param-*` headers each tool's `x-mcp-header` annotations
//! ask for, learned from the `tools/list` results that pass through the transport, and
//! re-read when the server refuses a call's headers with -32020.
//!
//! A server's list is an input: it is scanned on its text (only a schema that names
//! `x-mcp-header` is read into a tree), only the tools with annotations are kept, a
//! list's first page replaces what the last list taught, and at most
//! [`MAX_ANNOTATED_TOOLS`] are kept.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::super::h1::Outgoing;
use super::super::{ParamHeader, encode_header_value, param_headers};
use super::HttpClientTransport;
use crate::jsonrpc::RawResult;
use crate::transport::{CallError, ClientTransport as _, OutgoingRequest, TransportError};
use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::method;
use crate::util::lock;

/// How many `tools/list` pages a refresh after -32020 reads at most.
const MAX_TOOL_PAGES: usize = 10;

/// The most tools whose annotations are kept: a server listing more annotated tools
/// than this gets no headers on calls of the rest (its -32020 then says so).
const MAX_ANNOTATED_TOOLS: usize = 4096;

/// The annotated parameters of the tools with annotations in the last list, by tool
/// name.
#[derive(Default)]
pub(super) struct ToolHeaders(Mutex<HashMap<String, Arc<[ParamHeader]>>>);

impl ToolHeaders {
    fn of(&self, tool: &str) -> Option<Arc<[ParamHeader]>> {
        lock(&self.0).get(tool).cloned()
    }

    /// Learns the annotations of a `tools/list` page, sent with `params`: a first page
    /// (no cursor) replaces what was known. Tools with invalid annotations go: the
    /// result without them, when there were any.
    pub(super) fn learn(&self, params: &str, result: &str) -> Option<RawResult> {
        let mut tools = lock(&self.0);
        if first_page(params) {
            *tools = HashMap::new();
        }
        let mut invalid = Vec::new();
        let mut seen = |at: usize, tool: Listed<'_>| {
            let Some(schema) = tool.input_schema.filter(|s| annotated(s.get())) else {
                tools.remove(tool.name.as_ref());
                return;
            };
            let found = serde_json::from_str::<Value>(schema.get())
                .map_err(|e| e.to_string())
                .and_then(|schema| param_headers(&schema));
            match found {
                Ok(found) if found.is_empty() => {
                    tools.remove(tool.name.as_ref());
                }
                Ok(found) => {
                    let room = tools.len() < MAX_ANNOTATED_TOOLS;
                    if room || tools.contains_key(tool.name.as_ref()) {
                        tools.insert(tool.name.into_owned(), found.into());
                    }
                }
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "ignoring a tool with an invalid x-mcp-header");
                    tools.remove(tool.name.as_ref());
                    invalid.push(at);
                }
            }
        };
        let mut de = serde_json::Deserializer::from_str(result);
        // A result that is not a list is left for the client's read to say so.
        Page(&mut seen).deserialize(&mut de).ok()?;
        drop(tools);
        (!invalid.is_empty())
            .then(|| without(result, &invalid))
            .flatten()
    }

    /// Adds the `Mcp-Param-*` headers of a call to `tool` with `params` (written as
    /// JSON text, read back only when the tool has annotated parameters).
    pub(super) fn stamp(
        &self,
        outgoing: &mut Outgoing,
        tool: &str,
        params: &str,
    ) -> Result<(), CallError> {
        let Some(annotated) = self.of(tool).filter(|a| !a.is_empty()) else {
            return Ok(());
        };
        let params: Value = serde_json::from_str(params).unwrap_or_default();
        let arguments = params.get("arguments").and_then(Value::as_object);
        for param in annotated.iter() {
            if let Some(value) = param.value_in(arguments) {
                let value = HeaderValue::try_from(encode_header_value(&value)).map_err(|_| {
                    CallError::Transport(TransportError::new(
                        "cannot send a tool argument as a header",
                    ))
                })?;
                let name = HeaderName::try_from(param.header_name()).map_err(|e| {
                    CallError::Transport(TransportError::new(format!("bad request: {e}")))
                })?;
                outgoing.field(name.as_str().as_bytes(), value.as_bytes());
            }
        }
        Ok(())
    }
}

/// A `tools/call` of `tool` through `transport` was refused with -32020: its `x-mcp-header` annotations
/// may have changed since we learned them (or we never did). Re-reads `tools/list`
/// (at most [`MAX_TOOL_PAGES`] pages, each request carrying `meta`) and tells
/// whether the tool's annotations changed.
pub(super) async fn reread_tool_headers(
    transport: &HttpClientTransport,
    tool: &str,
    meta: &Value,
) -> Result<bool, CallError> {
    let before = transport.inner.tools.of(tool);
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_TOOL_PAGES {
        let mut list_params = json!({ "_meta": meta });
        if let Some(c) = cursor.take() {
            list_params["cursor"] = c;
        }
        let page =
            OutgoingRequest::new(transport.next_id(), method::ListTools::METHOD, list_params)
                .send_as_text(transport)
                .await?;
        match page.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    Ok(transport.inner.tools.of(tool) != before)
}

/// Whether a `tools/list` request's params (as sent) ask for a first page: no cursor.
fn first_page(params: &str) -> bool {
    #[derive(Deserialize)]
    struct Cursor {
        cursor: Option<IgnoredAny>,
    }
    serde_json::from_str::<Cursor>(params).map_or(true, |p| p.cursor.is_none())
}

/// Whether a tool's input schema (as text) may hold an annotation: it names
/// `x-mcp-header`, or escapes something (which could spell it).
fn annotated(schema: &str) -> bool {
    schema.contains("x-mcp-header") || schema.contains("\\u")
}

/// `result` without the tools at `invalid` (read as a tree: rare).
fn without(result: &str, invalid: &[usize]) -> Option<RawResult> {
    let mut value: Value = serde_json::from_str(result).ok()?;
    let tools = value.get_mut("tools")?.as_array_mut()?;
    let mut at = 0;
    tools.retain(|_| {
        let keep = !invalid.contains(&at);
        at += 1;
        keep
    });
    Some(RawResult::from(&value))
}

/// One tool of a page, as much of it as its annotations need, borrowed from the text.
#[derive(Deserialize)]
struct Listed<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(rename = "inputSchema", borrow, default)]
    input_schema: Option<&'a RawValue>,
}

/// A `tools/list` result, each of its tools handed to the function with its place.
struct Page<'f, F>(&'f mut F);

impl<'de, F: FnMut(usize, Listed<'de>)> DeserializeSeed<'de> for Page<'_, F> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(usize, Listed<'de>)> Visitor<'de> for Page<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tools/list result")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "tools" {
                map.next_value_seed(Tools(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `tools` array of a page.
struct Tools<'f, F>(&'f mut F);

impl<'de, F: FnMut(usize, Listed<'de>)> DeserializeSeed<'de> for Tools<'_, F> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(usize, Listed<'de>)> Visitor<'de> for Tools<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of tools")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut at = 0;
        while let Some(tool) = seq.next_element::<Listed<'de>>()? {
            (self.0)(at, tool);
            at += 1;
        }
        Ok(())
    }
}
