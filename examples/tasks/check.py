#!/usr/bin/env python3
"""check.sh's work: every task of tasks.jsonl checked on the host, as the scorer will score it.

For each task: the tree at base_commit (git archive, no history) with test_patch must fail every
FAIL_TO_PASS and pass every PASS_TO_PASS; with patch and test_patch every one must pass; the two
runs must give exactly those lists (no test missing from them, no id the logs do not show). It
also says whether the gold fix is already in a later commit of the repository (a harness that
copied the history would hand the agent the answer). Prints a table; exits 1 on any mismatch.
"""

import sys
from pathlib import Path

import tasklib
from tasklib import ERROR, FAILED, PASSED, TaskError


def fix_in_later_commit(repo, task):
    """The first later commit whose tree already holds the gold patch, or "-"."""
    later = tasklib.git(
        "-C", str(repo), "rev-list", "--reverse", f"{task['base_commit']}..main"
    ).split()
    for commit in later:
        index = Path(repo) / ".git" / "plumb-check-index"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            tasklib.git("-C", str(repo), "read-tree", commit, env=env)
            tasklib.git(
                "-C",
                str(repo),
                "apply",
                "--cached",
                "-R",
                "--check",
                "-",
                input=task["patch"],
                env=env,
            )
            return commit[:7]
        except TaskError:
            continue
        finally:
            index.unlink(missing_ok=True)
    return "-"


def check(task, tasks_file, scratch):
    """Returns (problems, columns) for one task."""
    repo = tasklib.repo_path(tasks_file, task)
    problems = []
    for field in (
        "instance_id",
        "repo",
        "base_commit",
        "problem_statement",
        "patch",
        "test_patch",
        "FAIL_TO_PASS",
        "PASS_TO_PASS",
        "language",
    ):
        if not task.get(field) and field != "PASS_TO_PASS":
            problems.append(f"line {task['_line']}: field {field} is missing or empty")
    if problems:
        return problems, {}
    if not (repo / ".git").exists():
        return [f"{task['repo']} is not built; run make-repos.sh"], {}
    work = Path(scratch) / task["instance_id"]
    runs = {}
    for label, patches in (
        ("before", ["test_patch"]),
        ("after", ["patch", "test_patch"]),
    ):
        tree = tasklib.make_tree(repo, task["base_commit"], work / label)
        for key in patches:
            tasklib.apply_patch(tree, task[key], key)
        runs[label], log = tasklib.run_tests(tree, task, work)
        (work / f"{label}.log").write_text(log)
    before, after = runs["before"], runs["after"]
    f2p, p2p = task["FAIL_TO_PASS"], task["PASS_TO_PASS"]
    for test in f2p:
        if before.get(test) not in (FAILED, ERROR):
            problems.append(
                f"FAIL_TO_PASS {test} is {before.get(test, 'missing')} before the fix"
            )
        if after.get(test) != PASSED:
            problems.append(
                f"FAIL_TO_PASS {test} is {after.get(test, 'missing')} after the fix"
            )
    for test in p2p:
        for label, statuses in runs.items():
            if statuses.get(test) != PASSED:
                problems.append(
                    f"PASS_TO_PASS {test} is {statuses.get(test, 'missing')} {label}"
                )
    # Every test that the fix turns from failing to passing is named, and so is every test that
    # passes throughout: lists that leave tests out score less than they claim to.
    turned = {t for t, s in after.items() if s == PASSED and before.get(t) != PASSED}
    steady = {t for t, s in after.items() if s == PASSED and before.get(t) == PASSED}
    if turned != set(f2p):
        problems.append(
            f"the fix turns {sorted(turned)} to passing; FAIL_TO_PASS is {f2p}"
        )
    if steady != set(p2p):
        problems.append(
            f"PASS_TO_PASS differs from the tests passing throughout by "
            f"{sorted(steady ^ set(p2p))}"
        )
    # A test that fails before and after (CI red for another reason) is in neither list, as in
    # SWE-bench; one that passed before and fails after is a regression of the gold patch.
    broken = sorted(
        t for t, s in before.items() if s == PASSED and after.get(t) != PASSED
    )
    if broken:
        problems.append(f"the fix breaks tests that passed before it: {broken}")
    columns = {
        "f2p": f"{sum(before.get(t) in (FAILED, ERROR) for t in f2p)}/{len(f2p)} fail, "
        f"{sum(after.get(t) == PASSED for t in f2p)}/{len(f2p)} pass",
        "p2p": f"{sum(before.get(t) == PASSED and after.get(t) == PASSED for t in p2p)}/{len(p2p)}",
        "later": fix_in_later_commit(repo, task),
    }
    return problems, columns


def main():
    tasks_file = Path(
        sys.argv[1] if len(sys.argv) > 1 else tasklib.HERE / "tasks.jsonl"
    )
    tasks = tasklib.read_tasks(tasks_file)
    header = f"{'task':26} {'lang':6} {'base':8} {'FAIL_TO_PASS':22} {'P2P':6} {'fix later':9} ok"
    print(header)
    print("-" * len(header))
    failures = 0
    with tasklib.scratch_dir() as scratch:
        for task in tasks:
            try:
                problems, cols = check(task, tasks_file, scratch)
            except TaskError as e:
                problems, cols = [str(e)], {}
            failures += bool(problems)
            print(
                f"{task.get('instance_id', '?'):26} {task.get('language', '?'):6} "
                f"{task.get('base_commit', '?')[:7]:8} {cols.get('f2p', '-'):22} "
                f"{cols.get('p2p', '-'):6} {cols.get('later', '-'):9} "
                f"{'no' if problems else 'yes'}"
            )
            for problem in problems:
                print(f"    {problem}")
    print(f"{len(tasks) - failures} of {len(tasks)} tasks check out")
    ids = [t.get("instance_id") for t in tasks]
    if len(set(ids)) != len(ids):
        print("instance ids are not unique")
        failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
