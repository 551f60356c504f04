"""The Python SDK's Client reading how tern's `everything` server describes its entries.

Usage: listing_client.py URL

The described tool, prompt, resource and template (runtime/examples/support/
everything_described.rs) each list a title, an icon and `_meta`, and the tool, the
resource and the template their annotations. Exits non-zero unless the Python SDK reads
every one of them as the server set it.
"""

import sys

import anyio
from mcp import Client

ICON = "https://example.com/icons/described.png"


def check_common(kind: str, entry, title: str) -> list[str]:
    wrong = []
    if entry.title != title:
        wrong.append(f"{kind} title {entry.title!r}")
    icons = entry.icons or []
    if len(icons) != 1 or icons[0].src != ICON or icons[0].mime_type != "image/png" or icons[0].sizes != ["48x48"]:
        wrong.append(f"{kind} icons {icons!r}")
    if (entry.meta or {}).get("com.example/kind") != kind:
        wrong.append(f"{kind} _meta {entry.meta!r}")
    return wrong


def named(entries, name):
    found = [e for e in entries if e.name == name]
    if not found:
        raise SystemExit(f"FAIL: {name} is not listed")
    return found[0]


async def all_pages(list_page, attribute):
    entries, cursor = [], None
    while True:
        page = await list_page(cursor=cursor)
        entries.extend(getattr(page, attribute))
        cursor = page.next_cursor
        if not cursor:
            return entries


async def main() -> int:
    async with Client(sys.argv[1]) as client:
        tools = await all_pages(client.list_tools, "tools")
        prompts = await all_pages(client.list_prompts, "prompts")
        resources = await all_pages(client.list_resources, "resources")
        templates = await all_pages(client.list_resource_templates, "resource_templates")
    tool = named(tools, "described_tool")
    prompt = named(prompts, "described_prompt")
    resource = named(resources, "described_resource")
    template = named(templates, "described_template")
    wrong = check_common("tool", tool, "Described tool")
    wrong += check_common("prompt", prompt, "Described prompt")
    wrong += check_common("resource", resource, "Described resource")
    wrong += check_common("template", template, "Described template")
    hints = tool.annotations
    if hints is None or hints.read_only_hint is not True or hints.idempotent_hint is not True:
        wrong.append(f"tool annotations {hints!r}")
    for kind, entry in (("resource", resource), ("template", template)):
        a = entry.annotations
        if a is None or a.audience != ["user"] or a.priority != 0.5:
            wrong.append(f"{kind} annotations {a!r}")
    if wrong:
        print("FAIL: " + "; ".join(wrong), file=sys.stderr)
        return 1
    print("python client: the tool, prompt, resource and template list their title, icon, _meta and annotations")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
