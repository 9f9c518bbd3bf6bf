"""Round trip of `bash` `true`: JSON-RPC (`shellgate rpc`) against MCP (`shellgate mcp`), every
client in this one Python process.

Usage: bench_roundtrip.py SHELLGATE_BINARY [CALLS] [--json]

Clients, each on its own long-lived server:

- `json-rpc, asyncio lines`: `shellgate rpc` through a plain asyncio client (one subprocess, JSON
  lines written with `StreamWriter.write` + `drain`, read with `StreamReader.readline`);
- `mcp, asyncio lines`: `shellgate mcp` through the same asyncio client (`tools/call bash`), after
  the `initialize` handshake (protocol 2025-06-18);
- `mcp 2026-07-28, asyncio lines`: the same client on protocol 2026-07-28 (no handshake; the
  version and capabilities in every request's `_meta`);
- `mcp, python sdk`: `shellgate mcp` through the `mcp` SDK's `ClientSession` (anyio on asyncio);
- `mcp 2026-07-28, python sdk`: the SDK's `Client(mode="2026-07-28")`;
- `json-rpc, blocking lines`: `shellgate rpc` through blocking `readline` on the pipe, no event loop
  (the cheapest client Python has; a floor, not the yardstick).

The asyncio JSON-RPC client is the yardstick for the SDK: both pay an event loop, asyncio subprocess
pipes and Python JSON handling, so the ratio is what MCP and its SDK add. `mcp, asyncio lines` ÷
`json-rpc, asyncio lines` is the server's own share (same client, only the protocol differs).

All servers run at once in a scratch directory, the command in the same persistent session kind, and
the clients take turns in rounds so that load from elsewhere spreads over all of them. Prints one line
per client (median, p90, p99 in ms; CPU per call of this Python process and of the server with its
shell, from `/proc`) and the ratios; `--json` prints one JSON object instead.
"""

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import anyio
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WARMUP = 20
ROUNDS = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

RPC_ASYNC = "json-rpc, asyncio lines"
MCP_ASYNC = "mcp, asyncio lines"
MODERN_ASYNC = "mcp 2026-07-28, asyncio lines"
MCP_SDK = "mcp, python sdk"
MODERN_SDK = "mcp 2026-07-28, python sdk"
RPC_BLOCKING = "json-rpc, blocking lines"

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def children(pid):
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
            found += [int(p) for p in f.read().split()]
    return found


def tree_cpu_seconds(pid):
    """User + system CPU of `pid` and its live descendants (the server and its shell)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        with contextlib.suppress(OSError):
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            stack += children(p)
    return total / CLOCK_TICKS


def rpc_request(i):
    return {"jsonrpc": "2.0", "id": i, "method": "bash", "params": {"command": "true"}}


def mcp_request(i):
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "true"}},
    }


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


def modern_request(i):
    request = mcp_request(i)
    request["params"]["_meta"] = MODERN_META
    return request


def failed(reply):
    """Why a reply is not a successful `true`, or None."""
    if "error" in reply:
        return repr(reply["error"])
    result = reply.get("result", {})
    if result.get("isError") or result.get("is_error"):
        return repr(result)
    return None


class AsyncLines:
    """A plain asyncio JSON-lines client of one server process."""

    def __init__(self, process, request):
        self.process = process
        self.pid = process.pid
        self.request = request
        self.next_id = 0

    @classmethod
    async def start(cls, binary, kind, cwd):
        """`kind`: `rpc`, `mcp` (handshake) or `modern` (MCP 2026-07-28)."""
        mode = "rpc" if kind == "rpc" else "mcp"
        process = await asyncio.create_subprocess_exec(
            binary, mode, cwd=cwd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        requests = {"rpc": rpc_request, "mcp": mcp_request, "modern": modern_request}
        client = cls(process, requests[kind])
        if kind == "mcp":
            await client.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
            await client.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return client

    async def notify(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def send(self, message):
        await self.notify(message)
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            reply = json.loads(line)
            if reply.get("id") == message["id"] and "method" not in reply:
                return reply

    async def call(self):
        self.next_id += 1
        reply = await self.send(self.request(self.next_id))
        why = failed(reply)
        if why:
            raise SystemExit(f"bash true failed: {why}")

    async def close(self):
        self.process.stdin.close()
        await self.process.wait()


class BlockingLines:
    """Blocking reads and writes on the pipe; the event loop is stalled while it runs."""

    def __init__(self, binary, cwd):
        self.process = subprocess.Popen(
            [binary, "rpc"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.pid = self.process.pid
        self.next_id = 0

    async def call(self):
        self.next_id += 1
        self.process.stdin.write(json.dumps(rpc_request(self.next_id)) + "\n")
        self.process.stdin.flush()
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == self.next_id and "method" not in reply:
                break
        why = failed(reply)
        if why:
            raise SystemExit(f"bash true failed: {why}")

    async def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


class Sdk:
    """The SDK's `ClientSession` (handshake) or `Client` (2026-07-28): both have `call_tool`."""

    def __init__(self, session, pid):
        self.session = session
        self.pid = pid

    async def call(self):
        result = await self.session.call_tool("bash", {"command": "true"})
        if result.is_error:
            raise SystemExit(f"bash true failed: {result}")


