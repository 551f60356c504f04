//! MCP Apps (`io.modelcontextprotocol/ui`): a tool names an HTML page, a `ui://`
//! resource served as `text/html;profile=mcp-app`, that a host renders in a sandboxed
//! frame beside the tool's result; the page talks to the host over postMessage
//! (`ui/initialize`, then the host's tool input and result, and the app's own
//! `tools/call` through the host). The messages and the `_meta.ui` members are the
//! generated [`ext_apps`](crate::types::ext_apps) types.
//!
//! On the server, [`Apps`] is an extension: its pages are resources of the
//! [`McpServer`] (their `_meta.ui` on the listing and on the read contents), and a tool
//! links to its page with an [`AppTool`] setting. What a client sees follows what its
//! request declares: a client that declares the extension with
//! `text/html;profile=mcp-app` among its `mimeTypes` sees each linked tool's `_meta.ui`
//! and the pages listed; one that does not sees the tools as plain tools (their text
//! content is the fallback), no page, and no tool only an app may call. A tool with an
//! app may still ask through MRTR. The host half is on tern's client: [`ClientApps`]
//! declares the extension, and [`AppHost`] answers a view.
//!
//! ```
//! use tern_mcp::apps::{AppTool, Apps};
//! use tern_mcp::mcp::{McpServer, NoArgs, ToolError};
//!
//! let apps = Apps::new().page(
//!     "ui://clock/view",
//!     "clock",
//!     "<!doctype html><p id=now>...</p>",
//!     Default::default(),
//! )?;
//! let mcp = McpServer::new("clock", "1.0.0").extension(apps);
//! mcp.tool("now")
//!     .description("The time, shown as a clock where the host renders apps")
//!     .extension(AppTool::new("ui://clock/view"))
//!     .run(|_: NoArgs, _| async { Ok::<_, ToolError>("12:00".to_owned()) });
//! # let _ = mcp.server()?;
//! # Ok::<(), tern_mcp::Error>(())
//! ```

mod host;

use std::sync::Arc;

use serde_json::{Map, Value};

pub use host::{AppHost, ClientApps};

use crate::ConfigError;
use crate::mcp::setting::Gate;
use crate::mcp::{McpExtension, McpServer, ToolSetting};
use crate::server::ProtocolExtension;
use crate::types::ext_apps::{
    EXTENSION_ID as EXTENSION, McpUiResourceMeta, McpUiToolMeta, McpUiToolVisibility,
};
use crate::types::v2026_07_28::{
    AnyResourceContents, MetaObject, ReadResourceResult, TextResourceContents,
};

/// The MIME type of an app's page.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The most bytes one page may hold: a page that needs more loads it from the domains
/// its CSP allows.
const MAX_PAGE: usize = 4 * 1024 * 1024;

/// The apps a server serves: an extension for
/// [`McpServer::extension`](crate::mcp::McpServer::extension). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Apps {
    pages: Arc<Vec<Page>>,
}

#[derive(Debug, Clone)]
struct Page {
    uri: String,
    name: String,
    html: Arc<str>,
    meta: Value,
}

impl Apps {
    /// No pages yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the page at `uri` (a `ui://` URI), called `name`, holding `html`, with its
    /// `_meta.ui` (`meta`: the CSP domains it loads from, the permissions it asks, its
    /// domain, whether it wants a border; `Default::default()` for none). Refused: a
    /// URI that is not `ui://`, one added already, a page over 4 MiB.
    pub fn page(
        mut self,
        uri: impl Into<String>,
        name: impl Into<String>,
        html: impl Into<String>,
        meta: McpUiResourceMeta,
    ) -> Result<Self, ConfigError> {
        let (uri, html) = (uri.into(), html.into());
        let invalid = |why: &str| ConfigError::Invalid(format!("app page {uri}: {why}"));
        if !uri.starts_with("ui://") || uri.len() == "ui://".len() {
            return Err(invalid("an app's page is a ui:// URI"));
        }
        if self.pages.iter().any(|p| p.uri == uri) {
            return Err(invalid("a page is already served at this URI"));
        }
        if html.len() > MAX_PAGE {
            return Err(invalid("over the 4 MiB a page may hold"));
        }
        let meta = serde_json::to_value(&meta).map_err(|e| invalid(&e.to_string()))?;
        Arc::make_mut(&mut self.pages).push(Page {
            uri,
            name: name.into(),
            html: html.into(),
            meta,
        });
        Ok(self)
    }
}

