"""The seed's provisioning server on the Python SDK's low-level Server, over stdio, or
over Streamable HTTP with sessions (`--http PORT`, served by uvicorn on 127.0.0.1).

One tool for both eras: on 2026-07-28 it returns an InputRequiredResult and reads the
retry's answer; on a 2025-11-25 session it asks the client with elicitation/create.
"""

import sys

import anyio

import mcp.server.stdio
from http_serving import serve_http
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

MESSAGE = "Which region should the database live in?"
SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string"}},
    "required": ["region"],
}


async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    return ListToolsResult(tools=[Tool(name="provision", description="Provision a database.", input_schema=schema)])


async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
    if ctx.protocol_version == "2025-11-25":
        answer = await ctx.session.elicit_form(MESSAGE, SCHEMA, related_request_id=ctx.request_id)
    else:
        answer = (params.input_responses or {}).get("region")
        if not isinstance(answer, ElicitResult) or answer.content is None:
            ask = ElicitRequest(params=ElicitRequestFormParams(message=MESSAGE, requested_schema=SCHEMA))
            return InputRequiredResult(input_requests={"region": ask}, request_state="provision-v1")
    name = (params.arguments or {})["name"]
    region = (answer.content or {}).get("region")
    text = f"Provisioned {name!r} in {region} over {ctx.protocol_version}."
    return CallToolResult(content=[TextContent(type="text", text=text)])


server = Server("Provisioner", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with mcp.server.stdio.stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        serve_http(server, int(sys.argv[2]))
    else:
        anyio.run(main)
