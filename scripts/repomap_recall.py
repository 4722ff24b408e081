#!/usr/bin/env python3
"""How often the ranked repo map puts the files a fix touched near the top, beside Aider's ranking.

For each SWE-bench record (default: the Lite dev split in data/swebench), the problem statement
alone is the ticket; the gold patch's files are the answer. recall@k is the share of records whose
gold files are all among the first k files of the ranking. Two rankings of the same tree:

- plumb: `plumb map --repo TREE --ticket STATEMENT --json --top 10` (its `ranked_files`);
- Aider 0.86.2: `RepoMap.get_ranked_tags` with the mentions Aider's own coder derives from a chat
  message (`get_file_mentions`, `get_ident_mentions`, `get_ident_filename_matches`), no file in
  the chat; the file order is the order in which files first appear in its ranked tags. The
  "important files" Aider shows before the ranking (README, setup.py, …) are left out: they are
  not ranked.

Trees: the records' own base commits where data/swebench has them (marshmallow); otherwise the
PyPI sdist of the newest release of the record's version series (e.g. 0.6.x) uploaded before the
record was created, which is near the base commit but not it — a gold file missing from that sdist
is reported and the record left out of both rankings' counts.

    python3 scripts/repomap_recall.py [--records data/swebench/lite-dev.jsonl]
        [--plumb target/release/plumb] [--aider-python /opt/plumb-bench/aider-0.86.2/bin/python]

Sdists are downloaded once from PyPI into $PLUMB_BENCH_DIR (default /tmp/plumb-repomap-bench).
Prints a Markdown table per record and the recall of both.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# SWE-bench repository → its PyPI project.
PYPI_NAMES = {
    "sqlfluff/sqlfluff": "sqlfluff",
    "marshmallow-code/marshmallow": "marshmallow",
    "pvlib/pvlib-python": "pvlib",
    "pylint-dev/astroid": "astroid",
    "pyvista/pyvista": "pyvista",
    "pydicom/pydicom": "pydicom",
}

AIDER_SNIPPET = r"""
import json, os, re, sys
from collections import defaultdict
from pathlib import Path
root, statement_file = sys.argv[1], sys.argv[2]
statement = Path(statement_file).read_text()
from aider.io import InputOutput
from aider.repomap import RepoMap

