"""The features every client of `shellgate mcp` relies on, driven through the Python `mcp` SDK's
high-level `Client` in whichever protocol era it was opened with (`mode="legacy"` for the
`initialize` handshake, `mode="2026-07-28"` for the current protocol).

Imported by `python_client.py` (legacy) and `modern_client.py` (2026-07-28); the era changes how
the server asks for an approval (`elicitation/create` against an `input_required` result) but not
what the client sees. Checked: the tools and their annotations; a call; a failing command as
isError; progress; an approval answered allow-once (runs) and declined (does not run); a background
job polled to its end and another one killed with its process tree; a foreground call cancelled by
the client, its command stopped and its output kept for the next result; an artifact listed, read
as a resource and read through the `artifact` tool.
"""

import os
import subprocess
import time

import anyio
from mcp import StdioServerParameters, types


class Checks:
    """Named checks with a common prefix; the caller prints the summary."""

    def __init__(self, prefix, results, tag):
        self.prefix = prefix
        self.results = results
        # A digit that sets this run's sleeping commands apart from other runs' in `pgrep`.
        self.tag = tag

    def __call__(self, name, condition, why=""):
        name = f"{self.prefix}{name}"
        self.results.append((name, bool(condition)))
        print(f"ok {name}" if condition else f"FAIL {name}: {why}", flush=True)


class Person:
    """The elicitation callback: records each question and answers with the next queued answer."""

    def __init__(self):
        self.asked = []
        self.answers = []

    async def __call__(self, context, params):
        self.asked.append(params)
        return self.answers.pop(0)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def status_of(result):
    return (result.structured_content or {}).get("status")


def server(binary, work_dir, config=None):
    args = ["mcp"] if config is None else ["mcp", "--config", config]
    return StdioServerParameters(
        command=binary,
        args=args,
        cwd=work_dir,
        env={
            "SHELLGATE_ARTIFACT_DIR": os.path.join(work_dir, "artifacts"),
            "SHELLGATE_APPROVALS_FILE": os.path.join(work_dir, "approvals.toml"),
        },
    )


def running(pattern):
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0


