#!/usr/bin/env python3
"""BILL-412 with the embedded model, N times: verified fixes, rounds, seconds per round, memory.

Usage: scripts/bench_local.py [--runs 10] [--model local] [--plumb target/release/plumb]
                              [--max-rounds 30] [--seed 1] [--keep DIR] [-c key=value ...]

Each run is `plumb fix --json` on a fresh git copy of examples/billing, with a private PLUMB_HOME.
The table gives, per run: outcome, rounds, model seconds per round (the model's share of each round,
from the report's timings), whole seconds per round, tokens, and the runner's peak memory (VmHWM of
the `plumb-llm` process, read from /proc every 0.2 s). Then medians: of each run's model seconds per
round (the headline figure), of every round of every run pooled (from the journals' `model_reply`
durations), and of the runs that succeeded. Nothing here is estimated: a figure that could not be read
is printed as "?".

A success is plumb's own verdict. The `right` column checks it independently: the patch applied to a
fresh copy of examples/billing must pass a hidden test of the ticket's example (an item of Rs 1,000
with a Rs 100 discount: GST Rs 162) and the project's whole suite, run by pytest inside bubblewrap
(no network, the copy the only writable folder). `--recheck DIR` does the same for the runs kept
under DIR by an earlier --keep, without running plumb.

Run N samples with `local.seed` = SEED + N - 1, so the runs differ the way reruns by a user would
(with one seed every run samples the same tokens and the table would count one run ten times).
With --keep, each run's PLUMB_HOME (journal, report, attempt refs) and stderr are kept under DIR.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def runner_peak_kb(stop, peak):
    """Samples VmHWM of every plumb-llm process until `stop` is set."""
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() != "plumb-llm":
                        continue
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                continue
        time.sleep(0.2)


def one_run(args, index):
    work = Path(tempfile.mkdtemp(prefix=f"plumb-bench-local-{index}-"))
    repo = work / "billing"
    shutil.copytree(ROOT / "examples" / "billing", repo)
    env = {k: v for k, v in os.environ.items()}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=repo, check=True, env=env)
    env["PLUMB_HOME"] = str(work / "home")
    command = [args.plumb, "fix", "--repo", str(repo), "--ticket", str(repo / "BILL-412.md"),
               "--model", args.model, "--json", "--max-rounds", str(args.max_rounds)]
    command += ["-c", f"local.seed={args.seed + index - 1}"]
    for item in args.config:
        command += ["-c", item]
    stop = threading.Event()
    peak = [0]
    sampler = threading.Thread(target=runner_peak_kb, args=(stop, peak), daemon=True)
    sampler.start()
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(f"run {index}: no report (exit {done.returncode})\n{done.stderr[-2000:]}\n")
        return {"exit": done.returncode, "outcome": "no report", "rounds": 0, "wall": wall,
                "round_seconds": [], "model_s_per_round": None, "s_per_round": None, "tokens_in": None, "tokens_cached": None,
                "tokens_out": None, "peak_mb": peak[0] / 1024 if peak[0] else None}
    rounds = report.get("rounds", 0)
    timings = report.get("timings", {})
    usage = report.get("usage", {})
    round_seconds = model_seconds_of_rounds(work / "home")
    if args.keep:
        kept = Path(args.keep) / f"run-{index}"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(work / "home", kept, symlinks=True)
        (kept / "stderr.txt").write_text(done.stderr)
        (kept / "report.json").write_text(done.stdout)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "exit": done.returncode,
        "outcome": report.get("outcome"),
        "rounds": rounds,
        "wall": wall,
        "model_s_per_round": timings.get("model_ms", 0) / 1000 / rounds if rounds else None,
        "s_per_round": timings.get("total_ms", 0) / 1000 / rounds if rounds else None,
        "tokens_in": usage.get("input_tokens"),
        "tokens_cached": usage.get("cached_tokens"),
        "tokens_out": usage.get("output_tokens"),
        "peak_mb": peak[0] / 1024 if peak[0] else None,
        "reason": report.get("reason", ""),
        "right": right_fix(report.get("patch", "")) if report.get("outcome") == "success" else "-",
        "round_seconds": round_seconds,
    }


HIDDEN_TEST = """from decimal import Decimal

from billing.invoice_totals import compute_invoice_totals
from billing.models import Invoice, LineItem


def test_bill_412_hidden():
    item = LineItem(sku="KB", description="kb", unit_price=Decimal("1000.00"), quantity=1,
                    category="standard", discount=Decimal("100.00"))
    totals = compute_invoice_totals(
        Invoice(number="I-1", customer_id="C", items=[item], place_of_supply="KA"))
    assert totals.tax == Decimal("162.00")