class Estimate:
    def token_count(self, text):
        return -(-len(text.encode()) // 3)

files = []
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    files.extend(str(Path(dirpath) / f) for f in filenames if not f.startswith("."))
rel = sorted(os.path.relpath(f, root) for f in files)

# Aider's Coder.get_file_mentions, get_ident_mentions and get_ident_filename_matches (0.86.2),
# with every file addable and none in the chat.
words = set(w for w in statement.split())
words = set(w.rstrip(",.!;:?") for w in words)
words = set(w.strip("\"'`*_") for w in words)
mentioned = set()
by_name = defaultdict(list)
for r in rel:
    if r in words:
        mentioned.add(r)
    name = os.path.basename(r)
    if "/" in name or "." in name or "_" in name or "-" in name:
        by_name[name].append(r)
for name, rels in by_name.items():
    if len(rels) == 1 and name in words:
        mentioned.add(rels[0])
idents = set(re.split(r"\W+", statement))
stems = defaultdict(set)
for r in rel:
    stem = Path(r).stem.lower()
    if len(stem) >= 5:
        stems[stem].add(r)
for ident in idents:
    if len(ident) >= 5:
        mentioned.update(stems[ident.lower()])

io = InputOutput(yes=True, pretty=False, fancy_input=False)
repo_map = RepoMap(map_tokens=1024, root=root, main_model=Estimate(), io=io)
ranked = repo_map.get_ranked_tags([], files, mentioned, idents)
order = []
for tag in ranked:
    name = tag[0]
    if name not in order:
        order.append(name)
print(json.dumps(order[:10]))
"""


def bench_dir():
    return Path(os.environ.get("PLUMB_BENCH_DIR", "/tmp/plumb-repomap-bench"))


def gold_files(patch):
    return sorted(set(re.findall(r"^diff --git a/(\S+) b/", patch, re.M)))


def pypi_release_before(project, series, created_at):
    """The newest final release of the `series` (e.g. "0.6": 0.6, 0.6.x) with an sdist uploaded
    before `created_at` (ISO date); the newest final release before it when the series has none."""
    index_url = f"https://pypi.org/pypi/{project}/json"
    with urllib.request.urlopen(index_url, timeout=60) as answer:
        releases = json.load(answer)["releases"]
    candidates = []
    for version, files in releases.items():
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
            continue  # a pre-release, a dev or post release
        for file in files:
            if file["packagetype"] != "sdist" or file.get("yanked"):
                continue
            uploaded = file["upload_time_iso_8601"]
            if uploaded < created_at:
                in_series = version == series or version.startswith(series + ".")
                url = urllib.parse.urljoin(index_url, file["url"])
                candidates.append((in_series, uploaded, version, url, file["filename"]))
    if not candidates:
        sys.exit(f"{project}: no sdist on PyPI before {created_at}")
    _, uploaded, version, url, filename = max(candidates)
    return uploaded, version, url, filename


def unpack(archive, into):
    into.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(into)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    entries = list(into.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else into


def tree_for(record):
    """(folder, description) of the tree a record is ranked on."""
    base = record["base_commit"][:10]
    repo_tarball = REPO_ROOT / "data" / "swebench" / f"{record['repo'].split('/')[1]}-{base}.tar.gz"
    if repo_tarball.exists():
        folder = bench_dir() / "recall" / f"{record['repo'].split('/')[1]}-{base}"
        if not folder.exists():
            unpack(repo_tarball, folder)
        return (only_child(folder), f"base commit {base}")
    project = PYPI_NAMES[record["repo"]]
    uploaded, version, url, filename = pypi_release_before(
        project, record["version"], record["created_at"]
    )
    archive = bench_dir() / "sdists" / filename
    if not archive.exists():
        archive.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=300) as answer, open(archive, "wb") as out:
            shutil.copyfileobj(answer, out)
    folder = bench_dir() / "recall" / f"{project}-{version}"
    if not folder.exists():
        unpack(archive, folder)
    return (only_child(folder), f"sdist {project} {version} ({uploaded[:10]})")


def only_child(folder):
    entries = list(folder.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def plumb_ranking(plumb, root, statement_file):
    env = dict(os.environ, XDG_CACHE_HOME=str(bench_dir() / "plumb-cache"))
    out = subprocess.run(
        [plumb, "map", "--repo", str(root), "--ticket", statement_file, "--json", "--top", "10"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout
    return [row["path"] for row in json.loads(out)["ranked_files"]]


def aider_ranking(python, root, statement_file):
    with tempfile.TemporaryDirectory() as scratch:
        # Aider writes its tags cache into the root: rank a copy so the tree stays as downloaded.
        copy = Path(scratch) / "tree"
        shutil.copytree(root, copy, symlinks=True)
        out = subprocess.run(
            [python, "-c", AIDER_SNIPPET, str(copy), statement_file],
            capture_output=True, text=True, check=True,
        ).stdout
    return json.loads(out.strip().splitlines()[-1])


def position(ranking, files):
    """1-based rank by which every gold file has appeared, or None when one is not in the top 10."""
    places = [ranking.index(f) + 1 for f in files if f in ranking]
    return max(places) if len(places) == len(files) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default=str(REPO_ROOT / "data" / "swebench" / "lite-dev.jsonl"))
    parser.add_argument("--plumb", default=str(REPO_ROOT / "target" / "release" / "plumb"))
    parser.add_argument("--aider-python", default="/opt/plumb-bench/aider-0.86.2/bin/python")
    args = parser.parse_args()
    has_aider = Path(args.aider_python).exists()

    records = [json.loads(line) for line in open(args.records)]
    print("| record | tree | gold files | plumb rank | Aider rank |")
    print("|---|---|---|---|---|")
    counted = {"plumb": [], "aider": []}
    left_out = []
    for record in records:
        root, described = tree_for(record)
        gold = gold_files(record["patch"])
        missing = [f for f in gold if not (root / f).is_file()]
        if missing:
            left_out.append((record["instance_id"], described, missing))
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as statement:
            statement.write(record["problem_statement"])
        try:
            ours = position(plumb_ranking(args.plumb, root, statement.name), gold)
            theirs = position(aider_ranking(args.aider_python, root, statement.name), gold) if has_aider else "—"
        finally:
            os.unlink(statement.name)
        counted["plumb"].append(ours)
        if has_aider:
            counted["aider"].append(theirs)
        shown = lambda place: "—" if place == "—" else (str(place) if place else "> 10")
        print(f"| {record['instance_id']} | {described} | {', '.join(gold)} | {shown(ours)} | {shown(theirs)} |")

    print()
    for who, places in counted.items():
        if not places:
            continue
        n = len(places)
        at = lambda k: sum(1 for p in places if p is not None and p <= k)
        print(f"{who}: recall@5 {at(5)}/{n} ({100 * at(5) / n:.0f} %), recall@10 {at(10)}/{n} ({100 * at(10) / n:.0f} %)")
    for instance, described, missing in left_out:
        print(f"left out: {instance} ({described} lacks {', '.join(missing)})")


if __name__ == "__main__":
    main()
