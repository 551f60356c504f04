// A tools/list handler cannot answer input-required: its result type is
// ListToolsResult, and an InputRequiredResult does not convert into it.
use tern_mcp::server::Server;
use tern_mcp::types::v2026_07_28::{method, InputRequiredResult};

fn main() {
    let _ = Server::builder("s", "1").handle::<method::ListTools, _, _>(|_ctx, _params| async move {
        Ok(InputRequiredResult::new().into())
    });
}
