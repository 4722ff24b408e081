#!/usr/bin/env python3
"""Web page benchmark: the task page's weight, and the time from a task's start to its first event
on screen, measured in headless Chromium.

Starts `plumb serve` (SQLite, one worker, the bundled BILL-412 example with its scripted model in
the default sandbox) and `chromedriver`, then --runs times, each in a fresh browser (empty cache):
signs in, starts BILL-412 from the new-task form, and reads what the page recorded
(`window.plumbTimings`): the time from the click that sent the request to the first line of the
event stream drawn on the task page, and to the first line the worker wrote (`run_started`, which
adds the queue's pick-up). The page weight is what the browser fetched for the task page
on its first load into an empty cache (Resource Timing: body bytes on the wire, gzipped, and
decoded), which is every file of the page: the views are one set of modules.
Prints a table; exit status 1 when a run fails or the page logged an error.

    scripts/web_bench.py [--runs 5] [--plumb PATH] [--chromium /usr/bin/chromium]

Needs Debian's `chromium` and `chromium-driver`; only Python's standard library is used.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_bench import bench_home, cpu_name, find_plumb, free_port, make_token, request  # noqa: E402


class WebDriver:
    """Just enough of the W3C WebDriver protocol: a session, navigation, scripts, logs."""

    def __init__(self, port, chromium):
        self.base = f"http://127.0.0.1:{port}"
        options = {
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"],
        }
        caps = {"browserName": "chrome", "goog:chromeOptions": options, "goog:loggingPrefs": {"browser": "ALL"}}
        answer = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        self.session = f"/session/{answer['sessionId']}"

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return json.loads(resp.read())["value"]
        except urllib.error.HTTPError as err:
            raise RuntimeError(f"webdriver {method} {path}: {err.read().decode(errors='replace')}") from None

    def go(self, url):
        self._call("POST", self.session + "/url", {"url": url})

    def run(self, script, *args):
        return self._call("POST", self.session + "/execute/sync", {"script": script, "args": list(args)})

    def wait_for(self, script, timeout=120, *args):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.run(script, *args)
            if value:
                return value
            time.sleep(0.05)
        raise RuntimeError(f"timed out after {timeout} s waiting for: {script}")

    def console(self):
        return self._call("POST", self.session + "/se/log", {"type": "browser"})

    def quit(self):
        self._call("DELETE", self.session)


# Fills an input the way typing would (Preact listens to `input`).
TYPE = """
const [selector, value] = arguments;
const field = document.querySelector(selector);
field.value = value;
field.dispatchEvent(new Event('input', {bubbles: true}));
field.dispatchEvent(new Event('change', {bubbles: true}));
"""


def one_run(driver, base, token, repo, ticket):
    driver.go(base + "/")
    driver.wait_for("return document.querySelector('form[data-test=sign-in] input[name=token]') !== null")
    driver.run(TYPE, "form[data-test=sign-in] input[name=token]", token)
    driver.run("document.querySelector('form[data-test=sign-in] button[type=submit]').click()")
    driver.wait_for("return document.querySelector('[data-test=tenant]')?.textContent.length > 0")
    # Every file of the page loads with the first view (app.js imports all the views), into a
    # fresh browser with an empty cache: what a browser fetches to show the task page.
    weight = driver.run("""
        const entries = [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
          .filter((e) => !e.name.includes('/api/') && !e.name.endsWith('favicon.svg'));
        return {files: entries.length,
                wire: entries.reduce((n, e) => n + e.encodedBodySize, 0),
                decoded: entries.reduce((n, e) => n + e.decodedBodySize, 0)};""")
    driver.go(base + "/#/new")
    driver.wait_for("return document.querySelector('form[data-test=new-task]') !== null")
    driver.run("document.querySelector('input[name=kind][value=path]').click()")
    driver.wait_for("return document.querySelector('input[name=path]') !== null")
    driver.run(TYPE, "input[name=path]", repo)
    driver.run(TYPE, "textarea[name=ticket]", ticket)
    driver.run("document.querySelector('form[data-test=new-task] button[type=submit]').click()")
    timings = driver.wait_for(
        "const t = window.plumbTimings; return t && t.kinds && t.kinds.run_started ? t : null", 300)
    first_kind = driver.run("return document.querySelector('ol.events li')?.textContent")
    errors = driver.run("return window.plumbErrors")
    return {
        "first_event_ms": timings["firstEvent"] - timings["created"],
        "run_started_ms": timings["kinds"]["run_started"] - timings["created"],
        "first_line": first_kind,
        "weight": weight,
        "errors": errors + [entry["message"] for entry in driver.console() if entry["level"] == "SEVERE"],
        "task": timings["task"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--plumb", default=None, help="the plumb binary (default: the release build, else debug)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    plumb = find_plumb(args.plumb, "web_bench")
    for tool in (args.chromium, "chromedriver"):
        if not shutil.which(tool):
            sys.exit(f"web_bench: {tool} is not installed: apt-get install chromium chromium-driver")

    home, env, repo, script, ticket = bench_home("plumb-web-bench-")
    db = "sqlite:" + os.path.join(home, "plumb.db")
    token = make_token(plumb, db, env)
    port, driver_port = free_port(), free_port()
    procs = [
        subprocess.Popen([plumb, "-c", f"model=script:{script}", "serve", "--db", db, "--workers", "1",
                          "--allow-server-paths", "--listen", f"127.0.0.1:{port}"],
                         env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(home, "serve.log"), "w")),
        subprocess.Popen(["chromedriver", f"--port={driver_port}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL),
    ]
    base = f"http://127.0.0.1:{port}"
    results, problems = [], []
    try:
        for _ in range(300):
            try:
                request("GET", f"{base}/api/capabilities", timeout=2)
                urllib.request.urlopen(f"http://127.0.0.1:{driver_port}/status", timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        for number in range(args.runs):
            driver = WebDriver(driver_port, args.chromium)
            try:
                result = one_run(driver, base, token, repo, ticket)
            finally:
                driver.quit()
            results.append(result)
            problems += [f"run {number + 1}: {error}" for error in result["errors"]]
            # Let the worker finish this run before the next starts, so runs do not overlap.
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                _, task, _ = request("GET", f"{base}/api/tasks/{result['task']}", token)
                if task["state"] not in ("queued", "preparing", "running", "checking", "reviewing"):
                    break
                time.sleep(0.5)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()

    first = [r["first_event_ms"] for r in results]
    started = [r["run_started_ms"] for r in results]
    weight = results[0]["weight"]
    version = subprocess.run([args.chromium, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"plumb web page, {args.runs} runs, {version}, {cpu_name()}")
    print(f"binary: {plumb}")
    print()
    print("| figure | median | min | max |")
    print("|---|---:|---:|---:|")
    print(f"| start → first event on screen (ms) | {statistics.median(first):.0f} | {min(first):.0f} | {max(first):.0f} |")
    print(f"| start → worker's first event (`run_started`) on screen (ms) | {statistics.median(started):.0f} "
          f"| {min(started):.0f} | {max(started):.0f} |")
    print()
    print(f"first line on screen: {results[0]['first_line']!r}")
    print(f"task page weight: {weight['files']} files (HTML, JS, CSS), {weight['decoded']:,} bytes, "
          f"{weight['wire']:,} bytes gzipped on the wire")
    for problem in problems:
        print(f"PROBLEM {problem}")
    shutil.rmtree(home, ignore_errors=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
