"""The Python SDK's Client as an MCP Apps host in front of tern's `everything` server.

Usage: apps_client.py URL MODE

MODE `auto` speaks 2026-07-28, `legacy` opens a 2025-11-25 session. Advertising
`io.modelcontextprotocol/ui`, the client must see the server declare the extension,
the `app_greet` tool linked to its `ui://` page in `_meta.ui`, the page listed and read
as `text/html;profile=mcp-app` with its `_meta.ui`, and the tool's text result. Without
the advertisement it must see the tool with no link and no page. Exits non-zero
otherwise.
"""

import sys

import anyio
from mcp import Client
from mcp.client import advertise

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
PAGE = "ui://everything/greeter"


def fail(message: str) -> None:
    raise SystemExit(f"FAIL: {message}")


async def host(url: str, mode: str) -> None:
    ui = advertise(EXTENSION, {"mimeTypes": [MIME]})
    async with Client(url, mode=mode, extensions=[ui]) as client:
        caps = client.server_capabilities
        if EXTENSION not in (caps.extensions or {}):
            fail(f"the server does not declare {EXTENSION}: {caps!r}")
        tools = (await client.list_tools()).tools
        greet = next((t for t in tools if t.name == "app_greet"), None)
        if greet is None:
            fail("app_greet is not listed")
        link = (greet.meta or {}).get("ui", {}).get("resourceUri")
        if link != PAGE:
            fail(f"app_greet's _meta.ui.resourceUri is {link!r}")
        resources = (await client.list_resources()).resources
        page = next((r for r in resources if str(r.uri) == PAGE), None)
        if page is None or page.mime_type != MIME:
            fail(f"the page is not listed as {MIME}: {page!r}")
        read = await client.read_resource(PAGE)
        content = read.contents[0]
        if content.mime_type != MIME or "<html" not in content.text:
            fail(f"the page reads as {content.mime_type!r}")
        if "prefersBorder" not in ((content.meta or {}).get("ui") or {}):
            fail(f"the page's _meta.ui is {content.meta!r}")
        result = await client.call_tool("app_greet", {"name": "python"})
        text = result.content[0].text
        if "Hello, python!" not in text:
            fail(f"app_greet answered {text!r}")
    print(f"apps ({mode}): the link, the page and the fallback text as expected")


async def plain(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        tools = (await client.list_tools()).tools
        greet = next((t for t in tools if t.name == "app_greet"), None)
        if greet is None or (greet.meta or {}).get("ui") is not None:
            fail(f"a client without apps sees app_greet as {greet!r}")
        resources = (await client.list_resources()).resources
        if any(str(r.uri) == PAGE for r in resources):
            fail("a client without apps sees the page listed")
    print(f"apps ({mode}): a client without the extension sees a plain tool")


async def main() -> None:
    url, mode = sys.argv[1], sys.argv[2]
    await host(url, mode)
    await plain(url, mode)


anyio.run(main)
