//! The host half of the MCP Apps protocol for one app's view, on tern's [`Client`]: the
//! app's messages answered (`ui/initialize`, `ping`, and the server's `tools/call` and
//! `resources/read` relayed through the client, each call through the automatic MRTR
//! loop), and the host's notifications to the app written. The channel between host
//! and view (postMessage in a browser, a webview's bridge) is the embedder's: it hands
//! each message from the app to [`AppHost::handle`] and posts back what it returns.

use serde_json::{Map, Value, json};

use super::MIME_TYPE;
use crate::client::{Client, ClientExtension};
use crate::types::ext_apps::{
    EXTENSION_ID, McpUiInitializeRequestParams, McpUiInitializeResult,
    McpUiInitializeResultHostCapabilities, McpUiInitializeResultHostCapabilitiesServerResources,
    McpUiInitializeResultHostCapabilitiesServerTools, McpUiInitializeResultHostContext,
    McpUiInitializeResultHostInfo, McpUiToolInputNotification, McpUiToolInputNotificationParams,
    McpUiToolResultNotification, McpUiToolResultNotificationParams, UiInitializeMethod,
};
use crate::types::rpc::{ConstStr as _, Request as _};
use crate::types::v2026_07_28::{AnyResourceContents, CallToolResult, Tool, method};

/// The MCP Apps protocol version this host speaks with its views.
const PROTOCOL_VERSION: &str = "2026-01-26";

/// The most bytes of one message from a view this host reads.
const MAX_MESSAGE: usize = 1024 * 1024;

/// The apps extension, spoken by a host's client
/// ([`ClientBuilder::extension`](crate::client::ClientBuilder::extension)): declared with
/// the page types the host renders (`mimeTypes`; [`MIME_TYPE`] unless told), so that a
/// server links its tools to their pages and lists its app-only tools.
#[derive(Debug, Clone)]
pub struct ClientApps {
    mime_types: Vec<String>,
}

impl Default for ClientApps {
    fn default() -> Self {
        Self {
            mime_types: vec![MIME_TYPE.to_owned()],
        }
    }
}

impl ClientApps {
    /// The page types the host renders, in place of [`MIME_TYPE`] alone.
    pub fn mime_types(mut self, types: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.mime_types = types.into_iter().map(Into::into).collect();
        self
    }
}

impl ClientExtension for ClientApps {
    fn id(&self) -> &'static str {
        EXTENSION_ID
    }

    fn settings(&self) -> Map<String, Value> {
        let types = self.mime_types.iter().cloned().map(Value::String).collect();
        Map::from_iter([("mimeTypes".to_owned(), Value::Array(types))])
    }
}

/// The host of one app's view: answers what the view asks, through `client`.
#[derive(Debug, Clone)]
pub struct AppHost {
    client: Client,
    name: String,
    version: String,
}

