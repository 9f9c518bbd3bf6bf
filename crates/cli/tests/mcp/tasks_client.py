"""Long runs as tasks: the Python `mcp` SDK client on protocol 2026-07-28 with the
`io.modelcontextprotocol/tasks` extension, against `shellgate mcp` with `auto_yield_ms = 500`.

Usage: tasks_client.py SHELLGATE_BINARY WORK_DIR

The SDK has no tasks client of its own, so this file declares the extension and claims the
`resultType: "task"` shape; its resolver polls `tasks/get` as a client would. Checked: a foreground
call that outlives `auto_yield_ms` answers a task, `tasks/get` reports it working (with the new
output) and then completed with the whole output; `tasks/cancel` ends another one as cancelled and
kills its process; an unknown task is -32602; `background: true` still answers a job id; and a
client without the extension gets today's `running` result with a job id.

Each check prints `ok <name>` or `FAIL <name>: <why>`; the last line is `N passed, N failed` and the
exit status is non-zero when any check failed.
"""

import os
import subprocess
import sys
import time
from typing import Literal

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import Request, RequestParams, Result
from pydantic import ConfigDict

MODERN = "2026-07-28"
results = []
seen_states = []


def check(name, condition, why=""):
    results.append((name, bool(condition)))
    print(f"ok {name}" if condition else f"FAIL {name}: {why}", flush=True)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


class TaskHandle(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


class Loose(Result):
    model_config = ConfigDict(extra="allow")


class TaskIdParams(RequestParams):
    task_id: str


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams


class CancelTask(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams


async def get_task(session, task_id):
    answer = await session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), Loose)
    return answer.model_dump(by_alias=True)


async def poll_to_end(handle, ctx):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = await get_task(ctx.session, handle.task_id)
        seen_states.append(state)
        if state.get("status") != "working":
            return types.CallToolResult.model_validate(state["result"])
        await anyio.sleep((state.get("pollIntervalMs") or 1000) / 2000)
    raise TimeoutError(f"task {handle.task_id} still working")


class Tasks(ClientExtension):
    identifier = "io.modelcontextprotocol/tasks"

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=poll_to_end)]


def server(binary, work_dir):
    config = os.path.join(work_dir, "tasks.toml")
    with open(config, "w") as f:
        f.write("auto_yield_ms = 500\n")
    return StdioServerParameters(
        command=binary,
        args=["mcp", "--config", config],
        cwd=work_dir,
        env={"SHELLGATE_ARTIFACT_DIR": os.path.join(work_dir, "artifacts")},
    )


def running(pattern):
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0


async def with_tasks(binary, work_dir):
    async with Client(server(binary, work_dir), mode=MODERN, extensions=[Tasks()]) as client:
        done = await client.call_tool("bash", {"command": "echo one; sleep 1.5; echo two"})
        check("task_states_seen", any(s.get("status") == "working" for s in seen_states), repr(seen_states))
        check("task_completed", seen_states and seen_states[-1].get("status") == "completed", repr(seen_states))
        check("task_result_whole_output", text_of(done).startswith("one\ntwo\n") and not done.is_error, repr(done))
        check("task_result_exit", (done.structured_content or {}).get("exit_code") == 0, repr(done.structured_content))

        handle = await client.session.call_tool(
            "bash", {"command": "echo begun; sleep 30.25"}, allow_claimed=True
        )
        check("task_handle", isinstance(handle, TaskHandle) and handle.status == "working", repr(handle))
        check("task_running_before_cancel", running("sleep 30[.]25"), "the command is not running")
        await client.session.send_request(CancelTask(params=TaskIdParams(task_id=handle.task_id)), Loose)
        deadline = time.monotonic() + 10
        state = {}
        while time.monotonic() < deadline:
            state = await get_task(client.session, handle.task_id)
            if state.get("status") != "working":
                break
            await anyio.sleep(0.1)
        check("task_cancelled", state.get("status") == "cancelled", repr(state))
        again = await get_task(client.session, handle.task_id)
        check("task_cancelled_stays", again.get("status") == "cancelled", repr(again))
        check("task_cancel_killed_tree", not running("sleep 30[.]25"), "the command still runs")

        try:
            await get_task(client.session, "no-such-task")
            check("unknown_task", False, "an unknown task answered")
        except MCPError as e:
            check("unknown_task", e.code == -32602, repr(e))

        job = await client.call_tool("bash", {"command": "sleep 1; echo bg", "background": True})
        check(
            "background_stays_a_job",
            (job.structured_content or {}).get("status") == "running" and (job.structured_content or {}).get("job_id"),
            repr(job),
        )


async def without_tasks(binary, work_dir):
    async with Client(server(binary, work_dir), mode=MODERN) as client:
        yielded = await client.call_tool("bash", {"command": "echo early; sleep 1.5; echo late"})
        fields = yielded.structured_content or {}
        check("no_extension_running", fields.get("status") == "running" and fields.get("job_id"), repr(yielded))
        check("no_extension_output_so_far", text_of(yielded).startswith("early"), repr(yielded))


async def main(binary, work_dir):
    await with_tasks(binary, work_dir)
    await without_tasks(binary, work_dir)
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1], sys.argv[2]) else 0)
