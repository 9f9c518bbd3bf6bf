"""Drive `shellgate mcp` with the Python `mcp` SDK client on protocol 2026-07-28 (no handshake).

Usage: modern_client.py SHELLGATE_BINARY WORK_DIR

Checked: `server/discover` (mode "auto") picks 2026-07-28; with the version pinned, every feature of
`sdk_features.py` (approvals are asked in `input_required` results and answered through the
elicitation callback), `resultType` and an unknown resource as -32602, a job's exit through
`subscriptions/listen`; a client without elicitation gets `approval_pending`; and the attacks on the sealed request state: a replayed answer, an altered
state and a state moved to other arguments each run nothing. No log notification arrives (none
was opted into).

Each check prints `ok <name>` or `FAIL <name>: <why>`; the last line is `N passed, N failed` and the
exit status is non-zero when any check failed.
"""

import os
import sys

import anyio
from mcp import Client, types
from mcp.shared.exceptions import MCPError

import sdk_features
from sdk_features import Checks, Person, server, status_of

MODERN = "2026-07-28"
results = []


def check(name, condition, why=""):
    Checks("", results, tag=0)(name, condition, why)


async def discovered(binary, work_dir):
    async with Client(server(binary, work_dir), mode="auto") as client:
        check("discover_version", client.protocol_version == MODERN, client.protocol_version)
        info = client.server_info
        check("discover_server_info", info is not None and info.name == "shellgate", repr(info))


async def modern_only(client):
    """What only 2026-07-28 has: `resultType` on results, -32602 for an unknown resource."""
    hi = await client.call_tool("bash", {"command": "echo hi"})
    check("result_type", getattr(hi, "result_type", None) == "complete", repr(hi))
    try:
        await client.read_resource("artifact://999999999")
        check("unknown_resource", False, "read an artifact that does not exist")
    except MCPError as e:
        check("unknown_resource", e.code == -32602, repr(e))


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


async def logs_when_asked(binary, work_dir):
    """A client that sets `log_level` asks for log messages in every request's `_meta`: a job's exit
    then comes as a notification with its next request (and in that request's result)."""
    logs = []

    async def on_log(params):
        logs.append(params)

    async with Client(server(binary, work_dir), mode=MODERN, log_level="info", logging_callback=on_log) as client:
        job = await client.call_tool("bash", {"command": "echo logged", "background": True})
        job_id = (job.structured_content or {}).get("job_id")
        noted = False
        for _ in range(100):
            later = await client.call_tool("bash", {"command": "true"})
            if any(job_id in n for n in (later.structured_content or {}).get("notices") or []):
                noted = True
                break
            await anyio.sleep(0.05)
        check("asked_exit_in_result", noted, repr(logs))
        exits = [l.data.get("job_id") for l in logs if l.logger == "shellgate" and isinstance(l.data, dict)]
        check("asked_exit_logged", exits == [job_id], repr(logs))


async def approvals(binary, work_dir):
    """The retry loop driven by hand, and a client that cannot ask."""
    async with Client(server(binary, work_dir), mode=MODERN, elicitation_callback=Person()) as client:
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
    person = Person()
    async with Client(server(binary, work_dir), mode=MODERN, logging_callback=on_log, elicitation_callback=person) as client:
        check("pinned_version", client.protocol_version == MODERN, client.protocol_version)
        await sdk_features.run_all(client, person, work_dir, Checks("modern_", results, tag=2))
        await modern_only(client)
        await job_exit_through_listen(client)
        await anyio.sleep(0.3)
    check("no_unsolicited_logs", not logs, repr(logs))
    await logs_when_asked(binary, work_dir)
    await approvals(binary, work_dir)
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1], sys.argv[2]) else 0)
