"""A catalog on the Python SDK's MCPServer for tern's client: `tools/list` results the
client may reuse for a minute (a `private` cache hint), `subscriptions/listen`, a tool
that adds a tool and says the list changed, and a count of the `tools/list` requests
that reached it (so the caller can tell a cached list from a fetched one).

Usage: catalog_server.py --http PORT   (port 0: any free one; prints `listening on URL`)
"""

import sys

from http_serving import serve_http
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer

LISTS_SERVED = 0


async def count_lists(ctx, call_next):
    global LISTS_SERVED
    if ctx.method == "tools/list":
        LISTS_SERVED += 1
    return await call_next(ctx)


server = MCPServer(
    "python-catalog",
    cache_hints={"tools/list": CacheHint(ttl_ms=60_000, scope="private")},
    middleware=[count_lists],
)


@server.tool()
def lists_served() -> str:
    """How many tools/list requests reached this server."""
    return str(LISTS_SERVED)


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds a tool called `name` and tells the listeners the list changed."""
    server.add_tool(lambda: f"I am {name}", name=name, description=f"Added at run time: {name}")
    await ctx.notify_tools_changed()
    return f"added {name}"


if __name__ == "__main__":
    if sys.argv[1:2] != ["--http"]:
        sys.exit("usage: catalog_server.py --http PORT")
    serve_http(server, int(sys.argv[2]))
