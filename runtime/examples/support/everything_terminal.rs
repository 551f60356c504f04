//! The `everything` server's questions for terminal clients (the `tern` command's own
//! tests drive them): `order_survey`, a form with a titled single-select, a bounded
//! integer, a multi-select and a default; `sign_in`, a URL-mode step.

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};

use super::{ask_once, ask_until_answered};

pub(crate) fn register(mcp: &McpServer) {
    mcp.tool("order_survey")
        .description("Asks a form of every kind of field: titled choice, bounded number, multi-select, default")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "colour": {"type": "string", "title": "Colour", "oneOf": [
                        {"const": "red", "title": "Red"},
                        {"const": "green", "title": "Green"},
                        {"const": "blue", "title": "Blue"}
                    ]},
                    "count": {"type": "integer", "title": "How many", "minimum": 1, "maximum": 10},
                    "extras": {"type": "array", "title": "Extras", "items": {"type": "string", "enum": ["gift wrap", "card", "ribbon"]}},
                    "name": {"type": "string", "title": "Name", "default": "Ada"}
                },
                "required": ["colour", "count"]
            });
            ask_once(ctx, "survey", "Tell us about your order", schema).await
        });
    mcp.tool("sign_in")
        .description("Asks for a step the user takes in the browser (URL mode)")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            ask_until_answered(&ctx, "login", || {
                Ok(ask::elicit_url(
                    "Sign in to the example service",
                    "https://example.com/login",
                ))
            })
        });
}