impl AppHost {
    /// A host called `name` at `version` for a view of a tool `client`'s server serves.
    pub fn new(client: Client, name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            client,
            name: name.into(),
            version: version.into(),
        }
    }

    /// The page of `tool`'s app: its `ui://` URI from the tool's listed `_meta.ui` (or
    /// the older flat `ui/resourceUri`), `None` for a tool with no app.
    pub fn page_of(tool: &Tool) -> Option<&str> {
        let meta = tool.meta.as_deref()?;
        meta.get("ui")
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str)
    }

    /// The HTML of the app page at `uri`, refused unless the server serves it as
    /// `text/html;profile=mcp-app`.
    pub async fn read_page(&self, uri: &str) -> crate::Result<String> {
        let result = self.client.read_resource(uri).await?;
        for content in result.contents {
            if let AnyResourceContents::Text(text) = content {
                if text.mime_type.as_deref() == Some(MIME_TYPE) {
                    return Ok(text.text);
                }
            }
        }
        Err(crate::ProtocolError::Decode {
            method: method::ReadResource::METHOD,
            source: serde::de::Error::custom(format!("{uri} holds no {MIME_TYPE} text")),
        }
        .into())
    }

    /// Answers one message from the view: the response to a request, or `None` for a
    /// notification (and for anything that is no JSON-RPC message, which is ignored).
    pub async fn handle(&self, message: &Value) -> Option<Value> {
        let id = message.get("id")?.clone();
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return None; // a response to the host: the host sends no requests here
        };
        if message.to_string().len() > MAX_MESSAGE {
            return Some(error(id, -32600, "message too large"));
        }
        let params = message.get("params").cloned().unwrap_or(json!({}));
        // A route by method: what a host serves its app.
        let answer = match method {
            UiInitializeMethod::VALUE => self.initialize(params),
            crate::types::v2025_11_25::method::Ping::METHOD => Ok(json!({})),
            method::CallTool::METHOD => self.call_tool(params).await,
            method::ReadResource::METHOD => self.read_resource(params).await,
            _ => Err((-32601, format!("this host does not serve {method}"))),
        };
        Some(match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => error(id, code, &message),
        })
    }

    fn initialize(&self, params: Value) -> Result<Value, (i64, String)> {
        serde_json::from_value::<McpUiInitializeRequestParams>(params)
            .map_err(|e| (-32602, format!("invalid ui/initialize params: {e}")))?;
        let mut capabilities = McpUiInitializeResultHostCapabilities::new();
        capabilities.server_tools = Some(McpUiInitializeResultHostCapabilitiesServerTools::new());
        capabilities.server_resources =
            Some(McpUiInitializeResultHostCapabilitiesServerResources::new());
        let result = McpUiInitializeResult::new(
            capabilities,
            McpUiInitializeResultHostContext::new(),
            McpUiInitializeResultHostInfo::new(self.name.clone(), self.version.clone()),
            PROTOCOL_VERSION,
        );
        serde_json::to_value(result).map_err(|e| (-32603, e.to_string()))
    }

    /// The view's `tools/call`, for a tool the view may call (its visibility names the
    /// app, as it does by default), through the client's MRTR loop.
    async fn call_tool(&self, params: Value) -> Result<Value, (i64, String)> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((-32602, "tools/call needs a name".to_owned()))?
            .to_owned();
        let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
        let tools = self
            .client
            .list_all::<method::ListTools>()
            .await
            .map_err(failed)?;
        let tool = tools.iter().find(|t| t.name == name);
        let visible = tool
            .and_then(|t| t.meta.as_deref())
            .and_then(|m| m.get("ui"))
            .and_then(|ui| ui.get("visibility"))
            .and_then(Value::as_array)
            .is_none_or(|v| v.iter().any(|x| x == "app"));
        if !visible {
            return Err((-32602, format!("tool {name} is not callable by an app")));
        }
        let result = self
            .client
            .call_tool(name.as_str(), &arguments)
            .await
            .map_err(failed)?;
        serde_json::to_value(result).map_err(|e| (-32603, e.to_string()))
    }

    async fn read_resource(&self, params: Value) -> Result<Value, (i64, String)> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or((-32602, "resources/read needs a uri".to_owned()))?;
        let result = self.client.read_resource(uri).await.map_err(failed)?;
        serde_json::to_value(result).map_err(|e| (-32603, e.to_string()))
    }

    /// `ui/notifications/tool-input`: the arguments the tool was called with, sent once
    /// the view said `ui/notifications/initialized`.
    pub fn tool_input(arguments: Map<String, Value>) -> Value {
        let mut params = McpUiToolInputNotificationParams::new();
        params.arguments = Some(arguments.into_iter().collect());
        notification(McpUiToolInputNotification::new(params))
    }

    /// `ui/notifications/tool-result`: the tool's result, for the view to show.
    pub fn tool_result(result: &CallToolResult) -> Value {
        let mut params = McpUiToolResultNotificationParams::new(
            result
                .content
                .iter()
                .filter_map(|c| serde_json::to_value(c).ok())
                .collect(),
        );
        params.is_error = result.is_error;
        params.structured_content = result.structured_content.clone();
        notification(McpUiToolResultNotification::new(params))
    }
}

fn notification(message: impl serde::Serialize) -> Value {
    let mut value = serde_json::to_value(message).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert("jsonrpc".into(), json!("2.0"));
    }
    value
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A call's failure as the view sees it: the server's own error, or an internal one.
fn failed(e: crate::Error) -> (i64, String) {
    match e {
        crate::Error::Rpc(rpc) => (rpc.code, rpc.message),
        other => (-32603, other.to_string()),
    }
}
