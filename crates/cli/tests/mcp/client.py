"""Drives `plumb mcp` with the reference MCP client (the `mcp` package from PyPI) for plumb's
CLI tests (crates/cli/tests/suite/mcp/), which check what it prints.

    client.py SCENARIO JSON

JSON holds `server`: either {"stdio": {"command", "args", "env", "cwd"}} or {"url": URL}, plus
what the scenario needs. Every scenario prints one JSON object on stdout:

- `tools`: the listed tools (name, annotations, input and output schema), each schema checked
  as a JSON Schema (`schema_errors`).
- `call`: one `tools/call` of `name` with `arguments`, with the progress notifications that
  arrived, in order, and the result's structured content checked against the tool's output
  schema (`output_errors`); a protocol error is `{"error": message}`.
- `cancel_by_notification`: `coding_task`, cancelled by the client (MCP's cancel notification)
  at the first progress note of round 1 or later; then `coding_task_status` of the run until it
  has finished.
- `cancel_by_tool`: `coding_task`, and beside it `coding_task_cancel` of its run at the first
  progress note of round 1 or later; with `"second": true`, a second `coding_task` with the same
  arguments is called first, while the first still runs (`second`).
"""

import json
import sys
import time

import anyio
import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


def server_of(spec):
    if "url" in spec:
        return spec["url"]
    stdio = spec["stdio"]
    return StdioServerParameters(
        command=stdio["command"],
        args=stdio.get("args", []),
        env=stdio.get("env"),
        cwd=stdio.get("cwd"),
    )


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def tools(client):
    listed = (await client.list_tools()).tools
    rows = []
    for tool in listed:
        row = dump(tool)
        errors = []
        for key in ("inputSchema", "outputSchema"):
            schema = row.get(key)
            if schema is None:
                errors.append(f"{key} missing")
                continue
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as error:
                errors.append(f"{key}: {error.message}")
        row["schema_errors"] = errors
        rows.append(row)
    return {"tools": rows}


async def output_schema_of(client, name):
    for tool in (await client.list_tools()).tools:
        if tool.name == name:
            return dump(tool).get("outputSchema")
    return None


def check_output(schema, result):
    structured = result.get("structuredContent")
    if schema is None or structured is None or result.get("isError"):
        return []
    validator = jsonschema.Draft202012Validator(schema)
    return [error.message for error in validator.iter_errors(structured)]


async def call(client, name, arguments, progress=None):
    notes = [] if progress is None else progress

    async def on_progress(value, total, message):
        notes.append({"progress": value, "total": total, "message": message})

    schema = await output_schema_of(client, name)
    started = time.monotonic()
    try:
        result = await client.call_tool(name, arguments, progress_callback=on_progress)
    except MCPError as error:
        return {"error": str(error), "progress": notes}
    row = dump(result)
    row["progress"] = notes
    row["output_errors"] = check_output(schema, row)
    row["seconds"] = round(time.monotonic() - started, 1)
    return row


def run_of(notes):
    """The run id from the first progress note ("run R started on …")."""
    for note in notes:
        message = note.get("message") or ""
        if message.startswith("round 0: run "):
            return message.split()[3]
    return None


def past_round_zero(notes):
    return any(not (n.get("message") or "").startswith("round 0:") for n in notes)


async def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.1)
    return True


async def finished_status(client, run, seconds=120):
    deadline = time.monotonic() + seconds
    while True:
        status = await call(client, "coding_task_status", {"run": run})
        state = (status.get("structuredContent") or {}).get("state")
        if state == "finished" or time.monotonic() > deadline:
            return status
        await anyio.sleep(0.2)


async def cancel_by_notification(client, arguments):
    notes = []
    answer = {}
    async with anyio.create_task_group() as group:
        scope = anyio.CancelScope()

        async def task():
            with scope:
                answer["call"] = await call(client, "coding_task", arguments, notes)

        group.start_soon(task)
        answer["reached_round"] = await wait_for(lambda: past_round_zero(notes), 120)
        scope.cancel()
    run = run_of(notes)
    answer["run"] = run
    answer["progress"] = notes
    answer["status"] = await finished_status(client, run) if run else None
    return answer


async def cancel_by_tool(client, arguments, second=False):
    notes = []
    answer = {}
    async with anyio.create_task_group() as group:

        async def task():
            answer["call"] = await call(client, "coding_task", arguments, notes)

        group.start_soon(task)
        answer["reached_round"] = await wait_for(lambda: past_round_zero(notes), 120)
        run = run_of(notes)
        answer["run"] = run
        if second:
            answer["second"] = await call(client, "coding_task", arguments)
        answer["cancel"] = await call(client, "coding_task_cancel", {"run": run})
    answer["status"] = await call(client, "coding_task_status", {"run": answer["run"]})
    return answer


async def main():
    scenario, spec = sys.argv[1], json.loads(sys.argv[2])
    async with Client(server_of(spec["server"])) as client:
        if scenario == "tools":
            answer = await tools(client)
        elif scenario == "call":
            answer = await call(client, spec["name"], spec.get("arguments", {}))
        elif scenario == "cancel_by_notification":
            answer = await cancel_by_notification(client, spec["arguments"])
        elif scenario == "cancel_by_tool":
            answer = await cancel_by_tool(client, spec["arguments"], spec.get("second", False))
        else:
            raise SystemExit(f"unknown scenario {scenario}")
        answer["protocol_version"] = getattr(client, "protocol_version", None)
    print(json.dumps(answer))


anyio.run(main)
