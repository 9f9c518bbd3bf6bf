"""Round trip of `bash` `true`: JSON-RPC (`shellgate rpc`, raw lines) against MCP (`shellgate mcp`
through the Python SDK client, and as raw lines).

Usage: bench_roundtrip.py SHELLGATE_BINARY [CALLS]

Prints one line per transport with the median and p90 in milliseconds, then the SDK/JSON-RPC ratio.
Both servers run the command in the same persistent session kind, so the difference is the protocol
layer alone.
"""

import json
import statistics
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WARMUP = 20


def summary(name, samples):
    samples = sorted(samples)
    p90 = samples[int(len(samples) * 0.9) - 1]
    print(f"{name:<22} median {statistics.median(samples):7.3f} ms  p90 {p90:7.3f} ms  ({len(samples)} calls)")
    return statistics.median(samples)


def raw_lines(binary, mode, calls, request):
    """Sequential calls over raw JSON-RPC lines; `request(id)` builds one request."""
    server = subprocess.Popen([binary, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def call(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("id") == message["id"] and "method" not in reply:
                return reply

    if mode == "mcp":
        call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    samples = []
    for i in range(1, WARMUP + calls + 1):
        started = time.perf_counter()
        call(request(i))
        if i > WARMUP:
            samples.append((time.perf_counter() - started) * 1000)
    server.stdin.close()
    server.wait(timeout=30)
    return samples


async def sdk(binary, calls):
    samples = []
    async with stdio_client(StdioServerParameters(command=binary, args=["mcp"])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(WARMUP + calls):
                started = time.perf_counter()
                result = await session.call_tool("bash", {"command": "true"})
                if result.is_error:
                    raise SystemExit(f"bash true failed: {result}")
                if i >= WARMUP:
                    samples.append((time.perf_counter() - started) * 1000)
    return samples


def main():
    binary = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rpc = summary("json-rpc (raw lines)", raw_lines(
        binary, "rpc", calls,
        lambda i: {"jsonrpc": "2.0", "id": i, "method": "bash", "params": {"command": "true"}}))
    summary("mcp (raw lines)", raw_lines(
        binary, "mcp", calls,
        lambda i: {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "bash", "arguments": {"command": "true"}}}))
    mcp = summary("mcp (python sdk)", anyio.run(sdk, binary, calls))
    print(f"ratio mcp-sdk / json-rpc: {mcp / rpc:.2f}")


if __name__ == "__main__":
    main()
