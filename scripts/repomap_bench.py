#!/usr/bin/env python3
"""The ranked repo map on a large real tree, beside Aider's RepoMap on the same tree and budget.

Prints a Markdown table: cold build (no cache), warm rebuild (cache, nothing changed), warm
rebuild after one file changed, and the peak memory of each, for `plumb map` and for Aider's
`RepoMap` (aider-chat from PyPI, its `RepoMap` class driven directly: no model, no network; its
token counter replaced by the same bytes/3 estimate `plumb map` uses, so both fill the same
budget). Each measurement is a fresh process; peak memory is that process's maximum resident set
(`wait4`).

Trees come from the package registries, unpacked once under $PLUMB_BENCH_DIR (default
/tmp/plumb-repomap-bench): a PyPI sdist (`NAME==VERSION`, `pip download --no-binary :all:`), a
crate from crates.io (`crate:NAME==VERSION`, from static.crates.io) or an npm package
(`npm:NAME@VERSION`, from registry.npmjs.org; its `src/` folder when it ships one, the TypeScript
sources, else the whole package):

    python3 scripts/repomap_bench.py --tree sympy==1.14.0 [--tokens 2048] [--runs 3]
        [--plumb target/release/plumb] [--aider-python /opt/plumb-bench/aider-0.86.2/bin/python]
    python3 scripts/repomap_bench.py --tree crate:tokio==1.48.0
    python3 scripts/repomap_bench.py --tree npm:effect@3.19.9

A tree's language is the one most of its source files are in; the "one file changed" run appends
a comment to one file of it.

Aider is installed with `python3 -m venv /opt/plumb-bench/aider-0.86.2 &&
/opt/plumb-bench/aider-0.86.2/bin/pip install aider-chat==0.86.2`; without it only plumb's rows
are printed. Run nothing else on the machine meanwhile.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

AIDER_SNIPPET = r"""
import sys, time
from pathlib import Path
root, tokens = sys.argv[1], int(sys.argv[2])
started = time.perf_counter()
from aider.io import InputOutput
from aider.repomap import RepoMap

