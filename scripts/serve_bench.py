#!/usr/bin/env python3
"""Load benchmark of the team service: N tasks submitted at once, run to approval, counted.

Starts `plumb serve` (SQLite, its own workers) or `plumb serve --workers 0` plus `plumb worker`
processes (PostgreSQL), each with the bundled BILL-412 example and its scripted model in the
default sandbox, submits --tasks tasks at once from as many threads, polls them while they run,
and prints a table: wall time, throughput, and the API's p50/p99 latency for task creation and
for reads under that load. It then checks what the issue asks: every task ended awaiting
approval, on its first attempt, with exactly one run (one `run_started` event), and the store
lists every task once. Exit status 1 when any of that does not hold.

    scripts/serve_bench.py [--tasks 50] [--db sqlite|postgres://…] [--workers 2] [--plumb PATH]

With a postgres URL the schema is the database's own: give an empty database (the bench drops
nothing). Only the standard library is used.
"""

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "billing")


def request(method, url, token=None, body=None, timeout=60):
    """(status, parsed JSON or None, seconds)."""
    data = None
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as err:
        raw = err.read()
        status = err.code
    elapsed = time.perf_counter() - start
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return status, parsed, elapsed


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        name = next(l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("model name"))
        flags = "AVX-512" if "avx512f" in text else ("AVX2" if "avx2" in text else "no AVX2")
        return f"{name}, {os.cpu_count()} cores, {flags}"
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def find_plumb(given, name):
    """The plumb binary: `given`, else the release build, else the debug one; exits naming the fix."""
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    plumb = given or next(
        (p for p in (os.path.join(target, "release", "plumb"), os.path.join(target, "debug", "plumb"))
         if os.path.exists(p)), None)
    if not plumb:
        sys.exit(f"{name}: no plumb binary: cargo build --release -p plumb, or give --plumb")
    return plumb


