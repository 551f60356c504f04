"""The Python SDK's Client in a 2025-11-25 session against tern's gateway: it calls TOOL
(`modern.book`: a 2026-07-28 upstream's, which asks with an InputRequiredResult;
`legacy.book`: a 2025-11-25 upstream's, which asks on its own session) and answers the
seat on its back channel, as elicitation/create on its session with the gateway.

Usage: gateway_client.py URL TOOL
Prints the call's text and the questions it was asked; exits non-zero unless the call
booked seat 7F after exactly one question about it.
"""

import sys
import warnings

import anyio

import mcp.types as types
from mcp import Client

warnings.filterwarnings("ignore")


async def main() -> int:
    asked: list[str] = []

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"seat": "7F"})

    async with Client(sys.argv[1], mode="legacy", elicitation_callback=on_elicit) as client:
        version = client.protocol_version
        result = await client.call_tool(sys.argv[2], {"city": "Lisbon"})
    text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
    print(f"python client: {sys.argv[2]} at protocol {version}: {text!r}, asked {asked}")
    ok = (
        version == "2025-11-25"
        and not result.is_error
        and "Booked Lisbon, seat 7F" in text
        and asked == ["Which seat for the trip to Lisbon?"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
