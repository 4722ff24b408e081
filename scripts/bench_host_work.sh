#!/usr/bin/env bash
# How long plumb's own work on the host takes when the agent's tests fill the workspace: the
# BILL-412 example with a scripted model whose one test writes (a) 1,000,000 empty files or
# (b) ten sparse files of 1 GB, then `done`, under a wall-clock budget (180 s unless BUDGET is
# set) and today's default workspace limits (limits.max_workspace_files, _bytes). Prints a
# Markdown table: the case, the budget, the seconds `plumb fix` took end to end, its exit code,
# outcome and reason, and whether attempt.diff was written. Before issue 35 both cases ran a
# 180 s budget to 409–456 s with no attempt.diff.
#
# Usage: scripts/bench_host_work.sh [--keep DIR]   (release build of plumb; bubblewrap)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llm-cpu-env.sh

keep=""
if [ "${1:-}" = "--keep" ]; then keep=${2:?--keep needs a folder}; fi
budget=${BUDGET:-180}

cargo build --release -p plumb >&2
bin="${CARGO_TARGET_DIR:-target}/release/plumb"
work=${keep:-$(mktemp -d /tmp/plumb-host-work-XXXXXX)}
mkdir -p "$work"

# NAME PYTHON-BODY: one case; prints its table row.
case_row() {
  local name=$1 body=$2 root="$work/$1"
  rm -rf "$root"; mkdir -p "$root/home"
  cp -r examples/billing "$root/repo"
  (cd "$root/repo" && git init -q -b main && git -c user.name=b -c user.email=b@b add -A \
    && git -c user.name=b -c user.email=b@b commit -qm fixture)
  local test
  test=$(python3 -c 'import json,sys; print(json.dumps("import os\n\n\ndef test_fill():\n" + sys.argv[1]))' "$body")
  cat > "$root/script.jsonl" <<JSON
{"tool": "create_file", "args": {"path": "tests/test_fill.py", "content": $test}}
{"tool": "run_tests", "args": {"tests": ["tests/test_fill.py"]}}
{"tool": "done", "args": {"summary": "filled"}}
JSON
  local start end code
  start=$(date +%s.%N)
  set +e
  PLUMB_HOME="$root/home" XDG_CONFIG_HOME="$root/home/config" "$bin" fix --repo "$root/repo" \
    --ticket "$root/repo/BILL-412.md" --model "script:$root/script.jsonl" --json \
    -c limits.wall_clock_secs="$budget" > "$root/report.json" 2> "$root/stderr.txt"
  code=$?
  set -e
  end=$(date +%s.%N)
  python3 - "$root" "$name" "$budget" "$code" "$start" "$end" <<'PY'
import json, os, sys
root, name, budget, code, start, end = sys.argv[1:]
report = json.load(open(os.path.join(root, "report.json")))
run = os.path.join(root, "home", "runs", report["run_id"])
diff = "yes" if os.path.exists(os.path.join(run, "attempt.diff")) else "no"
reason = report["reason"].replace("|", "/")[:160]
print(f"| {name} | {budget} | {float(end) - float(start):.1f} | {code} | {report['outcome']} | {reason} | {diff} |")
PY
  [ -n "$keep" ] || rm -rf "$root"
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
flags=$(grep -m1 -o 'avx512f' /proc/cpuinfo || grep -m1 -o 'avx2' /proc/cpuinfo || echo 'no AVX2')
echo "## Host work within the budget"
echo
echo "$cpu ($flags), $(nproc) CPUs, release build, bubblewrap, load $(cut -d' ' -f1 /proc/loadavg) at the start"
echo
echo "| case | budget s | took s | exit | outcome | reason | attempt.diff |"
echo "|---|---:|---:|---:|---|---|---|"
case_row one-million-empty-files '    for i in range(1_000_000):
        open(f"f{i}", "w").close()'
case_row ten-sparse-1gb-files '    for i in range(10):
        with open(f"sparse{i}.bin", "wb") as f:
            f.truncate(1 << 30)'
echo
echo "Repeat with \`scripts/bench_host_work.sh\` (BUDGET=N for another budget)."