async def measure(binary, calls):
    with tempfile.TemporaryDirectory(prefix="sg-mcp-bench-") as work:
        async with contextlib.AsyncExitStack() as stack:
            params = StdioServerParameters(command=binary, args=["mcp"], cwd=work, env=dict(os.environ))
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            # The SDK lists the tools once (to validate structured content) on the first call.
            await session.list_tools()
            # The SDK's server is this process's only child so far.
            (sdk_pid,) = children(os.getpid())
            modern = await stack.enter_async_context(Client(params, mode="2026-07-28"))
            await modern.list_tools()
            (modern_pid,) = set(children(os.getpid())) - {sdk_pid}
            clients = {
                RPC_ASYNC: await AsyncLines.start(binary, "rpc", work),
                MCP_ASYNC: await AsyncLines.start(binary, "mcp", work),
                MODERN_ASYNC: await AsyncLines.start(binary, "modern", work),
                MCP_SDK: Sdk(session, sdk_pid),
                MODERN_SDK: Sdk(modern, modern_pid),
                RPC_BLOCKING: BlockingLines(binary, work),
            }
            samples = {name: [] for name in clients}
            cpu = {name: [0.0, 0.0] for name in clients}  # client, server seconds
            for client in clients.values():
                for _ in range(WARMUP):
                    await client.call()
            per_round = max(1, calls // ROUNDS)
            for _ in range(ROUNDS):
                for name, client in clients.items():
                    client_before, server_before = time.process_time(), tree_cpu_seconds(client.pid)
                    for _ in range(per_round):
                        started = time.perf_counter()
                        await client.call()
                        samples[name].append((time.perf_counter() - started) * 1000)
                    cpu[name][0] += time.process_time() - client_before
                    cpu[name][1] += tree_cpu_seconds(client.pid) - server_before
            for name, client in clients.items():
                if name not in (MCP_SDK, MODERN_SDK):
                    await client.close()
    return samples, cpu


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    as_json = "--json" in sys.argv[1:]
    binary = args[0]
    calls = int(args[1]) if len(args) > 1 else 500
    samples, cpu = anyio.run(measure, binary, calls, backend="asyncio")
    figures = {
        name: {
            "median_ms": statistics.median(s),
            "p90_ms": percentile(s, 0.9),
            "p99_ms": percentile(s, 0.99),
            "calls": len(s),
            "client_cpu_ms": cpu[name][0] * 1000 / len(s),
            "server_cpu_ms": cpu[name][1] * 1000 / len(s),
        }
        for name, s in samples.items()
    }
    median = {name: f["median_ms"] for name, f in figures.items()}
    ratios = {
        "mcp-sdk / json-rpc (asyncio)": median[MCP_SDK] / median[RPC_ASYNC],
        "mcp / json-rpc (same asyncio client)": median[MCP_ASYNC] / median[RPC_ASYNC],
        "mcp 2026-07-28 / json-rpc (same asyncio client)": median[MODERN_ASYNC] / median[RPC_ASYNC],
        "mcp-sdk 2026-07-28 / json-rpc (asyncio)": median[MODERN_SDK] / median[RPC_ASYNC],
        "mcp-sdk / mcp (asyncio lines)": median[MCP_SDK] / median[MCP_ASYNC],
        "mcp-sdk / json-rpc (blocking)": median[MCP_SDK] / median[RPC_BLOCKING],
        "server cpu: mcp / json-rpc (asyncio clients)": figures[MCP_ASYNC]["server_cpu_ms"]
        / max(figures[RPC_ASYNC]["server_cpu_ms"], 1e-9),
        "server cpu: mcp 2026-07-28 / json-rpc (asyncio clients)": figures[MODERN_ASYNC]["server_cpu_ms"]
        / max(figures[RPC_ASYNC]["server_cpu_ms"], 1e-9),
    }
    load = os.getloadavg()[0]
    if as_json:
        print(json.dumps({"clients": figures, "ratios": ratios, "load_after": load}))
        return
    for name, f in figures.items():
        print(
            f"{name:<30} median {f['median_ms']:6.3f} ms  p90 {f['p90_ms']:6.3f}  p99 {f['p99_ms']:6.3f}  "
            f"cpu/call: client {f['client_cpu_ms']:.3f} ms, server {f['server_cpu_ms']:.3f} ms  "
            f"({f['calls']} calls)"
        )
    for label, value in ratios.items():
        print(f"ratio {label}: {value:.2f}")


if __name__ == "__main__":
    main()
