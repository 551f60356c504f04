"""The Python SDK's Client calling tern's trace server from inside a span whose ids it
chose, to show its W3C `traceparent` (SEP-414, injected into `_meta` by the SDK) becomes
the parent of tern's server span.

With only opentelemetry-api installed, the SDK's own client span is a non-recording
one carrying the current context, so the injected parent is exactly the span set here.

Usage: trace_client.py URL
"""

import sys

import anyio
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from mcp import Client
from mcp.types import TextContent

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7


def text(result) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


async def main() -> int:
    url = sys.argv[1]
    chosen = SpanContext(TRACE_ID, SPAN_ID, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    async with Client(url) as client:
        with trace.use_span(NonRecordingSpan(chosen)):
            await client.call_tool("traced", {})
        # Asked outside the span: the server reports the parent its `traced` span had.
        seen = text(await client.call_tool("last_traced_parent", {}))
    expected = f"{TRACE_ID:032x}-{SPAN_ID:016x}"
    print(f"python client: tern's server span parent {seen}, sent {expected}")
    if seen != expected:
        print("FAIL: the server span's parent is not the client's span", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
