"""Drive `shellgate mcp` with the Python `mcp` SDK client on protocol 2026-07-28 (no handshake).

Usage: modern_client.py SHELLGATE_BINARY WORK_DIR

Checked: `server/discover` (mode "auto") picks 2026-07-28; with the version pinned, the tools and
their annotations, a call, a failing command as isError, progress, an artifact listed and read, an
unknown resource as -32602; an approval asked in an `input_required` result and answered through
the elicitation callback (allow-once runs, decline blocks), a client without elicitation gets
`approval_pending`; and the attacks on the sealed request state: a replayed answer, an altered
state and a state moved to other arguments each run nothing. No log notification arrives (none
was opted into).

Each check prints `ok <name>` or `FAIL <name>: <why>`; the last line is `N passed, N failed` and the
exit status is non-zero when any check failed.
"""

import os
import sys
import time

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

MODERN = "2026-07-28"
results = []


def check(name, condition, why=""):
    results.append((name, bool(condition)))
    print(f"ok {name}" if condition else f"FAIL {name}: {why}", flush=True)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def status_of(result):
    return (result.structured_content or {}).get("status")


def server(binary, work_dir):
    return StdioServerParameters(
        command=binary,
        args=["mcp"],
        cwd=work_dir,
        env={
            "SHELLGATE_ARTIFACT_DIR": os.path.join(work_dir, "artifacts"),
            "SHELLGATE_APPROVALS_FILE": os.path.join(work_dir, "approvals.toml"),
        },
    )


async def discovered(binary, work_dir):
    async with Client(server(binary, work_dir), mode="auto") as client:
        check("discover_version", client.protocol_version == MODERN, client.protocol_version)
        info = client.server_info
        check("discover_server_info", info is not None and info.name == "shellgate", repr(info))


async def tools_and_artifacts(client, work_dir):
    tools = await client.list_tools()
    by_name = {t.name: t for t in tools.tools}
    check("list_tools", list(by_name) == ["bash", "process", "artifact"], repr(list(by_name)))
    bash = by_name["bash"].annotations
    check(
        "bash_annotations",
        bash and not bash.read_only_hint and bash.destructive_hint and not bash.idempotent_hint and bash.open_world_hint,
        repr(bash),
    )
    process = by_name["process"].annotations
    check("process_not_read_only", process and process.read_only_hint is False, repr(process))
    artifact = by_name["artifact"].annotations
    check("artifact_read_only", artifact and artifact.read_only_hint and artifact.open_world_hint is False, repr(artifact))

    hi = await client.call_tool("bash", {"command": "echo hi"})
    check("call_bash", not hi.is_error and text_of(hi) == "hi", repr(hi))
    check("result_type", getattr(hi, "result_type", None) == "complete", repr(hi))
    failed = await client.call_tool("bash", {"command": "exit 3"})
    check("is_error", failed.is_error and "Command exited with code 3" in text_of(failed), repr(failed))

    progress = []

    async def on_progress(value, total, message):
        progress.append(message or "")

    ticking = await client.call_tool(
        "bash",
        {"command": "for i in $(seq 1 10); do echo tick $i; sleep 0.1; done"},
        progress_callback=on_progress,
    )
    check("progress_result", not ticking.is_error, repr(ticking))
    check("progress_text", "".join(progress) == "".join(f"tick {i}\n" for i in range(1, 11)), repr(progress))

    big = await client.call_tool("bash", {"command": "seq 1 300000"})
    uri = (big.structured_content or {}).get("artifact")
    check("artifact_made", uri and uri.startswith("artifact://"), repr(big.structured_content))
    listed = await client.list_resources()
    check("list_resources", uri in [str(r.uri) for r in listed.resources], repr(listed))
    read_back = await client.read_resource(uri)
    text = read_back.contents[0].text
    check("read_resource", text.startswith("1\n2\n") and text.endswith("300000\n"), f"{len(text)} chars")
    try:
        await client.read_resource("artifact://999999999")
        check("unknown_resource", False, "read an artifact that does not exist")
    except MCPError as e:
        check("unknown_resource", e.code == -32602, repr(e))

    job = await client.call_tool("bash", {"command": "sleep 0.3; echo job done", "background": True})
    job_id = (job.structured_content or {}).get("job_id")
    check("background_job", job_id and not job.is_error, repr(job))
    deadline = time.monotonic() + 10
    polled, seen = None, ""
    while time.monotonic() < deadline:
        polled = await client.call_tool("process", {"action": "poll", "job_id": job_id, "wait_ms": 1000})
        seen += (polled.structured_content or {}).get("output") or ""
        if status_of(polled) != "running":
            break
    check("background_polled_to_exit", status_of(polled) == "completed" and seen == "job done\n", f"{seen!r} {polled!r}")