class Estimate:
    # Aider asks its model for token counts; the bench counts as plumb map does (bytes/3).
    def token_count(self, text):
        return -(-len(text.encode()) // 3)

files = []
for dirpath, dirnames, filenames in __import__("os").walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    files.extend(str(Path(dirpath) / f) for f in filenames if not f.startswith("."))
io = InputOutput(yes=True, pretty=False, fancy_input=False)
imported = time.perf_counter()
repo_map = RepoMap(map_tokens=tokens, root=root, main_model=Estimate(), io=io)
text = repo_map.get_repo_map(chat_files=[], other_files=files) or ""
done = time.perf_counter()
print(len(files), Estimate().token_count(text), imported - started, done - imported, sep="\t")
"""


def run_with_peak(argv, env=None):
    """Wall seconds, peak RSS in MB and stdout of one process (wait4 gives its own rusage)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            sys.exit(f"{argv[0]} failed ({child.returncode}):\n{err.read().decode(errors='replace')}")
        return wall, usage.ru_maxrss / 1024, out.read().decode()


def download(url, archive):
    if not archive.exists():
        archive.parent.mkdir(parents=True, exist_ok=True)
        partial = archive.with_suffix(".part")
        with urllib.request.urlopen(url, timeout=300) as answer, open(partial, "wb") as out:
            shutil.copyfileobj(answer, out)
        partial.rename(archive)
    return archive


def fetch_crate(spec, bench_dir):
    """The unpacked crate `name==version` from crates.io, downloaded once."""
    name, _, version = spec.partition("==")
    tree = bench_dir / f"{name}-{version}"
    if not tree.is_dir():
        archive = download(f"https://static.crates.io/crates/{name}/{name}-{version}.crate",
                           bench_dir / "downloads" / f"{name}-{version}.crate")
        with tarfile.open(archive) as tar:
            tar.extractall(bench_dir, filter="data")
    return tree


def fetch_npm(spec, bench_dir):
    """The unpacked npm package `name@version` (its `src/` when it has one), downloaded once."""
    name, _, version = spec.rpartition("@")
    plain = name.split("/")[-1]
    folder = bench_dir / f"npm-{plain}-{version}"
    if not folder.is_dir():
        archive = download(f"https://registry.npmjs.org/{name}/-/{plain}-{version}.tgz",
                           bench_dir / "downloads" / f"{plain}-{version}.tgz")
        folder.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
    package = folder / "package"
    return package / "src" if (package / "src").is_dir() else package


def fetch_tree(spec, bench_dir):
    """The unpacked tree `spec` names (see the module's docstring), downloaded once."""
    if spec.startswith("crate:"):
        return fetch_crate(spec.removeprefix("crate:"), bench_dir)
    if spec.startswith("npm:"):
        return fetch_npm(spec.removeprefix("npm:"), bench_dir)
    name, _, version = spec.partition("==")
    tree = bench_dir / f"{name}-{version}"
    if tree.is_dir():
        return tree
    downloads = bench_dir / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    archive = next(downloads.glob(f"{name}-{version}.tar.gz"), None)
    if archive is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "-d", str(downloads), spec], check=True,
                       stdout=subprocess.DEVNULL)
        archive = next(downloads.glob(f"{name}-{version}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(bench_dir, filter="data")
    return tree


# Source file suffixes plumb parses, by language, and how a line comment starts in each.
LANGUAGES = {
    "Python": ((".py",), b"#"),
    "Rust": ((".rs",), b"//"),
    "TypeScript": ((".ts", ".tsx"), b"//"),
    "JavaScript": ((".js", ".mjs", ".cjs", ".jsx"), b"//"),
    "Go": ((".go",), b"//"),
    "Java": ((".java",), b"//"),
}


def source_files(tree, language):
    suffixes = LANGUAGES[language][0]
    return sorted(p for p in tree.rglob("*") if p.is_file() and p.name.endswith(suffixes)
                  and not p.name.endswith(".d.ts"))


def main_language(tree):
    return max(LANGUAGES, key=lambda language: len(source_files(tree, language)))


def lines_of_source(tree, language):
    files = lines = 0
    for path in source_files(tree, language):
        files += 1
        with open(path, "rb") as f:
            lines += sum(1 for _ in f)
    return files, lines


def touch_one(tree, language):
    """Appends a comment to one source file and returns a function that restores it."""
    files = source_files(tree, language)
    target = files[len(files) // 2]
    before = target.read_bytes()
    stat = target.stat()
    target.write_bytes(before + b"\n" + LANGUAGES[language][1] + b" touched by repomap_bench\n")

    def restore():
        target.write_bytes(before)
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    return target, restore


def plumb_rows(plumb, tree, language, tokens, runs):
    cache = Path(tempfile.mkdtemp(prefix="plumb-map-cache-"))
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    argv = [plumb, "map", "--repo", str(tree), "--tokens", str(tokens), "--json"]
    rows = {"cold": [], "warm": [], "warm, one file changed": []}
    detail = None
    for _ in range(runs):
        shutil.rmtree(cache / "plumb", ignore_errors=True)
        wall, peak, out = run_with_peak(argv, env)
        detail = json.loads(out)
        rows["cold"].append((wall, peak))
        wall, peak, _ = run_with_peak(argv, env)
        rows["warm"].append((wall, peak))
        target, restore = touch_one(tree, language)
        try:
            wall, peak, out = run_with_peak(argv, env)
            changed = json.loads(out)["index"]
            assert changed["parsed"] == 1, changed
            rows["warm, one file changed"].append((wall, peak))
        finally:
            restore()
            run_with_peak(argv, env)
    shutil.rmtree(cache, ignore_errors=True)
    return rows, detail


def aider_rows(python, tree, language, tokens, runs):
    """Aider's seconds are those of `RepoMap` alone, its Python imports (2–5 s) left out: the
    comparison is of the map's work, to Aider's advantage."""
    cache = tree / ".aider.tags.cache.v4"
    argv = [python, "-c", AIDER_SNIPPET, str(tree), str(tokens)]
    rows = {"cold": [], "warm": [], "warm, one file changed": []}
    detail = None

    def measured():
        _, peak, out = run_with_peak(argv)
        # Aider may print a note of its own first; the snippet's figures are the last line.
        fields = out.strip().splitlines()[-1].split("\t")
        return (float(fields[3]), peak), fields

    for _ in range(runs):
        shutil.rmtree(cache, ignore_errors=True)
        sample, detail = measured()
        rows["cold"].append(sample)
        rows["warm"].append(measured()[0])
        _, restore = touch_one(tree, language)
        try:
            rows["warm, one file changed"].append(measured()[0])
        finally:
            restore()
    shutil.rmtree(cache, ignore_errors=True)
    return rows, detail


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                flags = open("/proc/cpuinfo").read()
                simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
                return f"{line.split(':', 1)[1].strip()}, {simd}, {os.cpu_count()} cores"
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", default="sympy==1.14.0",
                        help="NAME==VERSION (PyPI), crate:NAME==VERSION, npm:NAME@VERSION, or a folder")
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plumb", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "plumb"))
    parser.add_argument("--aider-python", default="/opt/plumb-bench/aider-0.86.2/bin/python")
    args = parser.parse_args()

    bench_dir = Path(os.environ.get("PLUMB_BENCH_DIR", "/tmp/plumb-repomap-bench"))
    tree = Path(args.tree) if os.path.isdir(args.tree) else fetch_tree(args.tree, bench_dir)
    language = main_language(tree)
    files, lines = lines_of_source(tree, language)
    print(f"tree: {tree} ({files} {language} files, {lines:,} lines); budget {args.tokens} tokens "
          f"(bytes/3); {args.runs} runs; {cpu_name()}\n")

    results = {"plumb map": plumb_rows(args.plumb, tree, language, args.tokens, args.runs)}
    if os.path.exists(args.aider_python):
        results["Aider RepoMap"] = aider_rows(args.aider_python, tree, language, args.tokens, args.runs)
    else:
        print(f"(no Aider at {args.aider_python}: its rows are left out)\n")

    print("| tool | build | median s | min s | max s | peak RSS MB (max) |")
    print("|---|---|---:|---:|---:|---:|")
    for tool, (rows, _) in results.items():
        for build, samples in rows.items():
            walls = [wall for wall, _ in samples]
            peak = max(peak for _, peak in samples)
            print(f"| {tool} | {build} | {statistics.median(walls):.3f} | {min(walls):.3f} | "
                  f"{max(walls):.3f} | {peak:.0f} |")
    plumb_detail = results["plumb map"][1]
    print(f"\nplumb map: {plumb_detail['map']['files_shown']} of {plumb_detail['map']['files_total']} files, "
          f"{plumb_detail['map']['definitions_shown']} definitions, {plumb_detail['map']['tokens']} tokens; "
          f"index {plumb_detail['index']}")
    if "Aider RepoMap" in results:
        files_seen, map_tokens, imports, _ = results["Aider RepoMap"][1]
        print(f"Aider RepoMap: {files_seen} files given, map of {map_tokens} tokens; its seconds are "
              f"RepoMap's alone (the process also spent {float(imports):.1f} s importing aider)")


if __name__ == "__main__":
    main()