impl ProtocolExtension for Apps {
    fn id(&self) -> &'static str {
        EXTENSION
    }
}

impl McpExtension for Apps {
    fn register(&self, server: &McpServer) {
        for page in self.pages.iter() {
            let ui = ui_meta(page.meta.clone());
            let mut builder = server
                .resource(page.uri.clone(), page.name.clone())
                .mime_type(MIME_TYPE)
                .meta(ui.clone());
            builder.gates.push(Gate {
                extension: EXTENSION,
                declared_by: renders_pages,
                meta: Map::new(),
                listed_without: false,
            });
            let (uri, html) = (page.uri.clone(), Arc::clone(&page.html));
            builder.read(move || {
                let (uri, html, ui) = (uri.clone(), Arc::clone(&html), ui.clone());
                async move {
                    let mut content = TextResourceContents::new(html.to_string(), uri);
                    content.mime_type = Some(MIME_TYPE.to_owned());
                    content.meta = Some(MetaObject(ui));
                    Ok::<_, crate::mcp::ToolError>(ReadResourceResult::new(vec![
                        AnyResourceContents::Text(content),
                    ]))
                }
            });
        }
    }
}

/// Whether a client's settings for the extension name the page type among the
/// `mimeTypes` it renders, as the extension asks of a host.
fn renders_pages(settings: &Map<String, Value>) -> bool {
    settings
        .get("mimeTypes")
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == MIME_TYPE))
}

/// `{"ui": meta}`.
fn ui_meta(meta: Value) -> Map<String, Value> {
    let mut ui = Map::new();
    ui.insert("ui".into(), meta);
    ui
}

/// A tool's link to its app: the page a host renders for it, and who may call it. A
/// [`ToolSetting`] for [`ToolBuilder::extension`](crate::mcp::ToolBuilder::extension).
#[derive(Debug, Clone)]
pub struct AppTool {
    meta: McpUiToolMeta,
}

impl AppTool {
    /// A tool shown with the page at `resource_uri`, visible to the model and callable
    /// by the app (the default visibility).
    pub fn new(resource_uri: impl Into<String>) -> Self {
        let mut meta = McpUiToolMeta::new();
        meta.resource_uri = Some(resource_uri.into());
        Self { meta }
    }

    /// Who may see and call the tool: the model, the app, or both. A tool for the app
    /// alone is not listed to a client that does not declare the extension.
    pub fn visibility(mut self, visibility: impl IntoIterator<Item = McpUiToolVisibility>) -> Self {
        self.meta.visibility = Some(visibility.into_iter().collect());
        self
    }
}

impl ToolSetting for AppTool {
    const EXTENSION: &'static str = EXTENSION;

    fn listed_meta(&self) -> Map<String, Value> {
        let mut meta = ui_meta(serde_json::to_value(&self.meta).unwrap_or_default());
        // The flat key hosts written before the nested one still read.
        if let Some(uri) = &self.meta.resource_uri {
            meta.insert("ui/resourceUri".into(), Value::String(uri.clone()));
        }
        meta
    }

    fn listed_without_extension(&self) -> bool {
        self.meta
            .visibility
            .as_ref()
            .is_none_or(|v| v.contains(&McpUiToolVisibility::Model))
    }

    fn declared_by(settings: &Map<String, Value>) -> bool {
        renders_pages(settings)
    }
}
