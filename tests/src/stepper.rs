//! `steps`: a tool of three rounds that reports progress and logs on each, shared by
//! the client-surface, layer and trace tests.

use serde_json::json;
use tern_mcp::mcp::{McpServer, NoArgs, ToolContext};

/// `steps`: three rounds, each reporting its progress and logging at info and debug; the
/// first two ask for a go-ahead.
pub fn stepper() -> McpServer {
    let mcp = McpServer::new("steps", "1");
    mcp.tool("steps")
        .run(|_: NoArgs, ctx: ToolContext| async move {
            let round: u32 = ctx
                .request_state()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1);
            ctx.progress(f64::from(round), Some(3.0), Some(&format!("round {round}")));
            ctx.log(
                tern_mcp::types::v2026_07_28::LoggingLevel::Info,
                json!(format!("info {round}")),
            );
            ctx.log(
                tern_mcp::types::v2026_07_28::LoggingLevel::Debug,
                json!(format!("debug {round}")),
            );
            if round == 3 {
                return Ok(tern_mcp::types::v2026_07_28::CallToolOutcome::Complete(
                    tern_mcp::types::v2026_07_28::CallToolResult::new(vec![tern_mcp::ask::text(
                        "done",
                    )]),
                ));
            }
            let go = tern_mcp::ask::elicit_form(
                "Go on?",
                json!({"type": "object", "properties": {"go": {"type": "boolean"}}}),
            )?;
            Ok(tern_mcp::ask::input_required(
                [(format!("go{round}"), go)],
                Some(&(round + 1).to_string()),
            )
            .into())
        });
    mcp
}
