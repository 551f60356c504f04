"""The Python SDK's Client in a 2025-11-25 session against tern's notifier.

Usage: session_client.py (URL | COMMAND [ARGS...])

Sets the log level to info, subscribes to note://a, calls `report` with a progress
callback and `touch` for note://b then note://a. Exits non-zero unless it heard the three
progress steps, the info and warning logs (not the debug one), and exactly one
resources/updated, for note://a.
"""

import sys
import warnings

import anyio

import mcp.types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

# resources/subscribe and logging/setLevel are 2025-11-25's, which this client speaks.
warnings.filterwarnings("ignore")


async def main() -> int:
    target = sys.argv[1:]
    server = target[0] if target[0].startswith("http") else StdioServerParameters(command=target[0], args=target[1:])
    progress: list[float] = []
    logs: list[str] = []
    updates: list[str] = []
    heard = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.level)

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            heard.set()

    async with Client(server, mode="legacy", logging_callback=on_log, message_handler=on_message) as client:
        version = client.protocol_version
        await client.set_logging_level("info")
        await client.subscribe_resource("note://a")
        result = await client.call_tool("report", {}, progress_callback=on_progress)
        await client.call_tool("touch", {"uri": "note://b"})
        await client.call_tool("touch", {"uri": "note://a"})
        with anyio.fail_after(10):
            await heard.wait()
        # Anything for note://b would have come before note://a's update.
        await anyio.sleep(0.3)
    print(f"python client: protocol {version}: progress {progress}, logs {logs}, updates {updates}")
    ok = (
        version == "2025-11-25"
        and not result.is_error
        and progress == [1.0, 2.0, 3.0]
        and logs == ["info", "warning"]
        and updates == ["note://a"]
    )
    if not ok:
        print("FAIL: expected progress 1..3, info and warning logs, one update for note://a", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
