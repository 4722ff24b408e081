"""What build-tasks.py, check.sh and check-gaming.sh share: trees at a commit, patches, test runs
read the way SWE-bench's log parsers read them. Host tools only (git, python3 + pytest, cargo);
no plumb.
"""

import json
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST_COMMANDS = {
    "python": "python3 -m pytest -rA",
    # Without --no-fail-fast cargo stops at the first test binary that fails, and the tests of
    # the binaries after it (tests/*.rs) are missing from the log instead of passing.
    "rust": "cargo test --no-fail-fast",
}
# A status as the scorer reads it; anything not "passed" (or an id missing from the log) is a
# failure for SWE-bench.
PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
# Each test run's time limit: every test of the set runs in seconds, so a minute means a hang.
RUN_TIMEOUT = 120
# git with no user or system configuration, as make-repos.sh runs it.
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


class TaskError(Exception):
    """A task (or its repository) cannot be checked as written; the message names it."""


def git(*args, cwd=None, input=None, env=None):
    full_env = dict(os.environ, **GIT_ENV, **(env or {}))
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        check=False,
    )
    if done.returncode != 0:
        raise TaskError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def read_tasks(path):
    """The records of a tasks.jsonl, each with its 1-based line as `_line`."""
    tasks = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise TaskError(f"{path}:{number}: not JSON ({e})") from e
            record["_line"] = number
            tasks.append(record)
    return tasks


def repo_path(tasks_file, task):
    return (Path(tasks_file).resolve().parent / task["repo"]).resolve()


def make_tree(repo, commit, dest):
    """The tree at `commit` in `dest`, with no history (git archive, as the runner must do)."""
    dest = Path(dest)
    # Never a folder used before: cargo would take files with the archive's old mtimes for
    # unchanged and run a stale build.
    dest.mkdir(parents=True, exist_ok=False)
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit],
        capture_output=True,
        env=dict(os.environ, **GIT_ENV),
        check=False,
    )
    if archive.returncode != 0:
        raise TaskError(
            f"git archive {commit} in {repo}: {archive.stderr.decode().strip()}"
        )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def apply_patch(tree, patch, what):
    """Applies a unified diff in `tree` (git apply, outside any repository); raises with `what`
    named when it does not apply."""
    if not patch:
        return
    done = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", "-"],
        cwd=tree,
        input=patch,
        capture_output=True,
        text=True,
        env=dict(os.environ, **GIT_ENV),
        check=False,
    )
    if done.returncode != 0:
        raise TaskError(f"the {what} does not apply: {done.stderr.strip()}")


def run_tests(tree, task, scratch):
    """Runs the task's test command in `tree`; returns ({test id: status}, log text)."""
    command = task.get("test_command") or TEST_COMMANDS[task["language"]]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CARGO_TERM_COLOR="never")
    # The crate's build goes to the scratch folder, not into the tree; no debug info or
    # incremental state, which only slow a one-off build down.
    env.update(
        CARGO_TARGET_DIR=str(Path(scratch) / "target"),
        CARGO_INCREMENTAL="0",
        CARGO_PROFILE_DEV_DEBUG="0",
    )
    try:
        done = subprocess.run(
            shlex.split(command),
            cwd=tree,
            capture_output=True,
            text=True,
            env=env,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise TaskError(f"`{command}` ran past {RUN_TIMEOUT} s in {tree}") from e
    log = done.stdout + done.stderr
    if command.split()[0] == "cargo":
        return parse_cargo(log), log
    return parse_pytest(log), log


def parse_pytest(log):
    """Statuses from `pytest -rA`'s short summary, as SWE-bench's parse_log_pytest reads them: the
    first word is the status, the second the id (so an id with a space is cut at the space, and
    a SKIPPED line's id is its `[N]` count, never a test id)."""
    words = {
        "PASSED": PASSED,
        "FAILED": FAILED,
        "ERROR": ERROR,
        "SKIPPED": SKIPPED,
        "XFAIL": SKIPPED,
        "XPASS": FAILED,
    }
    statuses = {}
    for line in log.splitlines():
        first = line.split(" ", 1)[0]
        if first not in words:
            continue
        if first == "FAILED" or first == "ERROR":
            line = line.replace(" - ", " ")
        parts = line.split()
        if len(parts) >= 2:
            statuses[parts[1]] = words[first]
    return statuses


CARGO_LINE = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)")


def parse_cargo(log):
    """Statuses from libtest's `test NAME ... ok|FAILED|ignored` lines (every test binary of the
    run; names are the function paths inside each binary)."""
    words = {"ok": PASSED, "FAILED": FAILED, "ignored": SKIPPED}
    statuses = {}
    for line in log.splitlines():
        m = CARGO_LINE.match(line)
        if m:
            statuses[m.group(1)] = words[m.group(2)]
    return statuses


def scratch_dir():
    return tempfile.TemporaryDirectory(prefix="plumb-tasks-")


def score(task, repo, scratch, agent_edits=None, agent_patch=None):
    """SWE-bench's verdict on an attempt, on the host: the tree at base_commit, the agent's change
    (`agent_edits(tree)` or `agent_patch`), then the test patch on top, then FAIL_TO_PASS and
    PASS_TO_PASS. Returns (resolved, reason)."""
    tree = make_tree(repo, task["base_commit"], Path(scratch) / "score-tree")
    if agent_edits is not None:
        agent_edits(tree)
    try:
        apply_patch(tree, agent_patch, "agent's patch")
        apply_patch(
            tree, task.get("test_patch"), "test patch (on top of the agent's change)"
        )
    except TaskError as e:
        return False, str(e)
    statuses, _ = run_tests(tree, task, scratch)
    bad = []
    for group in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        for test in task[group]:
            status = statuses.get(test, "missing")
            if status != PASSED:
                bad.append(f"{test} {status}")
    if bad:
        return False, f"{len(bad)} not passing: " + "; ".join(bad[:3])
    return True, "resolved"
