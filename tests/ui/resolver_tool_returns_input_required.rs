// A tool that uses resolvers cannot answer input-required itself: the resolvers own
// the call's inputResponses and requestState.
use schemars::JsonSchema;
use serde::Deserialize;
use tern_mcp::mcp::{Elicit, McpServer, ToolError};
use tern_mcp::types::v2026_07_28::InputRequiredResult;

#[derive(Deserialize, JsonSchema)]
struct Args {
    name: String,
}

/// Which region?
#[derive(Clone, Deserialize, JsonSchema)]
struct Region {
    region: String,
}

fn main() {
    let mcp = McpServer::new("s", "1");
    mcp.tool("provision")
        .resolve(|_args: Args, _region: Elicit<Region>| async move {
            Ok::<_, ToolError>(InputRequiredResult::new())
        });
}
