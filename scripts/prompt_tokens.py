#!/usr/bin/env python3
"""Counts the real prompt tokens of prompts written by the prompt benchmark.

    PLUMB_PROMPT_DUMP=/tmp/prompts cargo nextest run -p plumb-agent prompt_bench
    scripts/prompt_tokens.py PLUMB_LLM MODEL.gguf /tmp/prompts

Each `round-N.txt` is sent to `plumb-llm` (JSON Lines on stdin/stdout) with `max_tokens` 0, which
only evaluates the prompt; the reply's `prompt_tokens` is the model's own tokenizer's count. Prints
one line per round: bytes, the bytes/3 estimate plumb journals, the real count, bytes per token,
and, since the rounds go to one runner in order as a run's requests do, how many tokens the
runner evaluated (those not reused from the previous round's cached prefix) and in how long.
"""

import json
import pathlib
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    runner, model, folder = sys.argv[1:]
    files = sorted(
        pathlib.Path(folder).glob("round-*.txt"),
        key=lambda p: int(p.stem.split("-")[1]),
    )
    if not files:
        print(f"no round-N.txt files in {folder}", file=sys.stderr)
        return 2
    child = subprocess.Popen(
        [runner, "--model", model, "--ctx", "16384", "--threads", "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    ready = json.loads(child.stdout.readline())
    if ready.get("event") == "error" or "error" in ready:
        print(f"plumb-llm did not start: {ready}", file=sys.stderr)
        return 1
    print("round  bytes  estimate(bytes/3)  tokens  bytes/token  evaluated  prompt_ms")
    for number, path in enumerate(files, 1):
        text = path.read_text()
        child.stdin.write(json.dumps({"id": number, "prompt": text, "max_tokens": 0}) + "\n")
        child.stdin.flush()
        reply = json.loads(child.stdout.readline())
        if "prompt_tokens" not in reply:
            print(f"{path.name}: {reply}", file=sys.stderr)
            return 1
        tokens = reply["prompt_tokens"]
        size = len(text.encode())
        evaluated = tokens - reply.get("cached_tokens", 0)
        print(
            f"{path.stem:>8} {size:>6} {-(-size // 3):>8} {tokens:>8} {size / tokens:>8.2f}"
            f" {evaluated:>8} {reply.get('prompt_ms', 0):>9.0f}"
        )
    child.stdin.close()
    child.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
