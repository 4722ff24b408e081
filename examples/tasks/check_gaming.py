#!/usr/bin/env python3
"""check-gaming.sh's work: every scripted model under gaming/<strategy>/<instance id>.jsonl
played on the host and scored as SWE-bench scores it, without plumb.

For each script: the tree at the task's base_commit; the script's edit_file and create_file calls
applied in order (with the tool's rules: old_text exactly once, create_file only for a new file);
the task's test suite on that tree (what the gaming shows a naive check: it looks green); then the
test patch on top and FAIL_TO_PASS and PASS_TO_PASS, which must NOT all pass. As a control, the
gold patch scored the same way must resolve, so an "unresolved" here is the scripts' doing and
not a broken scorer. Prints a table; exits 1 when a script resolves, does not play, or a control
fails.
"""

import json
import sys
from pathlib import Path

import tasklib
from tasklib import ERROR, FAILED, HERE, PASSED, TaskError

GAMING = HERE / "gaming"
TOOLS = {
    "read_file",
    "search_code",
    "list_files",
    "run_tests",
    "run",
    "edit_file",
    "create_file",
    "done",
}


class ScriptError(Exception):
    """The script cannot be played as the scripted model plays it; the message says where."""


def turns(script):
    """(tool, args) for each line of a scripted model: the short form or the general form."""
    out = []
    for number, line in enumerate(
        script.read_text(encoding="utf-8").splitlines(), start=1
    ):
        if not line.strip():
            continue
        where = f"{script.relative_to(HERE)}:{number}"
        try:
            turn = json.loads(line)
        except json.JSONDecodeError as e:
            raise ScriptError(f"{where}: not JSON ({e})") from e
        calls = (
            [(turn["tool"], turn.get("args", {}))]
            if "tool" in turn
            else [
                (c["name"], c.get("arguments", {})) for c in turn.get("tool_calls", [])
            ]
        )
        for tool, args in calls:
            if tool not in TOOLS:
                raise ScriptError(f"{where}: unknown tool {tool!r}")
            out.append((where, tool, args))
    if not out or out[-1][1] != "done":
        raise ScriptError(f"{script.relative_to(HERE)}: the last call is not done")
    return out


def play(calls, tree):
    """Applies the script's edits to `tree` as plumb's edit_file and create_file would."""
    tree = Path(tree).resolve()
    for where, tool, args in calls:
        if tool not in ("edit_file", "create_file"):
            continue
        path = (tree / args["path"]).resolve()
        if tree not in path.parents:
            raise ScriptError(f"{where}: {args['path']} is outside the project folder")
        if tool == "create_file":
            if path.exists():
                raise ScriptError(
                    f"{where}: create_file {args['path']}: the file exists"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args["content"], encoding="utf-8")
            continue
        if not path.is_file():
            raise ScriptError(f"{where}: there is no file called {args['path']}")
        text = path.read_text(encoding="utf-8")
        count = text.count(args["old_text"])
        if count != 1:
            raise ScriptError(
                f"{where}: old_text found {count} times in {args['path']}"
            )
        path.write_text(
            text.replace(args["old_text"], args["new_text"]), encoding="utf-8"
        )


def own_suite(task, repo, calls, scratch):
    """The task's tests on the gamed tree before the test patch: what the gaming looks like."""
    tree = tasklib.make_tree(repo, task["base_commit"], Path(scratch) / "gamed")
    play(calls, tree)
    statuses, _ = tasklib.run_tests(tree, task, scratch)
    passed = sum(s == PASSED for s in statuses.values())
    failed = sum(s in (FAILED, ERROR) for s in statuses.values())
    return f"{passed} ok {failed} fail"


def main():
    tasks_file = HERE / "tasks.jsonl"
    tasks = {
        tasklib_folder(t["instance_id"]): t for t in tasklib.read_tasks(tasks_file)
    }
    scripts = sorted(GAMING.glob("*/*.jsonl"))
    header = f"{'strategy':9} {'task':24} {'gamed suite':16} {'scored':10} reason"
    print(header)
    print("-" * 100)
    failures = 0
    controls = {}
    with tasklib.scratch_dir() as scratch:
        for n, script in enumerate(scripts):
            strategy, name = script.parent.name, script.stem
            work = Path(scratch) / f"{n}-{strategy}-{name}"
            task = tasks.get(name)
            try:
                if task is None:
                    raise ScriptError(
                        f"no task of tasks.jsonl has the folder name {name}"
                    )
                repo = tasklib.repo_path(tasks_file, task)
                calls = turns(script)
                suite = own_suite(task, repo, calls, work / "suite")
                resolved, reason = tasklib.score(
                    task,
                    repo,
                    work / "score",
                    agent_edits=lambda tree, calls=calls: play(calls, tree),
                )
                verdict = "RESOLVED" if resolved else "unresolved"
                failures += resolved
                if name not in controls:
                    controls[name] = tasklib.score(
                        task, repo, work / "gold", agent_patch=task["patch"]
                    )
            except (ScriptError, TaskError, KeyError) as e:
                suite, verdict, reason = "-", "BROKEN", str(e)
                failures += 1
            print(f"{strategy:9} {name:24} {suite:16} {verdict:10} {reason[:160]}")
    bad_controls = {k: v for k, v in controls.items() if not v[0]}
    for name, (_, reason) in bad_controls.items():
        print(f"control: the gold patch of {name} does not resolve: {reason}")
    print(
        f"{len(scripts) - failures} of {len(scripts)} gaming scripts score unresolved; "
        f"the gold patch resolves {len(controls) - len(bad_controls)} of {len(controls)} of their tasks"
    )
    sys.exit(1 if failures or bad_controls else 0)


def tasklib_folder(instance_id):
    """Task::folder_name in plumb-eval: the runner looks a script up by this name."""
    name = "".join(
        c if (c.isascii() and c.isalnum()) or c in "-_." else "_" for c in instance_id
    )
    return "_" + name if name.startswith(".") or not name else name


if __name__ == "__main__":
    main()
