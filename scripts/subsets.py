#!/usr/bin/env python3
"""The tune and confirm subsets of HumanEvalFix that changes to the loop, prompts or helpers are judged on.

Usage: scripts/subsets.py [--lang python|js|rust|go|all] [--data data/humanevalpack]
                          [--tune 12] [--confirm 24]

Prints, per language, a `--filter` regular expression for `plumb eval` for each subset:

- *tune*: tasks one may read task by task while changing plumb;
- *confirm*: other tasks, run before and after a change but never opened one by one. A change is
  kept only if it does not lower the confirm count.

Left out of both: the subsets earlier work was tuned on (the fixed Python 12 and the 25-task
"every sixth" Python subset, the fixed Rust 13), and the tasks whose gold patch plumb's oracle run
does not resolve (the buggy code never ends or runs out of memory, or the gold patch fails the
hidden test: nothing can resolve them). The rest is shuffled with a fixed seed, so every session
gets the same subsets; the first --tune tasks are the tune subset, the next --confirm the
confirm subset.
"""

import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = "plumb tune/confirm subsets, issue 36"
LANGS = {"python": "Python", "js": "JavaScript", "rust": "Rust", "go": "Go"}

# Tuned on in earlier sessions (bench/eval/README.md).
TUNED = {
    "python": {1, 7, 14, 21, 27, 34, 41, 47, 54, 61, 67, 74,
               81, 87, 94, 101, 107, 114, 121, 127, 134, 141, 147, 154, 160},
    "rust": {1, 14, 27, 41, 54, 67, 81, 94, 107, 121, 134, 147, 160},
    "js": set(),
    "go": set(),
}
# Not resolved by the oracle (the gold patch) on the full split: bad tasks, or a gold patch that
# fails the hidden test (bench/eval/oracle-*, and the Python and JavaScript oracle runs of
# issue 35).
UNRESOLVABLE = {
    "python": {123, 156, 160},
    "js": {155, 156, 162},
    "rust": {16, 32, 49, 156},
    "go": {9, 32, 38, 76, 95, 127, 144, 158},
}


def subsets(lang, data, tune, confirm):
    path = data / f"{lang}.jsonl"
    numbers = []
    for line in path.read_text().splitlines():
        task_id = json.loads(line)["task_id"]
        numbers.append(int(task_id.split("/")[1]))
    pool = sorted(set(numbers) - TUNED[lang] - UNRESOLVABLE[lang])
    random.Random(f"{SEED} {lang}").shuffle(pool)
    if len(pool) < tune + confirm:
        raise SystemExit(f"{path}: only {len(pool)} tasks left for {tune} + {confirm}")
    return sorted(pool[:tune]), sorted(pool[tune:tune + confirm])


def regex(lang, numbers):
    return f"^{LANGS[lang]}/({'|'.join(str(n) for n in numbers)})$"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lang", default="all", choices=[*LANGS, "all"])
    parser.add_argument("--data", default=str(ROOT / "data" / "humanevalpack"))
    parser.add_argument("--tune", type=int, default=12)
    parser.add_argument("--confirm", type=int, default=24)
    args = parser.parse_args()
    data = Path(args.data)
    for lang in LANGS if args.lang == "all" else [args.lang]:
        tune, confirm = subsets(lang, data, args.tune, args.confirm)
        print(f"{lang} tune ({len(tune)}):    {regex(lang, tune)}")
        print(f"{lang} confirm ({len(confirm)}): {regex(lang, confirm)}")


if __name__ == "__main__":
    main()
