#!/usr/bin/env bash
# The eval benchmarks of issue 21, as a table on stdout (progress on stderr). Each run imports the
# HumanEvalFix development split (data/humanevalpack/) and runs `plumb eval` on it; every run's
# folder (summary.json, report.html, one folder per attempt) stays under $EVAL_BENCH_DIR
# (default ./plumb-eval-bench), and a second call resumes there.
#
#   scripts/eval-bench.sh oracle [LANG…]     the oracle over the whole split of each language
#                                            (default: python js rust go): resolved must be all
#   scripts/eval-bench.sh local [LANG…]      the embedded default model (`local`, 1.5B) on the
#                                            fixed subset: Python every sixth task (25 tasks),
#                                            Rust every twelfth (13 tasks of 148); -k 1, each task
#                                            within a 10-minute wall-clock budget
#   scripts/eval-bench.sh local-off [LANG…]  the same subset with the small-model helpers off
#                                            (the ablation)
#   scripts/eval-bench.sh table DIR…          only the table of earlier runs
#
# Environment: JOBS (attempts at a time, default 2 for the oracle, 1 for the local model),
# MODEL (default `local`), BUDGET_SECS (the model runs' wall-clock budget a task, default 600:
# plumb's own default is none, and on two cores a round of the 1.5B model with its four
# candidates takes 2–5 minutes, so a task could run an hour), EVAL_BENCH_DIR. The setup phase
# of the Rust and Go tasks fetches their dependencies (crates.io) and warms the build caches, so
# the runs pass `-c setup_network=true`.
#
# The local-model runs take hours, more than one session of a machine that is wiped between
# sessions, so their results are kept in the repository:
#   scripts/eval-bench.sh save RUN…    copies each run's result.json files (and summary.json)
#                                      from $EVAL_BENCH_DIR/RUN to bench/eval/RUN
#   scripts/eval-bench.sh restore      copies bench/eval/* back into $EVAL_BENCH_DIR, so the
#                                      next `local …` call resumes and runs only what is left
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-oracle}"
shift || true
dir="${EVAL_BENCH_DIR:-plumb-eval-bench}"
plumb="${PLUMB:-${CARGO_TARGET_DIR:-target}/release/plumb}"

