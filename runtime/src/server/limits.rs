//! What a server allows each incoming message and each 2025-11-25 session's stored
//! client state.

use crate::jsonrpc::JsonLimits;

/// What a server allows its clients, on every transport: plain data, given to
/// [`ServerBuilder::limits`](super::ServerBuilder::limits) or
/// [`McpServer::limits`](crate::mcp::McpServer::limits). Start from [`Default`] and change
/// what you need. Beyond any JSON limit a message is refused with -32600 (Invalid
/// Request) before it is parsed; the check is one pass over its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerLimits {
    /// Values (objects, arrays, members and elements) in one message. Default 100,000.
    pub max_json_values: usize,
    /// Nesting depth of objects and arrays. Default 64.
    pub max_json_depth: usize,
    /// Members of `params.inputResponses`: a server asks few questions a round, and
    /// each answer is a tree of its own. Default 1,000.
    pub max_input_responses: usize,
    /// The most bytes (as JSON) of capabilities and client info a 2025-11-25 session
    /// keeps for its life; a larger `initialize` is refused with -32602. Default 64 KiB.
    pub max_session_state_bytes: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        let json = JsonLimits::default();
        Self {
            max_json_values: json.max_values,
            max_json_depth: json.max_depth,
            max_input_responses: json.max_input_responses,
            max_session_state_bytes: 64 * 1024,
        }
    }
}

impl ServerLimits {
    /// The limits the message reader checks.
    pub(crate) fn json(&self) -> JsonLimits {
        JsonLimits {
            max_values: self.max_json_values,
            max_depth: self.max_json_depth,
            max_input_responses: self.max_input_responses,
        }
    }
}
