//! The tool headers: the `Mcp-Param-*` headers each tool's `x-mcp-header` annotations
//! ask for, learned from the `tools/list` results that pass through the transport, and
//! re-read when the server refuses a call's headers with -32020.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::super::h1::Outgoing;
use super::super::{ParamHeader, encode_header_value, param_headers};
use super::HttpClientTransport;
use crate::transport::{CallError, ClientTransport as _, OutgoingRequest, TransportError};
use crate::types::rpc::Request as _;
use crate::types::v2026_07_28::method;
use crate::util::lock;

/// How many `tools/list` pages a refresh after -32020 reads at most.
const MAX_TOOL_PAGES: usize = 10;

/// The annotated parameters of every tool learned so far, by tool name.
#[derive(Default)]
pub(super) struct ToolHeaders(Mutex<HashMap<String, Arc<[ParamHeader]>>>);

impl ToolHeaders {
    pub(super) fn remember(&self, name: &str, input_schema: &Value) -> Result<(), String> {
        let mut tools = lock(&self.0);
        match param_headers(input_schema) {
            Ok(found) => {
                tools.insert(name.to_owned(), found.into());
                Ok(())
            }
            Err(e) => {
                tools.remove(name);
                Err(e)
            }
        }
    }

    fn of(&self, tool: &str) -> Option<Arc<[ParamHeader]>> {
        lock(&self.0).get(tool).cloned()
    }

    /// Learns the tools of a `tools/list` result and removes those whose annotations
    /// are invalid.
    pub(super) fn learn(&self, result: &mut Value) {
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match self.remember(name, schema) {
                Ok(()) => true,
                Err(reason) => {
                    tracing::warn!(tool = name, %reason, "ignoring a tool with an invalid x-mcp-header");
                    false
                }
            }
        });
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
