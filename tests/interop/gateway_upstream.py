"""An upstream for tern's gateway on the Python SDK's MCPServer: one tool, `book`, whose
seat is elicited by a resolver. On 2026-07-28 the SDK asks with an InputRequiredResult
(the seat question in `inputRequests`, its own `requestState`); on a 2025-11-25 session
it asks with elicitation/create on the session, mid-call.

Usage: gateway_upstream.py --http PORT [--legacy]
  --legacy  answers server/discover with -32601, as a 2025-11-25 server does, so a
            client falls back to an initialize handshake and holds a session.
"""

import sys
from typing import Annotated

from pydantic import BaseModel

from http_serving import serve_http
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND, RequestParams


class Seat(BaseModel):
    seat: str


def ask_seat(city: str) -> Elicit[Seat]:
    return Elicit(f"Which seat for the trip to {city}?", Seat)


server = MCPServer("python-booking")


@server.tool()
def book(city: str, seat: Annotated[Seat, Resolve(ask_seat)]) -> str:
    """Books a trip to `city`, asking which seat."""
    return f"Booked {city}, seat {seat.seat}"


async def no_discover(ctx, params) -> None:
    raise MCPError(METHOD_NOT_FOUND, "Method not found: server/discover")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--http"]:
        sys.exit("usage: gateway_upstream.py --http PORT [--legacy]")
    if "--legacy" in sys.argv[3:]:
        server._lowlevel_server.add_request_handler("server/discover", RequestParams, no_discover)
    serve_http(server, int(sys.argv[2]))
