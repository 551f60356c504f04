"""A fleet with no sticky routing, as users run it: three `everything` instances on one
Redis (or a three-node Redis Cluster), behind nginx round-robin with no affinity, driven
by the Python SDK (mcp 2.3.0).

Usage: fleet_run.py EVERYTHING (single|cluster)

EVERYTHING is the `everything` example built with the `redis` feature. Every process
(redis-server, the instances, nginx) is started here on loopback and stopped at the end.

What runs, each counted:
- steady: sessions at 2025-11-25, each doing flows of `logging/setLevel`, a tool with
  log messages, a tool with progress, a back-channel elicitation, and a resource
  subscription with its update, every request on whichever instance nginx picks;
- dropped: a call whose stream nginx drops (its own server block, a one-second read
  timeout, before a silent second and a half), resumed by the client with
  `Last-Event-ID` on any instance;
- killed: the same flows while one instance, then another, is SIGKILLed and started
  again on its port (a call on the instance as it dies fails and its flow runs again:
  an error; what a finished flow missed is lost);
- listen: a 2026-07-28 `subscriptions/listen` on one instance hearing a tool-list change
  made through another, once;
- task: a restartable task created on one instance, answered, its instance SIGKILLed,
  finished by another.

Prints `fleet (KIND): flows F, sessions S, errors E, lost messages L` and exits non-zero
if a message was lost or heard twice, or a check failed.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from dataclasses import dataclass, field

import anyio

import mcp.types as types
from mcp import Client
from mcp.client.extension import ClientExtension, ResultClaim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tasks_client import TASKS, Ack, CreateTask, Detailed, TaskRequest  # noqa: E402

warnings.filterwarnings("ignore")

STATE_KEY = "6b1f3c2a9d8e7f60112233445566778899aabbccddeeff00112233445566778a"
SESSION_NUMBERS = iter(range(1_000_000))
# What one steady flow hears: three log messages, three progress steps, one question,
# one resource update.
EXPECTED_PER_FLOW = 8
SESSIONS = 3
FLOWS_PER_SESSION = 6
# A call waits this long for its answer: a call whose instance was killed mid-way is
# answered by no one, and its flow runs again.
READ_TIMEOUT = 8.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, what: str, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not come within {within} s")


def redis_answers(port: int, *command: str) -> str:
    done = subprocess.run(["redis-cli", "-p", str(port), *command], capture_output=True, text=True)
    return done.stdout


class Processes:
    """Every process started here, stopped at the end (nginx by SIGTERM to its master)."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="tern-fleet-py-")
        self.running: list[subprocess.Popen] = []

    def start(self, args: list[str], **kw) -> subprocess.Popen:
        process = subprocess.Popen(args, **kw)
        self.running.append(process)
        return process

    def stop(self) -> None:
        for process in self.running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.running:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        if os.environ.get("FLEET_KEEP"):
            print(f"fleet: the processes' files are kept in {self.dir}", flush=True)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def start_redis(procs: Processes, kind: str) -> str:
    """One redis-server, or a three-node cluster; its URL once it serves every slot."""
    nodes = 1 if kind == "single" else 3
    ports = []
    for n in range(nodes):
        port, bus = free_port(), free_port()
        home = os.path.join(procs.dir, f"redis{n}")
        os.makedirs(home)
        args = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
        if kind == "cluster":
            args += ["--cluster-enabled", "yes", "--cluster-port", str(bus), "--cluster-config-file", "nodes.conf"]
        procs.start(args, cwd=home, stdout=subprocess.DEVNULL)
        ports.append(port)
    for port in ports:
        wait_for(lambda p=port: "PONG" in redis_answers(p, "PING"), f"redis-server on {port}")
    if kind == "cluster":
        addresses = [f"127.0.0.1:{p}" for p in ports]
        subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            capture_output=True,
        )
        for port in ports:
            wait_for(lambda p=port: "cluster_state:ok" in redis_answers(p, "CLUSTER", "INFO"), "the cluster")
    return f"redis://127.0.0.1:{ports[0]}"


