//! The everything server's MCP App: a greeter page (plain HTML, no build step) and the
//! tool it is shown with, which the page itself calls through the host.

use schemars::JsonSchema;
use serde::Deserialize;
use tern_mcp::apps::{AppTool, Apps};
use tern_mcp::mcp::{McpServer, ToolError};
use tern_mcp::types::ext_apps::McpUiResourceMeta;

/// The page's `ui://` URI.
pub(crate) const GREETER: &str = "ui://everything/greeter";

/// The app's pages.
pub(crate) fn apps() -> Result<Apps, tern_mcp::ConfigError> {
    let mut meta = McpUiResourceMeta::new();
    meta.prefers_border = Some(true);
    Apps::new().page(GREETER, "greeter", include_str!("apps/greeter.html"), meta)
}

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Whom to greet.
    name: String,
}

/// `app_greet`: a plain text greeting (the fallback a host without apps shows), shown
/// with the greeter page where the host renders apps.
pub(crate) fn register(mcp: &McpServer) {
    mcp.tool("app_greet")
        .description("Greets someone; hosts that render MCP Apps show the greeter page")
        .extension(AppTool::new(GREETER))
        .run(|args: GreetArgs, _ctx| async move {
            Ok::<_, ToolError>(format!("Hello, {}! (from tern)", args.name))
        });
}
