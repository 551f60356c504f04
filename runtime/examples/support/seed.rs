//! The seed's low-level provisioning server, shared by the examples.

use serde_json::json;
use tern::ask;
use tern::jsonrpc::RpcError;
use tern::server::{RequestContext, Server, ServerBuilder};
use tern::types::v2026_07_28::{
    CallToolOutcome, CallToolRequestParams, CallToolResult, ElicitValue, InputRequest,
    ListToolsResult, PaginatedRequestParams, Tool, method,
};

/// Which region should the database live in?
pub(crate) fn ask_region() -> Result<InputRequest, RpcError> {
    ask::elicit_form(
        "Which region should the database live in?",
        json!({"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}),
    )
    .map_err(|e| RpcError::internal(e.to_string()))
}

async fn list_tools(
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

async fn call_tool(
    _ctx: RequestContext,
    params: CallToolRequestParams,
) -> Result<CallToolOutcome, RpcError> {
    let answer = params
        .input_responses
        .as_ref()
        .and_then(|r| r.get::<method::Elicit>("region"))
        .and_then(Result::ok);
    let region = answer
        .as_ref()
        .and_then(|a| a.content.as_ref())
        .and_then(|c| c.get("region"));
    let Some(ElicitValue::String(region)) = region else {
        return Ok(ask::input_required([("region", ask_region()?)], Some("provision-v1")).into());
    };
    let name = params
        .arguments
        .as_ref()
        .and_then(|a| a.get("name"))
        .and_then(|n| n.as_str())
        .ok_or_else(|| RpcError::invalid_params("`name` is required"))?;
    Ok(CallToolResult::new(vec![ask::text(format!(
        "Provisioned '{name}' in {region}."
    ))])
    .into())
}

/// The seed's server, ready for `.seal(..)` or `.build()`.
pub(crate) fn provision_server() -> ServerBuilder {
    Server::builder("Provisioner", "1.0.0")
        .handle::<method::ListTools, _, _>(list_tools)
        .handle::<method::CallTool, _, _>(call_tool)
}