async def job_exit_through_listen(client):
    """A background job's end reaches a 2026-07-28 client as a resource update on `job://<id>`."""
    job = await client.call_tool("bash", {"command": "sleep 0.5; echo listened", "background": True})
    job_id = (job.structured_content or {}).get("job_id")
    uri = f"job://{job_id}"
    events = []
    async with client.listen(resource_subscriptions=[uri]) as sub:
        check("listen_honored", list(sub.honored.resource_subscriptions or []) == [uri], repr(sub.honored))
        with anyio.move_on_after(10):
            async for event in sub:
                events.append(event)
                break
    check("listen_job_exit", [getattr(e, "uri", None) for e in events] == [uri], repr(events))
    read = await client.read_resource(uri)
    text = read.contents[0].text
    check("job_resource_read", text.startswith("status: completed") and "listened" in text, text)


async def approvals(binary, work_dir):
    asked = []
    answers = []

    async def person(context, params):
        asked.append(params)
        return answers.pop(0)

    async with Client(server(binary, work_dir), mode=MODERN, elicitation_callback=person) as client:
        marker = os.path.join(work_dir, "modern-ran-once")
        command = f"touch '{marker}'; echo allowed"
        answers.append(types.ElicitResult(action="accept", content={"decision": "allow-once"}))
        ran = await client.call_tool("bash", {"command": command, "ask": "always"})
        check("mrtr_asked", len(asked) == 1 and command in asked[0].message, repr(asked))
        check("mrtr_allow_once_ran", not ran.is_error and text_of(ran).startswith("allowed"), repr(ran))
        check("mrtr_marker", os.path.exists(marker), marker)

        never = os.path.join(work_dir, "modern-never-declined")
        answers.append(types.ElicitResult(action="decline"))
        blocked = await client.call_tool("bash", {"command": f"touch '{never}'", "ask": "always"})
        check("mrtr_decline_blocked", blocked.is_error and status_of(blocked) == "blocked", repr(blocked))
        check("mrtr_decline_did_not_run", not os.path.exists(never), never)
        await attacks(client.session, work_dir)

    async with Client(server(binary, work_dir), mode=MODERN) as client:
        never = os.path.join(work_dir, "modern-never-unasked")
        pending = await client.call_tool("bash", {"command": f"touch '{never}'", "ask": "always"})
        check("no_elicitation_pending", status_of(pending) == "approval_pending", repr(pending))
        check("no_elicitation_did_not_run", not os.path.exists(never), never)


async def attacks(session, work_dir):
    """The retry loop driven by hand, as a model that sees the state could drive it."""
    allow = {"approval": {"action": "accept", "content": {"decision": "allow-once"}}}
    counter = os.path.join(work_dir, "modern-runs")
    args = {"command": f"echo run >> '{counter}'", "ask": "always"}

    def runs():
        return open(counter).read().count("run") if os.path.exists(counter) else 0

    first = await session.call_tool("bash", args, allow_input_required=True)
    check("manual_input_required", isinstance(first, types.InputRequiredResult) and first.request_state, repr(first))
    state = first.request_state
    done = await session.call_tool("bash", args, input_responses=allow, request_state=state, allow_input_required=True)
    check("manual_retry_ran", isinstance(done, types.CallToolResult) and not done.is_error and runs() == 1, repr(done))

    replay = await session.call_tool("bash", args, input_responses=allow, request_state=state, allow_input_required=True)
    check("replay_refused", replay.is_error and status_of(replay) == "refused", repr(replay))
    check("replay_did_not_run", runs() == 1, f"{runs()} runs")

    second = await session.call_tool("bash", args, allow_input_required=True)
    altered = second.request_state[:-2] + ("AA" if not second.request_state.endswith("AA") else "BB")
    forged = await session.call_tool("bash", args, input_responses=allow, request_state=altered, allow_input_required=True)
    check("forged_refused", forged.is_error and status_of(forged) == "refused", repr(forged))

    swapped_marker = os.path.join(work_dir, "modern-never-swapped")
    other = {"command": f"touch '{swapped_marker}'", "ask": "always"}
    swapped = await session.call_tool(
        "bash", other, input_responses=allow, request_state=second.request_state, allow_input_required=True
    )
    check("other_arguments_refused", swapped.is_error and status_of(swapped) == "refused", repr(swapped))
    check("attacks_ran_nothing", runs() == 1 and not os.path.exists(swapped_marker), f"{runs()} runs")


async def main(binary, work_dir):
    logs = []

    async def on_log(params):
        logs.append(params)

    await discovered(binary, work_dir)
    async with Client(server(binary, work_dir), mode=MODERN, logging_callback=on_log) as client:
        check("pinned_version", client.protocol_version == MODERN, client.protocol_version)
        await tools_and_artifacts(client, work_dir)
        await job_exit_through_listen(client)
        await anyio.sleep(0.3)
    check("no_unsolicited_logs", not logs, repr(logs))
    await approvals(binary, work_dir)
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1], sys.argv[2]) else 0)
