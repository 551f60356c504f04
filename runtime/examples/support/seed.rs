//! The seed's low-level provisioning server and the answer its question expects: the one
//! definition the examples and the tests crate (which includes this file by path) share.

// Each includer uses part of this file, and reaches it through a private module.
#![allow(dead_code, unreachable_pub)]

use serde_json::json;
use tern_mcp::ask;
use tern_mcp::jsonrpc::RpcError;
use tern_mcp::server::{RequestContext, Server, ServerBuilder};
use tern_mcp::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ElicitResult, ElicitValue,
    InputRequest, ListToolsResult, PaginatedRequestParams, StringSchema, Tool, method,
};

/// The region the seed's client answers with.
pub const REGION: &str = "eu-west-1";

/// The state the server hands out with its question, and gets back with the answer.
pub const STATE: &str = "provision-v1";

/// Which region should the database live in? (A form with one required text field.)
pub fn ask_region() -> InputRequest {
    ask::ElicitForm::new("Which region should the database live in?")
        .required("region", StringSchema::new())
        .into()
}

/// The client's answer to [`ask_region`]: accept, with [`REGION`].
pub fn answer_region() -> ElicitResult {
    ask::accept([("region", REGION)])
}

/// The region answered in a retry's `inputResponses`, if any.
pub fn answered_region(params: &CallToolRequestParams) -> Option<String> {
    let answer = params
        .input_responses
        .as_ref()?
        .get::<method::Elicit>("region")?
        .ok()?;
    match answer.content?.get("region")? {
        ElicitValue::String(region) => Some(region.clone()),
        _ => None,
    }
}

/// What the tool says once it has provisioned `name` in `region`.
pub fn provisioned(name: &str, region: &str) -> String {
    format!("Provisioned '{name}' in {region}.")
}

/// `tools/list`: the one `provision` tool.
pub async fn list_tools(
    _ctx: RequestContext,
    _params: PaginatedRequestParams,
) -> Result<ListToolsResult, RpcError> {
    let schema =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let schema = serde_json::from_value(schema).map_err(|e| RpcError::internal(e.to_string()))?;
    let mut tool = Tool::new(schema, "provision");
    tool.description = Some("Provision a database. Asks which region to put it in.".into());
    Ok(ListToolsResult::new(vec![tool]))
}

/// `provision`'s arguments.
#[derive(serde::Deserialize)]
struct ProvisionArguments {
    name: String,
}

/// `tools/call`: asks for the region (state [`STATE`]), then provisions.
pub async fn call_tool(
    _ctx: RequestContext,
    params: CallToolRequestParams,
) -> Result<CallToolOutcome, RpcError> {
    let Some(region) = answered_region(&params) else {
        return Ok(ask::input_required([("region", ask_region())], Some(STATE)).into());
    };
    // The arguments are decoded once, straight from the text the client sent.
    let ProvisionArguments { name } = params
        .arguments
        .as_ref()
        .and_then(|a| a.decode().ok())
        .ok_or_else(|| RpcError::invalid_params("`name` is required"))?;
    Ok(CallToolResult::new(vec![ask::text(provisioned(&name, &region))]).into())
}

/// The seed's server, ready for `.seal(..)` or `.build()`.
pub fn provision_server() -> ServerBuilder {
    Server::builder("Provisioner", "1.0.0")
        .handle::<method::ListTools, _, _>(list_tools)
        .handle::<method::CallTool, _, _>(call_tool)
}