async def wait_until(condition, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        await anyio.sleep(0.05)
    return condition()


async def run_all(client, person, work_dir, check):
    """Every feature, on `client` (opened with `person` as its elicitation callback)."""
    await tools(client, check)
    await calls(client, check)
    await progress(client, check)
    await approvals(client, person, work_dir, check)
    await background_jobs(client, check)
    await cancelled_call(client, check)
    await artifacts(client, check)


async def tools(client, check):
    listed = await client.list_tools()
    by_name = {t.name: t for t in listed.tools}
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
    check(
        "artifact_read_only",
        artifact and artifact.read_only_hint and artifact.open_world_hint is False,
        repr(artifact),
    )


async def calls(client, check):
    hi = await client.call_tool("bash", {"command": "echo hi"})
    check("call_bash", not hi.is_error and text_of(hi) == "hi", repr(hi))
    check("structured_content", (hi.structured_content or {}).get("exit_code") == 0, repr(hi.structured_content))
    failed = await client.call_tool("bash", {"command": "echo partial; exit 3"})
    check(
        "is_error",
        failed.is_error and text_of(failed).startswith("partial") and "Command exited with code 3" in text_of(failed),
        repr(failed),
    )
    check("is_error_exit_code", (failed.structured_content or {}).get("exit_code") == 3, repr(failed))


async def progress(client, check):
    seen = []

    async def on_progress(value, total, message):
        seen.append((value, message or ""))

    ticking = await client.call_tool(
        "bash",
        {"command": "for i in $(seq 1 10); do echo tick $i; sleep 0.1; done"},
        progress_callback=on_progress,
    )
    check("progress_result", not ticking.is_error, repr(ticking))
    text = "".join(m for _, m in seen)
    check("progress_text", text == "".join(f"tick {i}\n" for i in range(1, 11)), repr(seen))
    values = [v for v, _ in seen]
    check("progress_grows", len(values) >= 2 and values == sorted(set(values)), repr(values))


async def approvals(client, person, work_dir, check):
    before = len(person.asked)
    marker = os.path.join(work_dir, f"{check.prefix}approved")
    command = f"touch '{marker}'; echo allowed"
    person.answers.append(types.ElicitResult(action="accept", content={"decision": "allow-once"}))
    ran = await client.call_tool("bash", {"command": command, "ask": "always"})
    asked = person.asked[before:]
    check("approval_asked", len(asked) == 1 and command in asked[0].message, repr(asked))
    check("approval_allow_once_ran", not ran.is_error and text_of(ran).startswith("allowed"), repr(ran))
    check("approval_marker", os.path.exists(marker), marker)

    never = os.path.join(work_dir, f"{check.prefix}declined")
    person.answers.append(types.ElicitResult(action="decline"))
    blocked = await client.call_tool("bash", {"command": f"touch '{never}'", "ask": "always"})
    check("approval_decline_blocked", blocked.is_error and status_of(blocked) == "blocked", repr(blocked))
    check("approval_decline_did_not_run", not os.path.exists(never), never)
    check("approval_all_answered", not person.answers, repr(person.answers))


async def background_jobs(client, check):
    job = await client.call_tool("bash", {"command": "sleep 0.3; echo job done", "background": True})
    job_id = (job.structured_content or {}).get("job_id")
    check("background_job", job_id and status_of(job) == "running" and not job.is_error, repr(job))
    deadline = time.monotonic() + 10
    polled, seen = None, ""
    while time.monotonic() < deadline:
        polled = await client.call_tool("process", {"action": "poll", "job_id": job_id, "wait_ms": 1000})
        seen += (polled.structured_content or {}).get("output") or ""
        if status_of(polled) != "running":
            break
    check(
        "background_polled_to_exit",
        status_of(polled) == "completed" and seen == "job done\n" and (polled.structured_content or {}).get("exit_code") == 0,
        f"{seen!r} {polled!r}",
    )

    pattern = f"sleep 30[.]{check.tag}1"
    sleeper = pattern.replace("[.]", ".")
    doomed = await client.call_tool(
        "bash", {"command": f"{sleeper} & {sleeper}; wait", "background": True}
    )
    doomed_id = (doomed.structured_content or {}).get("job_id")
    check("killed_job_started", doomed_id and await wait_until(lambda: running(pattern)), repr(doomed))
    killed = await client.call_tool("process", {"action": "kill", "job_id": doomed_id})
    check("killed_job_status", status_of(killed) == "killed", repr(killed))
    check("killed_job_tree_gone", await wait_until(lambda: not running(pattern)), "its processes still run")


async def cancelled_call(client, check):
    """Cancelling a call sends `notifications/cancelled`: the command's tree stops, and what it printed
    is kept for the next result (the cancelled call's own result is never read)."""
    pattern = f"sleep 31[.]{check.tag}5"
    sleeper = pattern.replace("[.]", ".")
    with anyio.move_on_after(1.5) as scope:
        await client.call_tool("bash", {"command": f"echo begun; {sleeper} & {sleeper}; wait"})
    check("cancel_scope", scope.cancelled_caught, "the call returned before the cancel")
    check("cancel_stopped_tree", await wait_until(lambda: not running(pattern)), "its processes still run")
    # Noted once the cancelled call has wound up: the next result that comes after says it.
    seen = ""
    for _ in range(100):
        after = await client.call_tool("process", {"action": "list"})
        seen += text_of(after)
        if "output so far: begun" in seen:
            break
        await anyio.sleep(0.05)
    check("cancel_partial_output_noted", "output so far: begun" in seen, seen)


async def artifacts(client, check):
    big = await client.call_tool("bash", {"command": "seq 1 300000"})
    uri = (big.structured_content or {}).get("artifact")
    check("artifact_made", uri and uri.startswith("artifact://"), repr(big.structured_content))
    listed = await client.list_resources()
    check("artifact_listed", uri in [str(r.uri) for r in listed.resources], repr(listed))
    read_back = await client.read_resource(uri)
    text = read_back.contents[0].text
    check(
        "artifact_resource_read",
        text.startswith("1\n2\n") and text.endswith("\n300000\n") and text.count("\n") == 300000,
        f"{len(text)} chars",
    )
    ranged = await client.call_tool("artifact", {"id": uri, "offset": 1000, "limit": 2})
    check(
        "artifact_tool_read",
        not ranged.is_error and text_of(ranged).startswith("1000\n1001\n[lines 1000-1001 of 300000"),
        text_of(ranged),
    )
