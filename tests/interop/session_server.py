"""A notifier on the Python SDK's low-level Server, for tern's client in a 2025-11-25
session: over stdio, or over Streamable HTTP with sessions (`--http PORT`).

`report` reports progress 1..3 of 3 and logs at info; `touch {uri}` sends
notifications/resources/updated for `uri` when the client subscribed to it (on the
session's own stream: the GET stream over HTTP).
"""

import sys
import warnings

import anyio

import mcp.server.stdio
from http_serving import serve_http
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    EmptyResult,
    ListToolsResult,
    PaginatedRequestParams,
    SubscribeRequestParams,
    TextContent,
    Tool,
    UnsubscribeRequestParams,
)

warnings.filterwarnings("ignore")

subscribed: set[str] = set()


async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    touch = {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]}
    return ListToolsResult(
        tools=[
            Tool(name="report", description="Reports progress and logs", input_schema={"type": "object"}),
            Tool(name="touch", description="Says a resource changed", input_schema=touch),
        ]
    )


async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    if params.name == "report":
        for step in (1, 2, 3):
            await ctx.session.report_progress(step, 3, f"step {step}")
        await ctx.session.send_log_message("info", "python info line", related_request_id=ctx.request_id)
        return CallToolResult(content=[TextContent(type="text", text="reported")])
    uri = (params.arguments or {})["uri"]
    if uri in subscribed:
        await ctx.session.send_resource_updated(uri)
    return CallToolResult(content=[TextContent(type="text", text=f"touched {uri}")])


async def subscribe(ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
    subscribed.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
    subscribed.discard(str(params.uri))
    return EmptyResult()


server = Server(
    "Notifier",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_subscribe_resource=subscribe,
    on_unsubscribe_resource=unsubscribe,
)


async def main() -> None:
    async with mcp.server.stdio.stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        serve_http(server, int(sys.argv[2]))
    else:
        anyio.run(main)
