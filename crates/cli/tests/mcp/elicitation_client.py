"""Answer `shellgate mcp` approvals through the Python `mcp` SDK client's elicitation callback.

Usage: elicitation_client.py SHELLGATE_BINARY WORK_DIR

A `bash` call needing approval (`ask: "always"`) makes the server ask the person through
`elicitation/create`; the callback answers as a person would. Checked: allow-once runs the command
and the call's result is the run's; decline and cancel block it; an error from the client leaves the
approval pending; a client without the callback (no `elicitation` capability) gets the pending
result, with no `approve` tool offered; an approved run streams progress to the call's token.

Each check prints `ok <name>` or `FAIL <name>: <why>`; the last line is `N passed, N failed` and the
exit status is non-zero when any check failed.
"""

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

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


async def with_person(binary, work_dir):
    """A client whose person answers each question with the next of `answers`."""
    asked = []
    answers = []

    async def person(context, params):
        asked.append(params)
        return answers.pop(0)

    async with stdio_client(server(binary, work_dir)) as (read, write):
        async with ClientSession(read, write, elicitation_callback=person) as session:
            await session.initialize()

            marker = os.path.join(work_dir, "ran-once")
            command = f"touch '{marker}'; echo allowed"
            answers.append(types.ElicitResult(action="accept", content={"decision": "allow-once"}))
            ran = await session.call_tool("bash", {"command": command, "ask": "always"})
            check("allow_once_asked", len(asked) == 1, repr(asked))
            message = asked[0].message if asked else ""
            check(
                "message_names_the_request",
                "Command:\n" in message
                and command in message
                and "Directory: " in message
                and "Host: local" in message
                and "Reason: " in message,
                message,
            )
            schema = asked[0].requested_schema if asked else {}
            choices = [c.get("const") for c in schema.get("properties", {}).get("decision", {}).get("oneOf", [])]
            check("schema_offers_decisions", "allow-once" in choices and "deny" in choices, repr(schema))
            check("allow_once_ran", not ran.is_error and text_of(ran).startswith("allowed\n"), repr(ran))
            check("allow_once_status", status_of(ran) == "completed", repr(ran.structured_content))
            check("allow_once_marker", os.path.exists(marker), marker)

            # The approved run's output reaches the call's progress token while it runs.
            progress = []

            async def on_progress(value, total, message):
                progress.append(message or "")

            answers.append(types.ElicitResult(action="accept", content={"decision": "allow-once"}))
            ticking = await session.call_tool(
                "bash",
                {"command": "for i in 1 2 3 4 5; do echo tick $i; sleep 0.2; done", "ask": "always"},
                progress_callback=on_progress,
            )
            check("approved_run_completed", status_of(ticking) == "completed", repr(ticking))
            seen = "".join(progress)
            check(
                "approved_run_progress",
                len(progress) >= 2 and seen == "".join(f"tick {i}\n" for i in range(1, 6)),
                repr(progress),
            )

            for action in ["decline", "cancel"]:
                marker = os.path.join(work_dir, f"never-{action}")
                answers.append(types.ElicitResult(action=action))
                blocked = await session.call_tool(
                    "bash", {"command": f"touch '{marker}'", "ask": "always"}
                )
                check(f"{action}_blocked", blocked.is_error and status_of(blocked) == "blocked", repr(blocked))
                check(f"{action}_did_not_run", not os.path.exists(marker), marker)

            answers.append(types.ErrorData(code=types.INVALID_REQUEST, message="no one is here"))
            pending = await session.call_tool("bash", {"command": "echo later", "ask": "always"})
            check("client_error_pending", status_of(pending) == "approval_pending", repr(pending))
            check("all_questions_asked", len(asked) == 5 and not answers, f"{len(asked)} asked, {answers!r} left")


async def without_person(binary, work_dir):
    async with stdio_client(server(binary, work_dir)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            check("no_approve_tool", "approve" not in names, repr(names))
            marker = os.path.join(work_dir, "never-unasked")
            pending = await session.call_tool("bash", {"command": f"touch '{marker}'", "ask": "always"})
            check("no_capability_pending", status_of(pending) == "approval_pending", repr(pending))
            check("no_capability_text", "Approval required" in text_of(pending), text_of(pending))
            check("no_capability_did_not_run", not os.path.exists(marker), marker)


async def main(binary, work_dir):
    await with_person(binary, work_dir)
    await without_person(binary, work_dir)
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1], sys.argv[2]) else 0)
