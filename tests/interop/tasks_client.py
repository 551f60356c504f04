"""The Python SDK's Client against tern's `everything` server's task tools.

Usage: tasks_client.py URL

mcp 2.3.0 has no tasks extension of its own. Without one, its plain `call_tool` of a
tool that may run as a task (`slow_compute`) gets a synchronous result, and of one that
must (`failing_job`) the -32021 naming the extension. With the small extension below
(its `ClientExtension` and `ResultClaim` hooks: it declares the extension, claims
`resultType: "task"` on tools/call and resolves it by polling `tasks/get` and answering
through `tasks/update`), the same calls become tasks tern runs and the client follows
them to their results, an elicitation answered on the way. Exits non-zero otherwise.
"""

import sys
from typing import Any, ClassVar, Literal

import anyio
import mcp.types as types
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import Field

TASKS = "io.modelcontextprotocol/tasks"


class CreateTask(types.Result):
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(alias="pollIntervalMs", default=None)


class TaskRequest(types.Request[dict[str, Any], str]):
    name_param: ClassVar[str | None] = "taskId"


class Detailed(types.Result):
    model_config = {"extra": "allow"}
    status: str


class Ack(types.Result):
    model_config = {"extra": "allow"}


async def follow(created: CreateTask, ctx: ClaimContext) -> types.CallToolResult:
    """Polls the task to its end, accepting every form with `confirm: true`."""
    session = ctx.session
    answered: set[str] = set()
    delay = (created.poll_interval_ms or 1000) / 1000
    with anyio.fail_after(20):
        while True:
            task = await session.send_request(
                TaskRequest(method="tasks/get", params={"taskId": created.task_id}), Detailed
            )
            extra = task.model_extra or {}
            if task.status == "completed":
                return types.CallToolResult.model_validate(extra["result"])
            if task.status in ("failed", "cancelled"):
                raise RuntimeError(f"task {created.task_id} ended {task.status}: {extra.get('error')}")
            if task.status == "input_required":
                fresh = {k: v for k, v in extra["inputRequests"].items() if k not in answered}
                if fresh:
                    responses = {k: {"action": "accept", "content": {"confirm": True}} for k in fresh}
                    await session.send_request(
                        TaskRequest(
                            method="tasks/update",
                            params={"taskId": created.task_id, "inputResponses": responses},
                        ),
                        Ack,
                    )
                    answered.update(fresh)
                    continue
            await anyio.sleep(delay)


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTask, resolve=follow)]


async def never_asked(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Declares the elicitation capability: a task's questions come through tasks/get."""
    raise RuntimeError("elicitation arrives through the task, not as a request")


def text(result: types.CallToolResult) -> str:
    return result.content[0].text if result.content else ""


async def main() -> int:
    url = sys.argv[1]
    ok = True
    async with Client(url) as plain:
        result = await plain.call_tool("slow_compute", {"seconds": 1, "label": "py"})
        print(f"python client, no extension: slow_compute -> {text(result)!r}")
        ok &= "completed after 1 seconds" in text(result) and not result.is_error
        try:
            await plain.call_tool("failing_job", {})
            print("python client, no extension: failing_job answered, expected -32021")
            ok = False
        except Exception as e:  # MCPError
            code = getattr(getattr(e, "error", None), "code", None)
            print(f"python client, no extension: failing_job -> error {code}")
            ok &= code == -32021
    async with Client(url, extensions=[Tasks()], elicitation_callback=never_asked) as tasked:
        result = await tasked.call_tool("slow_compute", {"seconds": 1, "label": "py-task"})
        print(f"python client, tasks: slow_compute -> {text(result)!r}")
        ok &= "py-task" in text(result)
        result = await tasked.call_tool("confirm_delete", {"filename": "py.txt"})
        print(f"python client, tasks: confirm_delete -> {text(result)!r}")
        ok &= text(result) == "deleted 'py.txt'"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
