"""Drive `shellgate mcp` with the Python `mcp` SDK client.

Usage: python_client.py SHELLGATE_BINARY WORK_DIR

The low-level `ClientSession` after `initialize` (schemas, structured content, live progress,
cancellation, job exits as log notifications and as updates of subscribed `job://` resources), then
the high-level `Client(mode="legacy")` through every feature of `sdk_features.py`.

Each check prints `ok <name>` or `FAIL <name>: <why>`; the last line is `N passed, N failed` and the
exit status is non-zero when any check failed.
"""

import os
import sys
import time

import anyio
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import sdk_features
from sdk_features import Checks, Person

results = []


def check(name, condition, why=""):
    results.append((name, bool(condition)))
    print(f"ok {name}" if condition else f"FAIL {name}: {why}", flush=True)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main(binary, work_dir):
    logs = []
    updated = []

    async def on_log(params):
        logs.append(params)

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    server = StdioServerParameters(
        command=binary,
        args=["mcp"],
        cwd=work_dir,
        env={"SHELLGATE_ARTIFACT_DIR": os.path.join(work_dir, "artifacts")},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session:
            init = await session.initialize()
            check("server_info", init.server_info.name == "shellgate", repr(init.server_info))

            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            check("list_tools", names == ["bash", "process", "artifact"], repr(names))
            bash = tools.tools[0]
            timeout = bash.input_schema["properties"]["timeout"]
            check("schema_default", timeout.get("default") == 300 and timeout.get("type") == "number", repr(timeout))

            hi = await session.call_tool("bash", {"command": "echo hi"})
            check("call_bash", not hi.is_error and text_of(hi) == "hi", repr(hi))
            check(
                "structured_content",
                hi.structured_content and hi.structured_content.get("exit_code") == 0,
                repr(hi.structured_content),
            )

            failed = await session.call_tool("bash", {"command": "exit 3"})
            check("is_error", failed.is_error and "Command exited with code 3" in text_of(failed), repr(failed))

            big = await session.call_tool("bash", {"command": "seq 1 300000"})
            uri = (big.structured_content or {}).get("artifact")
            check("artifact_made", uri and uri.startswith("artifact://"), repr(big.structured_content))
            listed = await session.list_resources()
            uris = [str(r.uri) for r in listed.resources]
            check("list_resources", uri in uris, repr(uris))
            read_back = await session.read_resource(uri)
            text = read_back.contents[0].text
            check(
                "read_resource",
                text.startswith("1\n2\n") and text.endswith("300000\n") and text.count("\n") == 300000,
                f"{len(text)} chars",
            )
            templates = await session.list_resource_templates()
            check(
                "resource_template",
                [t.uri_template for t in templates.resource_templates] == ["artifact://{id}", "job://{id}"],
                repr(templates),
            )

            progress = []

            async def on_progress(value, total, message):
                progress.append((time.monotonic(), value, message))

            started = time.monotonic()
            ticking = await session.call_tool(
                "bash",
                {"command": "for i in $(seq 1 20); do echo tick $i; sleep 0.1; done"},
                progress_callback=on_progress,
            )
            finished = time.monotonic()
            seen = "".join(m or "" for _, _, m in progress)
            check("progress_result", not ticking.is_error, repr(ticking))
            check("progress_count", len(progress) >= 5, f"{len(progress)} notifications")
            check("progress_text", seen == "".join(f"tick {i}\n" for i in range(1, 21)), repr(seen))
            check(
                "progress_live",
                progress and progress[0][0] - started < 1.0 and finished - progress[0][0] > 0.8,
                repr([(round(t - started, 2), v) for t, v, _ in progress]),
            )
            values = [v for _, v, _ in progress]
            check("progress_grows", values == sorted(set(values)), repr(values))

            # Cancelling the caller sends notifications/cancelled; the command must stop promptly.
            started = time.monotonic()
            with anyio.move_on_after(1.0) as scope:
                await session.call_tool("bash", {"command": "echo begun; sleep 30.75"})
            check("cancel_scope", scope.cancelled_caught, "the call returned before the cancel")
            check("cancel_prompt", time.monotonic() - started < 3.0, f"{time.monotonic() - started:.2f}s")
            await anyio.sleep(0.5)
            after = await session.call_tool("process", {"action": "list"})
            check("cancel_partial_output", "output so far: begun" in text_of(after), text_of(after))
            gone = await session.call_tool("bash", {"command": "pgrep -f 'sleep 30[.]75' || echo none"})
            check("cancel_stopped", text_of(gone).startswith("none"), text_of(gone))

            job = await session.call_tool("bash", {"command": "sleep 0.2; echo done", "background": True})
            job_id = (job.structured_content or {}).get("job_id")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(
                isinstance(l.data, dict) and l.data.get("job_id") == job_id for l in logs
            ):
                await anyio.sleep(0.05)
            exits = [l for l in logs if isinstance(l.data, dict) and l.data.get("event") == "job_exited"]
            check("job_exit_notification", any(l.data.get("job_id") == job_id for l in exits), repr(logs))

            # A subscribed job resource is announced as updated when the job ends.
            sub_job = await session.call_tool("bash", {"command": "sleep 0.3; echo sub", "background": True})
            sub_uri = f"job://{(sub_job.structured_content or {}).get('job_id')}"
            await session.subscribe_resource(sub_uri)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and sub_uri not in updated:
                await anyio.sleep(0.05)
            check("subscribed_job_updated", sub_uri in updated, repr(updated))
            job_text = (await session.read_resource(sub_uri)).contents[0].text
            check("job_resource_read", job_text.startswith("status: completed") and "sub" in job_text, job_text)

    await legacy_mode(binary, work_dir)
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed


async def legacy_mode(binary, work_dir):
    """The SDK's high-level `Client` forced onto the handshake (`mode="legacy"`): every feature."""
    check = Checks("legacy_", results, tag=1)
    person = Person()
    async with Client(sdk_features.server(binary, work_dir), mode="legacy", elicitation_callback=person) as client:
        check("version", client.protocol_version == "2025-11-25", client.protocol_version)
        check("server_info", client.server_info and client.server_info.name == "shellgate", repr(client.server_info))
        await sdk_features.run_all(client, person, work_dir, check)


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1], sys.argv[2]) else 0)