@dataclass
class Instance:
    port: int
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def start_instance(procs: Processes, binary: str, redis: str, instance: Instance) -> None:
    args = [binary, "--port", str(instance.port), "--redis", redis, "--state-key", STATE_KEY, "--name", "fleet"]
    log = open(os.path.join(procs.dir, f"instance-{instance.port}.log"), "a")
    instance.process = procs.start(args, stdout=subprocess.PIPE, stderr=log, text=True)
    line = instance.process.stdout.readline()
    if not line.startswith("listening on"):
        raise RuntimeError(f"an everything instance did not start: {line!r}")
    wait_for(lambda: answers(instance.url), f"the instance on {instance.port}")


def answers(url: str) -> bool:
    """Whether `url` answers a protocol request (a 2025-11-25 initialize), its session
    then ended."""
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}'
    )
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            session = response.headers.get("mcp-session-id")
            ok = b'"result"' in response.read()
        if session:
            end = urllib.request.Request(url, method="DELETE", headers={"mcp-session-id": session})
            urllib.request.urlopen(end, timeout=2).close()
        return ok
    except Exception:
        return False


def start_nginx(procs: Processes, instances: list[Instance]) -> tuple[str, str]:
    """nginx round-robin over the instances: the main server, and one whose one-second
    read timeout drops a stream that is silent longer."""
    main, dropping = free_port(), free_port()
    upstreams = "".join(f"        server 127.0.0.1:{i.port} max_fails=0;\n" for i in instances)
    d = procs.dir

    def server(port: int, extra: str) -> str:
        return (
            f"    server {{\n        listen 127.0.0.1:{port};\n        location / {{\n"
            "            proxy_pass http://fleet;\n            proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n            proxy_set_header Host $host;\n'
            "            proxy_buffering off;\n            proxy_next_upstream error timeout;\n"
            f"{extra}        }}\n    }}\n"
        )

    config = (
        f"worker_processes 1;\ndaemon off;\nuser root;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log warn;\n"
        "events { worker_connections 4096; }\n"
        f"http {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n"
        f"    fastcgi_temp_path {d}/fastcgi;\n    uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n"
        f"    upstream fleet {{\n{upstreams}        keepalive 32;\n    }}\n"
        + server(main, "")
        + server(dropping, "            proxy_read_timeout 1s;\n")
        + "}\n"
    )
    path = os.path.join(d, "nginx.conf")
    with open(path, "w") as f:
        f.write(config)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    procs.start([nginx, "-p", d, "-c", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    urls = f"http://127.0.0.1:{main}/mcp", f"http://127.0.0.1:{dropping}/mcp"
    for url in urls:
        wait_for(lambda u=url: answers(u), "nginx")
    return urls


@dataclass
class Tally:
    flows: int = 0
    sessions: int = 0
    errors: int = 0
    lost: int = 0
    twice: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(what)


@dataclass
class Heard:
    """What one session's client heard in the flow under way."""

    logs: list[str] = field(default_factory=list)
    progress: list[float] = field(default_factory=list)
    questions: int = 0
    updates: list[str] = field(default_factory=list)
    updated: anyio.Event = field(default_factory=anyio.Event)

    def count(self) -> int:
        return len(self.logs) + len(self.progress) + self.questions + len(self.updates)


async def session_flows(url: str, flows: int, tally: Tally, until: anyio.Event | None = None) -> None:
    """One 2025-11-25 session doing `flows` flows (or flows until `until`), each flow run
    again after an error."""
    heard = Heard()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.logs.append(params.level)

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.updates.append(str(message.params.uri))
            heard.updated.set()

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        heard.questions += 1
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        heard.progress.append(value)

    # Each session watches a resource of its own: an update is heard by its subscribers
    # only.
    watched = f"test://template/{next(SESSION_NUMBERS)}/data"
    async with Client(
        url,
        mode="legacy",
        logging_callback=on_log,
        message_handler=on_message,
        elicitation_callback=on_elicit,
        read_timeout_seconds=READ_TIMEOUT,
    ) as client:
        tally.check(client.protocol_version == "2025-11-25", f"a session at {client.protocol_version}")
        tally.sessions += 1
        done = 0
        while done < flows or (until is not None and not until.is_set()):
            for attempt in range(6):
                heard.__init__()
                try:
                    await one_flow(client, heard, on_progress, watched)
                    break
                except Exception as e:  # the call's instance died: the flow runs again
                    tally.errors += 1
                    print(f"fleet: a flow failed ({type(e).__name__}: {e}); running it again", flush=True)
                    await anyio.sleep(0.2)
            else:
                tally.check(False, "a flow failed six times")
                return
            # Anything heard twice comes within this moment.
            await anyio.sleep(0.1)
            got = heard.count()
            if got != EXPECTED_PER_FLOW:
                print(f"fleet: a flow heard {got} messages, not {EXPECTED_PER_FLOW}", flush=True)
            tally.lost += max(0, EXPECTED_PER_FLOW - got)
            tally.twice += max(0, got - EXPECTED_PER_FLOW)
            tally.flows += 1
            done += 1


async def one_flow(client: Client, heard: Heard, on_progress, watched: str) -> None:
    await client.set_logging_level("info")
    result = await client.call_tool("test_tool_with_logging", {})
    assert not result.is_error, result
    result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    assert not result.is_error, result
    result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert "action=accept" in result.content[0].text, result
    await client.subscribe_resource(watched)
    await client.call_tool("fleet_touch", {"uri": watched})
    with anyio.fail_after(READ_TIMEOUT):
        await heard.updated.wait()
    await client.unsubscribe_resource(watched)


async def dropped(url: str, tally: Tally) -> None:
    """Calls whose streams nginx drops, resumed with `Last-Event-ID`."""
    steps: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        steps.append(value)

    async with Client(url, mode="legacy", read_timeout_seconds=20) as client:
        tally.sessions += 1
        for _ in range(3):
            steps.clear()
            result = await client.call_tool("fleet_pause", {"ms": 1500}, progress_callback=on_progress)
            tally.check(result.content[0].text == "paused", f"a resumed call answered {result}")
            if len(steps) != 2:
                print(f"fleet: a resumed call heard progress {steps}", flush=True)
            tally.lost += max(0, 2 - len(steps))
            tally.twice += max(0, len(steps) - 2)
            tally.flows += 1


async def killed(procs: Processes, binary: str, redis: str, instances: list[Instance], url: str, tally: Tally) -> None:
    """Steady flows while two instances in turn are SIGKILLed and started again. mcp
    2.3.0's client opens its session's GET stream again after two abrupt drops at most,
    in the session's whole life: each kill here is met by sessions of its own."""
    for victim in instances[:2]:
        stop = anyio.Event()
        async with anyio.create_task_group() as flows:
            for _ in range(2):
                flows.start_soon(session_flows, url, 2, tally, stop)
            await anyio.sleep(1.5)
            victim.process.kill()
            victim.process.wait()
            print(f"fleet: SIGKILLed the instance on port {victim.port}", flush=True)
            await anyio.sleep(1.0)
            await anyio.to_thread.run_sync(start_instance, procs, binary, redis, victim)
            print(f"fleet: started it again on port {victim.port}", flush=True)
            await anyio.sleep(1.5)
            stop.set()


async def listen(one: Instance, other: Instance, tally: Tally) -> None:
    """A 2026-07-28 listen stream on one instance hears a change made through another."""
    async with Client(one.url) as listener, Client(other.url) as changer:
        tally.check(listener.protocol_version == "2026-07-28", f"listen at {listener.protocol_version}")
        async with listener.listen(tools_list_changed=True) as subscription:
            await changer.call_tool("test_trigger_tool_change", {})
            heard = 0
            with anyio.move_on_after(1.0):
                async for _event in subscription:
                    heard += 1
        tally.lost += max(0, 1 - heard)
        tally.twice += max(0, heard - 1)
        tally.flows += 1


async def restartable_task(procs: Processes, runner: Instance, url: str, tally: Tally) -> None:
    """A restartable task created on `runner`, answered through nginx, `runner` killed:
    another instance finishes it."""
    created: dict[str, str] = {}

    async def keep(task: CreateTask, ctx) -> types.CallToolResult:
        created["id"] = task.task_id
        return types.CallToolResult(content=[])

    class Tasks(ClientExtension):
        identifier = TASKS

        def claims(self):
            return [ResultClaim(result_type="task", model=CreateTask, resolve=keep)]

    async def never(context, params):
        raise RuntimeError("a task's question comes through tasks/get")

    async with Client(runner.url, extensions=[Tasks()], elicitation_callback=never) as direct:
        await direct.call_tool("fleet_migrate", {"ms": 3000})
    async with Client(url, extensions=[Tasks()], elicitation_callback=never) as client:
        session = client.session

        async def state() -> Detailed:
            return await session.send_request(TaskRequest(method="tasks/get", params={"taskId": created["id"]}), Detailed)

        with anyio.fail_after(10):
            while (await state()).status != "input_required":
                await anyio.sleep(0.1)
        region = {"region": {"action": "accept", "content": {"region": "eu"}}}
        params = {"taskId": created["id"], "inputResponses": region}
        await session.send_request(TaskRequest(method="tasks/update", params=params), Ack)
        await anyio.sleep(0.5)
        killed_pid = runner.process.pid
        runner.process.kill()
        runner.process.wait()
        print(f"fleet: SIGKILLed the instance running task {created['id']}", flush=True)
        with anyio.fail_after(30):
            while (task := await state()).status not in ("completed", "failed", "cancelled"):
                await anyio.sleep(0.2)
        text = (task.model_extra or {}).get("result", {}).get("content", [{}])[0].get("text", "")
        print(f"fleet: the task ended {task.status}: {text!r}", flush=True)
        tally.check(task.status == "completed" and text.startswith("migrated to eu by process "), "the task finished")
        tally.check(str(killed_pid) not in text, "another instance finished the task")
        tally.flows += 1


async def run(binary: str, kind: str) -> int:
    procs = Processes()
    tally = Tally()
    took = 0.0
    try:
        redis = start_redis(procs, kind)
        instances = [Instance(free_port()) for _ in range(3)]
        for instance in instances:
            start_instance(procs, binary, redis, instance)
        url, dropping = start_nginx(procs, instances)
        started = time.monotonic()
        async with anyio.create_task_group() as steady:
            for _ in range(SESSIONS):
                steady.start_soon(session_flows, url, FLOWS_PER_SESSION, tally)
        await dropped(dropping, tally)
        await killed(procs, binary, redis, instances, url, tally)
        await listen(instances[0], instances[1], tally)
        await restartable_task(procs, instances[2], url, tally)
        took = time.monotonic() - started
    finally:
        procs.stop()
    print(
        f"fleet ({kind} redis): flows {tally.flows}, sessions {tally.sessions}, errors {tally.errors}, "
        f"lost messages {tally.lost}, heard twice {tally.twice}, in {took:.1f} s",
        flush=True,
    )
    for failure in tally.failures:
        print(f"fleet: FAIL: {failure}", file=sys.stderr)
    return 0 if tally.lost == 0 and tally.twice == 0 and not tally.failures else 1


if __name__ == "__main__":
    sys.exit(anyio.run(run, sys.argv[1], sys.argv[2]))