table() {
  python3 - "$@" <<'PY'
import json, os, statistics, sys
print("| run | language | tasks | resolved | plumb verified | disagree | held back, would resolve | errors | median rounds | median s/round | a round: new prompt / generated tokens | a round: model / command s | tokens in / out | median wall s/task | reviews: approve / request changes / no verdict | sent back: verified / resolved | median s/review |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

def timings(r):
    # Kept in result.json since the round split was added; earlier results have it in the run's report.
    if r.get("timings"):
        return r["timings"]
    report = os.path.join(r.get("run_dir") or "", "report.json")
    if os.path.isfile(report):
        return json.load(open(report)).get("timings")
    return None
for out in sys.argv[1:]:
    results = []
    for task in sorted(os.listdir(out)):
        p = os.path.join(out, task, "attempt-1", "result.json")
        if os.path.isfile(p):
            results.append(json.load(open(p)))
    langs = sorted({r.get("language") or "?" for r in results}) or ["?"]
    for lang in langs:
        rs = [r for r in results if (r.get("language") or "?") == lang]
        done = [r for r in rs if r["status"]["status"] == "finished"]
        resolved = sum(1 for r in done if r["score"] and r["score"]["resolved"])
        verified = sum(1 for r in done if r["outcome"] == "success")
        disagree = sum(1 for r in done if (r["outcome"] == "success") != bool(r["score"] and r["score"]["resolved"]))
        held_back = sum(1 for r in done if (r.get("unverified_score") or {}).get("resolved"))
        errors = len(rs) - len(done)
        med = lambda xs: f"{statistics.median(xs):.1f}" if xs else "–"
        rounds = [r["rounds"] for r in done]
        per_round = [r["run_ms"] / 1000 / r["rounds"] for r in done if r["rounds"]]
        walls = [r["wall_ms"] / 1000 for r in rs]
        rounded = [r for r in done if r["rounds"]]
        new_prompt = [(r["usage"]["input_tokens"] - r["usage"]["cached_tokens"]) / r["rounds"] for r in rounded]
        generated = [r["usage"]["output_tokens"] / r["rounds"] for r in rounded]
        timed = [(r, timings(r)) for r in rounded]
        model_s = [t["model_ms"] / 1000 / r["rounds"] for r, t in timed if t]
        command_s = [t["commands_ms"] / 1000 / r["rounds"] for r, t in timed if t]
        med0 = lambda xs: f"{statistics.median(xs):.0f}" if xs else "–"
        tin = sum(r["usage"]["input_tokens"] for r in rs)
        tout = sum(r["usage"]["output_tokens"] for r in rs)
        # Each review in brief (results written before the review step have none: "–").
        steps = [s for r in done for s in r.get("reviews", [])]
        said = [s.get("model_verdict") for s in steps]
        back = [r for r in done if any(s["sent_back"] for s in r.get("reviews", []))]
        back_verified = sum(1 for r in back if r["outcome"] == "success")
        back_resolved = sum(1 for r in back if r["score"] and r["score"]["resolved"])
        reviews = f"{said.count('approve')} / {said.count('request_changes')} / {len(said) - said.count('approve') - said.count('request_changes')}" if steps else "–"
        sent_back = f"{len(back)}: {back_verified} / {back_resolved}" if steps else "–"
        review_s = med([s["ms"] / 1000 for s in steps])
        print(f"| {os.path.basename(out.rstrip('/'))} | {lang} | {len(rs)} | {resolved} | {verified} | {disagree} | {held_back} | {errors} | {med(rounds)} | {med(per_round)} | {med0(new_prompt)} / {med0(generated)} | {med(model_s)} / {med(command_s)} | {tin:,} / {tout:,} | {med(walls)} | {reviews} | {sent_back} | {review_s} |")
PY
}

# The ids of every STEP-th task of a language's imported set, as a --filter expression.
subset() {
  python3 - "$1" "$2" <<'PY'
import json, re, sys
ids = [json.loads(l)["instance_id"] for l in open(sys.argv[1]) if l.strip()]
step = int(sys.argv[2])
print("^(" + "|".join(re.escape(i) for i in ids[::step]) + ")$")
PY
}

if [ "$mode" = table ]; then
  table "$@"
  exit 0
fi
if [ "$mode" = save ]; then
  for run in "$@"; do
    (cd "$dir" && find "$run" -maxdepth 3 \( -path "*/attempt-*/result.json" -o -path "$run/summary.json" \) -print0 |
      xargs -0 -r cp --parents -t "$OLDPWD/bench/eval")
    echo "saved $(find "bench/eval/$run" -name result.json | wc -l) results of $run in bench/eval/$run" >&2
  done
  exit 0
fi
if [ "$mode" = restore ]; then
  mkdir -p "$dir"
  cp -r -n bench/eval/. "$dir/"
  echo "restored $(find bench/eval -name result.json | wc -l) results into $dir" >&2
  exit 0
fi
[ $# -gt 0 ] || set -- python js rust go
# PLUMB=path/to/plumb uses that binary as it is; else the release build (plumb and its model
# runner plumb-llm, which `local` needs) is made first.
[ -n "${PLUMB:-}" ] || cargo build --release --locked -p plumb -p plumb-llm >&2
mkdir -p "$dir"
runs=()
for lang in "$@"; do
  imported="$dir/import-$lang"
  if [ ! -f "$imported/tasks.jsonl" ]; then
    "$plumb" eval import humanevalpack "data/humanevalpack/$lang.jsonl" --lang "$lang" --out "$imported" >&2
  fi
  case "$mode" in
    oracle)
      out="$dir/oracle-$lang"
      "$plumb" -c setup_network=true eval "$imported/tasks.jsonl" --model oracle \
        --jobs "${JOBS:-2}" --out "$out" >&2 || true
      ;;
    local|local-off)
      case "$lang" in python) step=6 ;; rust) step=12 ;; *) step=12 ;; esac
      filter="$(subset "$imported/tasks.jsonl" "$step")"
      extra=(-c "limits.wall_clock_secs=${BUDGET_SECS:-600}")
      if [ "$mode" = local-off ]; then
        extra+=(-c helpers.phases=false -c helpers.candidates=1 -c helpers.code_up_front=false
               -c helpers.show_file_on_failed_edit=false -c helpers.thought=false
               -c helpers.figures=false -c helpers.trace=false -c helpers.python_notes=false
               -c helpers.python_rewrites=false -c helpers.undo_failing_fixes=false)
      fi
      out="$dir/$mode-${MODEL:-local}-$lang"
      "$plumb" -c setup_network=true "${extra[@]}" eval "$imported/tasks.jsonl" \
        --model "${MODEL:-local}" -k 1 --jobs "${JOBS:-1}" --filter "$filter" --out "$out" >&2 || true
      ;;
    *) echo "unknown mode $mode; see the header of $0" >&2; exit 2 ;;
  esac
  runs+=("$out")
done
table "${runs[@]}"
