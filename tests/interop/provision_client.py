"""The Python SDK's Client completing the provision flow against a server.

Usage: provision_client.py MODE EXPECTED_VERSION (URL | COMMAND [ARGS...])
MODE is the Client's mode ("auto" or "legacy"). Exits non-zero unless the flow
completes at EXPECTED_VERSION with the client's region in the result.
"""

import sys

import anyio

from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitRequestParams, ElicitResult, TextContent


async def handle_elicitation(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"region": "eu-west-1"})


async def main() -> int:
    mode, expected, target = sys.argv[1], sys.argv[2], sys.argv[3:]
    server = target[0] if target[0].startswith("http") else StdioServerParameters(command=target[0], args=target[1:])
    async with Client(server, mode=mode, elicitation_callback=handle_elicitation) as client:
        version = client.protocol_version
        result = await client.call_tool("provision", {"name": "orders"})
    text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
    print(f"python client ({mode}): protocol {version}: {text}")
    if version != expected or "eu-west-1" not in text or result.is_error:
        print(f"FAIL: expected protocol {expected} and a provisioned database", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
