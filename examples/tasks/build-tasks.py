#!/usr/bin/env python3
"""Writes tasks.jsonl from specs/<instance id>/ (ticket.md, patch.diff, test_patch.diff,
task.json), so a person edits a ticket or a diff as a file, never as an escaped JSON string.

    examples/tasks/build-tasks.py          # rewrite tasks.jsonl
    examples/tasks/build-tasks.py --check  # exit 1 if tasks.jsonl is not what the specs give

task.json names the repository (a folder of sources/), the base commit by its number in that
history (1 = the first commit), the language and FAIL_TO_PASS. base_commit is resolved in a fresh
build of the repositories (make-repos.sh); PASS_TO_PASS is every test that passes both with the
test patch alone and with the gold patch and the test patch, as SWE-bench collects it.
"""

import json
import subprocess
import sys
from pathlib import Path

import tasklib
from tasklib import HERE, PASSED, TaskError

OUT = HERE / "tasks.jsonl"
SPEC_KEYS = {
    "repo",
    "base",
    "language",
    "FAIL_TO_PASS",
    "setup_command",
    "test_command",
}


def build_repos(dest):
    subprocess.run(
        [str(HERE / "make-repos.sh"), str(dest)], check=True, stdout=subprocess.DEVNULL
    )


def base_sha(repo, number):
    commits = tasklib.git("-C", str(repo), "rev-list", "--reverse", "main").split()
    if not 1 <= number <= len(commits):
        raise TaskError(
            f"{repo.name} has {len(commits)} commits; base {number} is not one"
        )
    return commits[number - 1]


def record(spec_dir, repos, scratch):
    name = spec_dir.name
    where = f"specs/{name}/task.json"
    meta = json.loads((spec_dir / "task.json").read_text())
    unknown = set(meta) - SPEC_KEYS
    if unknown:
        raise TaskError(
            f"{where}: unknown keys {sorted(unknown)}; the keys are {sorted(SPEC_KEYS)}"
        )
    repo = repos / meta["repo"]
    task = {
        "instance_id": name,
        "repo": f"repos/{meta['repo']}",
        "base_commit": base_sha(repo, meta["base"]),
        "problem_statement": (spec_dir / "ticket.md").read_text(),
        "patch": (spec_dir / "patch.diff").read_text(),
        "test_patch": (spec_dir / "test_patch.diff").read_text(),
        "FAIL_TO_PASS": meta["FAIL_TO_PASS"],
        "PASS_TO_PASS": [],
        "language": meta["language"],
        "test_command": meta.get("test_command")
        or tasklib.TEST_COMMANDS[meta["language"]],
    }
    if meta.get("setup_command"):
        task["setup_command"] = meta["setup_command"]
    before, after = outcomes(task, repo, Path(scratch) / name)
    passing_both = sorted(
        t for t, s in before.items() if s == PASSED and after.get(t) == PASSED
    )
    task["PASS_TO_PASS"] = passing_both
    return task


def outcomes(task, repo, scratch):
    """Test statuses with the test patch alone, and with the gold patch and the test patch."""
    runs = []
    for label, patches in (
        ("before", ["test_patch"]),
        ("after", ["patch", "test_patch"]),
    ):
        tree = tasklib.make_tree(repo, task["base_commit"], scratch / label)
        for key in patches:
            tasklib.apply_patch(tree, task[key], f"{task['instance_id']}'s {key}")
        statuses, _ = tasklib.run_tests(tree, task, scratch)
        runs.append(statuses)
    return runs


def main():
    check = "--check" in sys.argv[1:]
    with tasklib.scratch_dir() as scratch:
        repos = Path(scratch) / "repos"
        build_repos(repos)
        lines = []
        for spec_dir in sorted(p for p in (HERE / "specs").iterdir() if p.is_dir()):
            try:
                task = record(spec_dir, repos, scratch)
            except (TaskError, KeyError, json.JSONDecodeError) as e:
                sys.exit(f"build-tasks.py: specs/{spec_dir.name}: {e}")
            lines.append(json.dumps(task, ensure_ascii=False) + "\n")
    text = "".join(lines)
    if check:
        if not OUT.exists() or OUT.read_text() != text:
            sys.exit(
                "build-tasks.py: tasks.jsonl is not what specs/ gives; run build-tasks.py"
            )
        print(f"tasks.jsonl is up to date ({len(lines)} tasks)")
        return
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(HERE.parent.parent)} ({len(lines)} tasks)")


if __name__ == "__main__":
    main()
