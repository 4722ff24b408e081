#!/usr/bin/env bash
# The importer's host check over a whole HumanEvalFix language: import data/humanevalpack/LANG.jsonl
# (or take an import already made, DIR), then for every task, in a fresh copy of its tree at
# base_commit, run the tests twice on the host (no plumb sandbox): the buggy tree with the test patch must
# fail each FAIL_TO_PASS test, and the tree with the gold patch and then the test patch must pass each one
# (ids read from the runner's log: pytest -rA, node --test's TAP, libtest, go test -v). The example tests
# of the tree (what plumb fix's baseline runs) are run too, on the buggy tree; a run past 60 s counts as
# failed (some bugs are endless loops). Prints one table row per
# outcome and the tasks that were not as expected.
#
#   scripts/check-humanevalpack.sh python|js|rust|go [DIR] [--limit N]
#
# Needs python3 with pytest, node, cargo (the Rust tasks fetch rand/regex/md5 from crates.io once) and
# Debian's golang-go with golang-github-stretchr-testify-dev (scripts/setup-test-deps.sh).
set -euo pipefail

lang=${1:?usage: check-humanevalpack.sh python|js|rust|go [DIR] [--limit N]}
shift
dir=""
limit=0
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) limit=$2; shift 2 ;;
    *) dir=$1; shift ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/check-humanevalpack.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$dir" ]; then
  dir=$work/import
  (cd "$root" && cargo run -q -p plumb-eval --example import_humanevalpack -- \
    "data/humanevalpack/$lang.jsonl" "$lang" "$dir")
fi

python3 - "$lang" "$dir" "$work" "$limit" <<'PY'
import json, os, re, signal, subprocess, sys, time

lang, task_dir, work, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
# One build folder per language, so dependencies build once; offline once fetched.
env["CARGO_TARGET_DIR"] = os.path.join(work, "cargo-target")
env["GOCACHE"] = os.path.join(work, "gocache")
env["GOFLAGS"] = "-mod=vendor"
env["GOPROXY"] = "off"
env["PYTHONDONTWRITEBYTECODE"] = "1"
COMMANDS = {
    "python": ["python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider"],
    "js": ["node", "--test", "--test-reporter=tap"],
    "rust": ["cargo", "test"],
    "go": ["go", "test", "-v", "./..."],
}

def outcome(log, test):
    """passed / failed / missing, read the way the scorer reads each runner's log."""
    t = re.escape(test)
    pats = {
        "python": (rf"^PASSED {t}\s*$", rf"^(FAILED|ERROR) {t}( |$)"),
        "js": (rf"^ok \d+ - {t}\s*$", rf"^not ok \d+ - {t}\s*$"),
        "rust": (rf"^test {t} \.\.\. ok$", rf"^test {t} \.\.\. FAILED$"),
        "go": (rf"^\s*--- PASS: {t} ", rf"^\s*--- FAIL: {t} "),
    }[lang]
    if re.search(pats[0], log, re.M):
        return "passed"
    if re.search(pats[1], log, re.M):
        return "failed"
    return "missing"

def tree(task, name, patches):
    dest = os.path.join(work, name)
    subprocess.run(["rm", "-rf", dest], check=True)
    os.makedirs(dest)
    repo = os.path.join(task_dir, task["repo"])
    archive = subprocess.run(["git", "-C", repo, "archive", task["base_commit"]],
                             env=env, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    for patch in patches:
        r = subprocess.run(["git", "apply", "-"], cwd=dest, input=patch.encode(), env=env,
                           capture_output=True)
        if r.returncode != 0:
            return None, "patch does not apply: " + r.stderr.decode()[:200]
    return dest, ""

def run(dest):
    # A bug can be an endless loop: past the limit the whole process group is killed and the run
    # counts as failed (exit None).
    p = subprocess.Popen(COMMANDS[lang], cwd=dest, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out.decode(errors="replace")
    return p.returncode, out.decode(errors="replace")

TIMEOUT = 60
tasks = [json.loads(l) for l in open(os.path.join(task_dir, "tasks.jsonl")) if l.strip()]
if limit:
    tasks = tasks[:limit]
rows = {"examples run": 0, "buggy fails hidden": 0, "fixed passes hidden": 0}
bad = []
notes = []
start = time.time()
for n, task in enumerate(tasks, 1):
    tid = task["instance_id"]
    dest, err = tree(task, "base", [])
    code, log = run(dest)
    # The example tests run (they may fail: the function is buggy); the suite must not crash.
    ran = {"python": r"^(PASSED|FAILED) ", "js": r"^(not )?ok \d+ - ",
           "rust": r"^test .* \.\.\. ", "go": r"--- (PASS|FAIL): "}[lang]
    if code is None:
        rows["examples run"] += 1
        notes.append((tid, f"the example tests time out after {TIMEOUT} s on the buggy tree"))
    elif re.search(ran, log, re.M):
        rows["examples run"] += 1
    else:
        bad.append((tid, "the example tests did not run", log[-400:]))
    dest, err = tree(task, "buggy", [task["test_patch"]])
    if dest is None:
        bad.append((tid, "buggy + test patch: " + err, ""))
        continue
    code, log = run(dest)
    got = [outcome(log, t) if code is not None else "timed out" for t in task["FAIL_TO_PASS"]]
    if all(g in ("failed", "timed out") for g in got):
        rows["buggy fails hidden"] += 1
    else:
        bad.append((tid, f"buggy + test patch: {got}", log[-400:]))
    dest, err = tree(task, "fixed", [task["patch"], task["test_patch"]])
    if dest is None:
        bad.append((tid, "fixed + test patch: " + err, ""))
        continue
    code, log = run(dest)
    got = [outcome(log, t) for t in task["FAIL_TO_PASS"]]
    if all(g == "passed" for g in got) and code == 0:
        rows["fixed passes hidden"] += 1
    else:
        bad.append((tid, f"fixed + test patch: {got} exit {code}", log[-400:]))
    print(f"\r{n}/{len(tasks)}", end="", file=sys.stderr, flush=True)
print(file=sys.stderr)
total = len(tasks)
print(f"HumanEvalFix {lang}: {total} tasks, {time.time() - start:.0f} s")
print(f"| check | ok | not ok |")
print(f"|---|---|---|")
for name, ok in rows.items():
    print(f"| {name} | {ok} | {total - ok} |")
for tid, why in notes:
    print(f"- note {tid}: {why}")
for tid, why, tail in bad:
    print(f"- {tid}: {why}")
    if tail and os.environ.get("VERBOSE"):
        print("    " + tail.replace("\n", "\n    "))
sys.exit(0 if not bad else 1)
PY
