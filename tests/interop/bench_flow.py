"""The Python SDK's baseline for runtime/benches/http_flow.rs: the same full MRTR flow
(tools/call, input-required, the elicitation callback, the retry, complete), its client
against its low-level server over loopback Streamable HTTP.

Usage: bench_flow.py [--flows N] [--warmup N] [--concurrent-seconds S]
       bench_flow.py --serve PORT            (the server alone; the default run starts it)

The server is tests/interop/provision_server.py's tool, served by uvicorn in a child
process (so client and server compete for the cores as two processes, like the Rust
bench's two runtimes), stateless, with JSON answers. Prints a human line per figure and
a last line `RESULT {json}` for scripts/bench-http.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import anyio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONCURRENT_CALLERS = 16


def serve(port: int) -> None:
    import uvicorn

    from provision_server import server

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, proc: subprocess.Popen, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Python server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the Python server did not listen on {port} within {seconds} s")


async def run_client(url: str, flows: int, warmup: int, concurrent_seconds: float) -> dict:
    from mcp import Client
    from mcp.types import ElicitResult

    async def answer(context, params) -> ElicitResult:
        return ElicitResult(action="accept", content={"region": "eu-west-1"})

    async with Client(url, mode="2026-07-28", elicitation_callback=answer) as client:

        async def flow() -> None:
            result = await client.call_tool("provision", {"name": "orders"})
            if result.is_error:
                raise RuntimeError(f"the flow failed: {result}")

        for _ in range(warmup):
            await flow()
        times = []
        started = time.perf_counter()
        for _ in range(flows):
            t = time.perf_counter()
            await flow()
            times.append(time.perf_counter() - t)
        total = time.perf_counter() - started
        times.sort()
        out = {
            "median_us": statistics.median(times) * 1e6,
            "p99_us": times[min(len(times) - 1, len(times) * 99 // 100)] * 1e6,
            "sequential_flows_per_s": flows / total,
            "flows": flows,
        }
        print(
            f"python/sequential: median {out['median_us']:.1f} µs, p99 {out['p99_us']:.1f} µs, "
            f"{out['sequential_flows_per_s']:.0f} flows/s ({flows} flows)",
            flush=True,
        )

        done = 0
        deadline = time.perf_counter() + concurrent_seconds

        async def caller() -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                await flow()
                done += 1

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(CONCURRENT_CALLERS):
                group.start_soon(caller)
        elapsed = time.perf_counter() - started
        out["concurrent_flows_per_s"] = done / elapsed
        print(
            f"python/concurrent_{CONCURRENT_CALLERS}: {out['concurrent_flows_per_s']:.0f} flows/s "
            f"({done} flows in {elapsed:.1f} s)",
            flush=True,
        )
        return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int, help="run only the server, on this port")
    parser.add_argument("--flows", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--concurrent-seconds", type=float, default=5.0)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return 0

    port = free_port()
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", str(port)])
    try:
        wait_for(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        out = anyio.run(run_client, url, args.flows, args.warmup, args.concurrent_seconds)
    finally:
        # Stop the server we started, by its PID; kill it if it does not go quietly.
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