"""


def right_fix(patch):
    """'yes' when `patch` on a fresh examples/billing passes the hidden test and the whole suite,
    'no' when not (or it does not apply), '-' with no patch."""
    if not patch:
        return "-"
    work = Path(tempfile.mkdtemp(prefix="plumb-bench-check-"))
    try:
        copy = work / "billing"
        shutil.copytree(ROOT / "examples" / "billing", copy)
        applied = subprocess.run(["git", "apply", "-"], cwd=copy, input=patch, text=True,
                                 capture_output=True)
        if applied.returncode != 0:
            return "no"
        (copy / "tests" / "test_bench_hidden.py").write_text(HIDDEN_TEST)
        tests = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--bind", str(copy), str(copy), "--chdir", str(copy), "--unshare-all",
             "--die-with-parent", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
             "python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            capture_output=True, text=True, timeout=300)
        return "yes" if tests.returncode == 0 else "no"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def recheck(folder):
    """The `right` column for the runs an earlier --keep left under `folder`."""
    runs = sorted(Path(folder).glob("run-*/report.json"), key=lambda p: int(p.parent.name[4:]))
    print("| run | outcome | right |")
    print("|--:|---|---|")
    right = 0
    for path in runs:
        report = json.loads(path.read_text())
        verdict = right_fix(report.get("patch", "")) if report.get("outcome") == "success" else "-"
        right += verdict == "yes"
        print(f"| {path.parent.name[4:]} | {report.get('outcome')} | {verdict} |")
    print()
    print(f"right fixes: {right} of {len(runs)}")


def model_seconds_of_rounds(home):
    """The model time of each round (its `model_reply`, every candidate sample included), from the journal."""
    seconds = []
    for journal in Path(home).glob("runs/*/journal.jsonl"):
        with open(journal) as f:
            for line in f:
                try:
                    event = json.loads(line)["event"]
                except (ValueError, KeyError):
                    continue
                if event.get("type") == "model_reply":
                    seconds.append(event.get("duration_ms", 0) / 1000)
    return seconds


def fmt(value, spec="{:.1f}"):
    return "?" if value is None else spec.format(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--model", default="local")
    parser.add_argument("--plumb", default=str(ROOT / "target" / "release" / "plumb"))
    parser.add_argument("--max-rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1, help="local.seed of run 1; run N uses SEED + N - 1")
    parser.add_argument("--keep", help="keep each run's PLUMB_HOME and stderr under this folder")
    parser.add_argument("-c", dest="config", action="append", default=[])
    parser.add_argument("--recheck", metavar="DIR",
                        help="only check the patches of the runs kept under DIR (see above)")
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        sys.exit("bwrap (bubblewrap) is not installed: it runs the `right` check's tests; "
                 "install it with scripts/setup-test-deps.sh")
    if args.recheck:
        recheck(args.recheck)
        return
    if not Path(args.plumb).is_file():
        sys.exit(f"{args.plumb} does not exist; build it with cargo build --release -p plumb -p plumb-llm")
    print(f"BILL-412, model {args.model}, {args.runs} runs, max rounds {args.max_rounds}, "
          f"seeds {args.seed}..{args.seed + args.runs - 1}, settings {args.config or 'default'}, "
          f"{os.cpu_count()} CPUs")
    print()
    print("| run | outcome | right | rounds | model s/round | s/round | tokens in | of them cached | tokens out | runner peak MB | wall s |")
    print("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    results = []
    for index in range(1, args.runs + 1):
        r = one_run(args, index)
        results.append(r)
        print(f"| {index} | {r['outcome']} | {r.get('right', '-')} | {r['rounds']} | {fmt(r['model_s_per_round'])} | "
              f"{fmt(r['s_per_round'])} | {fmt(r['tokens_in'], '{}')} | {fmt(r['tokens_cached'], '{}')} | "
              f"{fmt(r['tokens_out'], '{}')} | "
              f"{fmt(r['peak_mb'], '{:.0f}')} | {r['wall']:.0f} |", flush=True)
    fixed = sum(1 for r in results if r["outcome"] == "success")
    def median(key):
        values = [r[key] for r in results if r[key] is not None]
        return statistics.median(values) if values else None
    print()
    print(f"verified fixes: {fixed} of {len(results)}")
    right = sum(1 for r in results if r.get("right") == "yes")
    print(f"right fixes (hidden test and whole suite pass on the patch): {right} of {len(results)}")
    print(f"median rounds: {fmt(median('rounds'))}")
    print(f"median model seconds per round: {fmt(median('model_s_per_round'))}")
    print(f"median seconds per round (whole run / rounds): {fmt(median('s_per_round'))}")
    pooled = [s for r in results for s in r["round_seconds"]]
    succeeded = [r["model_s_per_round"] for r in results
                 if r["outcome"] == "success" and r["model_s_per_round"] is not None]
    print(f"median model seconds of one round, all {len(pooled)} rounds of all runs pooled: "
          f"{fmt(statistics.median(pooled) if pooled else None)}")
    print(f"median model seconds per round of the runs that succeeded: "
          f"{fmt(statistics.median(succeeded) if succeeded else None)}")
    peaks = [r["peak_mb"] for r in results if r["peak_mb"] is not None]
    print(f"runner peak memory: {fmt(max(peaks) if peaks else None, '{:.0f}')} MB")
    outcomes = {}
    for r in results:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    print(f"outcomes: {outcomes}")


if __name__ == "__main__":
    main()