def bench_home(prefix):
    """A scratch home: (folder, environment with a private PLUMB_HOME, BILL-412's git repository,
    its scripted model, its ticket)."""
    home = tempfile.mkdtemp(prefix=prefix)
    env = dict(os.environ, PLUMB_HOME=os.path.join(home, "state"), XDG_CONFIG_HOME=os.path.join(home, "config"))
    repo = os.path.join(home, "repo")
    shutil.copytree(EXAMPLE, repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True)
    subprocess.run(["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], check=True)
    script = os.path.join(EXAMPLE, "bill-412.script.jsonl")
    with open(os.path.join(EXAMPLE, "BILL-412.md")) as f:
        ticket = f.read()
    return home, env, repo, script, ticket


def make_token(plumb, db, env, tenant="bench"):
    """A token for `tenant`, made with `plumb token create`."""
    return subprocess.run([plumb, "token", "create", "--tenant", tenant, "--db", db],
                          env=env, check=True, capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--db", default="sqlite", help="sqlite (a fresh file) or a postgres:// URL")
    parser.add_argument("--workers", type=int, default=2,
                        help="local workers (sqlite) or plumb worker processes (postgres)")
    parser.add_argument("--plumb", default=None, help="the plumb binary (default: the release build, else debug)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds for the whole load")
    args = parser.parse_args()

    plumb = find_plumb(args.plumb, "serve_bench")
    home, env, repo, script, ticket = bench_home("plumb-serve-bench-")

    postgres = args.db.startswith("postgres")
    db = args.db if postgres else "sqlite:" + os.path.join(home, "plumb.db")
    base_cmd = [plumb, "-c", f"model=script:{script}"]
    token = make_token(plumb, db, env)
    port = free_port()
    server_workers = 0 if postgres else args.workers
    procs = [subprocess.Popen(base_cmd + ["serve", "--db", db, "--workers", str(server_workers),
                                          "--allow-server-paths", "--listen", f"127.0.0.1:{port}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(home, "serve.log"), "w"))]
    if postgres:
        for i in range(args.workers):
            procs.append(subprocess.Popen(base_cmd + ["worker", "--db", db], env=env, stdout=subprocess.DEVNULL,
                                          stderr=open(os.path.join(home, f"worker{i}.log"), "w")))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                request("GET", f"{base}/api/capabilities", timeout=2)
                break
            except OSError:
                time.sleep(0.1)

        create_latency, read_latency, ids, errors = [], [], [], []
        lock = threading.Lock()

        def submit():
            body = {"repo": {"kind": "path", "path": repo}, "ticket": ticket}
            status, task, took = request("POST", f"{base}/api/tasks", token, body)
            with lock:
                create_latency.append(took)
                if status == 201:
                    ids.append(task["id"])
                else:
                    errors.append(f"POST /api/tasks: {status} {task}")

        start = time.perf_counter()
        threads = [threading.Thread(target=submit) for _ in range(args.tasks)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        final = {}
        deadline = time.monotonic() + args.timeout
        while len(final) < len(ids) and time.monotonic() < deadline:
            status, listing, took = request("GET", f"{base}/api/tasks?limit=100", token)
            read_latency.append(took)
            for task_id in ids:
                if task_id in final:
                    continue
                status, task, took = request("GET", f"{base}/api/tasks/{task_id}", token)
                read_latency.append(took)
                if status == 200 and task["state"] in ("awaiting_approval", "failed", "cancelled"):
                    final[task_id] = task
            time.sleep(0.5)
        wall = time.perf_counter() - start

        # What the issue asks: every task once, on its first attempt, with one run.
        problems = list(errors)
        for task_id in ids:
            task = final.get(task_id)
            if task is None:
                problems.append(f"{task_id}: not finished within {args.timeout} s")
                continue
            if task["state"] != "awaiting_approval" or task["attempt"] != 1:
                problems.append(f"{task_id}: {task['state']} on attempt {task['attempt']}: {task.get('reason')}")
            runs = count_runs(base, token, task_id)
            if runs != 1:
                problems.append(f"{task_id}: {runs} runs (run_started events); exactly one expected")
        listed = set()
        cursor = None
        while True:
            url = f"{base}/api/tasks?limit=100" + (f"&before={cursor}" if cursor else "")
            status, page, _ = request("GET", url, token)
            listed.update(t["id"] for t in page["tasks"])
            cursor = page.get("next")
            if not cursor:
                break
        if listed != set(ids):
            problems.append(f"the store lists {len(listed)} tasks for {len(ids)} submitted")

        done = sum(1 for t in final.values() if t["state"] == "awaiting_approval")
        backend = "postgres" if postgres else "sqlite"
        where = f"{args.workers} plumb worker process(es)" if postgres else f"{args.workers} local worker(s)"
        print(f"plumb serve under load: {args.tasks} tasks at once, {backend}, {where}")
        print(f"CPU: {cpu_name()}; binary: {plumb}")
        print()
        print("| figure | value |")
        print("|---|---|")
        print(f"| tasks awaiting approval | {done} / {args.tasks} |")
        print(f"| wall time, submit to last task settled | {wall:.1f} s |")
        print(f"| throughput | {done / wall * 60:.1f} tasks/min |")
        print(f"| POST /api/tasks p50 / p99 ({len(create_latency)} calls) | "
              f"{percentile(create_latency, 50) * 1000:.1f} / {percentile(create_latency, 99) * 1000:.1f} ms |")
        print(f"| GET /api/tasks[/id] under load p50 / p99 ({len(read_latency)} calls) | "
              f"{percentile(read_latency, 50) * 1000:.1f} / {percentile(read_latency, 99) * 1000:.1f} ms |")
        if problems:
            print()
            print("problems:")
            for p in problems[:20]:
                print(f"- {p}")
            return 1
        return 0
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(home, ignore_errors=True)


def count_runs(base, token, task_id):
    """`run_started` events in the task's stream, read up to its awaiting-approval state (the
    stream stays open while the task waits for a person)."""
    req = urllib.request.Request(f"{base}/api/tasks/{task_id}/events",
                                 headers={"Authorization": f"Bearer {token}"})
    runs = 0
    with urllib.request.urlopen(req, timeout=30) as resp:
        for raw in resp:
            line = raw.decode(errors="replace").rstrip("\n")
            if line == "event: run_started":
                runs += 1
            if line.startswith("data: ") and '"state":"awaiting_approval"' in line:
                break
    return runs


if __name__ == "__main__":
    sys.exit(main())
