//! What a transport may ask the server about a request before serving it: the scopes it
//! needs, and (over HTTP) a tool's `Mcp-Param-*` header annotations. An `McpServer`
//! answers both from its registry, so the HTTP endpoint enforces them without wiring;
//! a low-level server answers neither unless the endpoint is told.

use std::sync::Arc;

/// The OAuth scopes a request needs, by method and target.
pub(crate) type RequiredScopes =
    Arc<dyn Fn(&str, Option<&str>) -> Option<Vec<String>> + Send + Sync>;

/// A tool's `x-mcp-header` annotations, by tool name.
#[cfg(feature = "http-server")]
pub(crate) type ToolHeaders =
    Arc<dyn Fn(&str) -> Option<Vec<crate::transport::http::ParamHeader>> + Send + Sync>;

/// The lookups a server carries for its transports.
#[derive(Clone, Default)]
pub(crate) struct Lookups {
    pub(crate) required_scopes: Option<RequiredScopes>,
    #[cfg(feature = "http-server")]
    pub(crate) tool_headers: Option<ToolHeaders>,
}

impl std::fmt::Debug for Lookups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lookups")
            .field("required_scopes", &self.required_scopes.is_some())
            .finish_non_exhaustive()
    }
}
