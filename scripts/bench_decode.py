#!/usr/bin/env python3
"""plumb-llm's decoding: one reply against four side by side, with and without prompt-lookup drafts.

Usage: scripts/bench_decode.py [--llm target/release/plumb-llm] [--model 1.5b|0.5b|PATH]
                               [--repeats 3] [--threads 0] [--drafts 0,4,8,16]

The prompt is a round of the bundled BILL-412 example: the ticket, the file
billing/invoice_totals.py shown whole, and a `replace_function` reply already begun up to its
`new_text` (so the model writes the function out again with its fix, some 180 tokens, most of them
copied from the file; the 1.5B model asked for the call from scratch writes a placeholder instead).
A begun reply cannot be held to a grammar, so the requests have none and stop at the call's end.
The prompt is evaluated once first (`max_tokens` 0), so every measured request decodes only the
reply.

The first table is what one batch of k new tokens costs (k words appended to the cached prompt,
evaluated without generation): on a CPU whose decoding is bound by reading the weights it grows
slowly with k, and only then can side-by-side sequences or drafts pay. In the second, each row is one setting: `n` sequences sampled side by side (temperature 0.7, the candidates' own)
or one (temperature 0.2, a round's first reply), with `draft` tokens guessed by prompt lookup per
decode. Printed per row, the median over --repeats: generated tokens (all sequences), the
runner's own generation time (gen_ms), tokens/s, decodes, drafts kept of drafted, and the time
against the row with the same `n` and no drafts (and, for n > 1, against one sequence without
drafts: the issue's "4 candidates in at most 1.5x the time of one"). A last check compares the
text of one reply at temperature 0 with and without drafts: drafting must not change it.
Build the runner first:
    source scripts/llm-cpu-env.sh && cargo build --release -p plumb-llm
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
}
# The reply starts here, as the model's own would: the rest is the function written out again,
# most of it copied from the file above (sent without a grammar, since the reply is begun).
PREFIX = (
    '{"thought": "GST must be worked out on the price after the discount.", "tool": '
    '"replace_function", "arguments": {"path": "billing/invoice_totals.py", "name": '
    '"line_totals", "new_text": "'
)
STOP = ['"}}']


def models_dir():
    if os.environ.get("PLUMB_MODELS_DIR"):
        return Path(os.environ["PLUMB_MODELS_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "plumb" / "models"


def prompt():
    source = (ROOT / "examples/billing/billing/invoice_totals.py").read_text()
    ticket = (ROOT / "examples/billing/BILL-412.md").read_text()
    shown = "\n".join(f"{i + 1}| {line}" for i, line in enumerate(source.splitlines()))
    return (
        "<|im_start|>system\nYou fix bugs in a Python repository with tools. Reply with one tool call "
        "as JSON: a short thought, the tool, its arguments. replace_function(path, name, new_text) "
        "replaces the whole definition of the function `name` in `path` with `new_text`.<|im_end|>\n"
        f"<|im_start|>user\n{ticket}<|im_end|>\n"
        '<|im_start|>assistant\n{"thought": "Read the totals.", "tool": "read_file", '
        '"arguments": {"path": "billing/invoice_totals.py"}}<|im_end|>\n'
        f"<|im_start|>user\n[read_file billing/invoice_totals.py]\n{shown}<|im_end|>\n"
        "<|im_start|>user\nFix line_totals: write the whole function again with replace_function."
        "<|im_end|>\n<|im_start|>assistant\n" + PREFIX
    )


class Runner:
    def __init__(self, llm, model, threads):
        args = [llm, "--model", str(model), "--ctx", "8192", "--parallel", "4"]
        if threads:
            args += ["--threads", str(threads)]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = json.loads(self.proc.stdout.readline())
        if ready.get("event") != "ready":
            sys.exit(f"plumb-llm did not start: {ready}")
        self.id = 0

    def ask(self, **request):
        self.id += 1
        request["id"] = self.id
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            sys.exit(f"plumb-llm failed: {reply['error']}")
        return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default=str(ROOT / "target" / "release" / "plumb-llm"))
    parser.add_argument("--model", default="1.5b")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--drafts", default="0,4,8,16")
    args = parser.parse_args()
    model = Path(args.model) if args.model not in FILES else models_dir() / FILES[args.model]
    if not model.is_file():
        sys.exit(f"{model} is not there; install it with `plumb models fetch {args.model}`")
    if not Path(args.llm).is_file():
        sys.exit(f"{args.llm} does not exist; build it with cargo build --release -p plumb-llm")
    drafts = [int(d) for d in args.drafts.split(",")]
    text = prompt()
    runner = Runner(args.llm, model, args.threads)
    warm = runner.ask(prompt=text, max_tokens=0)
    print(f"prompt evaluation: {warm['prompt_tokens']} tokens in {warm['prompt_ms'] / 1000:.1f} s "
          f"({warm['prompt_tokens'] / warm['prompt_ms'] * 1000:.0f} tokens/s)")
    print()
    print(f"model {model.name}, prompt {warm['prompt_tokens']} tokens, {args.repeats} repeats, "
          f"threads {args.threads or 'all'}", file=sys.stderr)

    # What a batch of k new tokens costs: the prompt plus k more words, the prompt cached.
    words = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
             "sigma tau upsilon phi chi psi omega").split()
    print("| new tokens in one batch | ms (median) | ms a token | against one token |")
    print("|---:|---:|---:|---:|")
    single = None
    for k in (1, 2, 4, 8, 16):
        costs = []
        for repeat in range(args.repeats):
            extra = " ".join(words[(i * 7 + repeat * 5 + k) % len(words)] for i in range(k))
            reply = runner.ask(prompt=text + extra, max_tokens=0)
            fresh = reply["prompt_tokens"] - reply["cached_tokens"]
            costs.append((reply["prompt_ms"], fresh))
        ms = statistics.median(c[0] for c in costs)
        fresh = statistics.median(c[1] for c in costs)
        single = single or ms / fresh
        print(f"| {fresh:.0f} | {ms:.0f} | {ms / fresh:.1f} | {ms / single:.2f}x |")
    print()
    runner.ask(prompt=text, max_tokens=0)

    rows = {}
    for n in (1, 4):
        for draft in drafts:
            runs = []
            for repeat in range(args.repeats):
                reply = runner.ask(
                    prompt=text, stop=STOP, max_tokens=512, n=n, draft=draft,
                    temperature=0.2 if n == 1 else 0.7, seed=1000 + repeat,
                )
                runs.append(reply)
                print(f"  n={n} draft={draft} #{repeat + 1}: {reply['output_tokens']} tokens in "
                      f"{reply['gen_ms'] / 1000:.1f} s, {reply['decodes']} decodes", file=sys.stderr)
            rows[(n, draft)] = runs

    def median(runs, key):
        return statistics.median(run[key] for run in runs)

    print("| sequences | draft | tokens | gen s | tokens/s | decodes | drafts kept / drafted | time vs same n, no drafts | time vs 1 sequence, no drafts |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (n, draft), runs in rows.items():
        gen = median(runs, "gen_ms") / 1000
        tokens = median(runs, "output_tokens")
        base = median(rows[(n, drafts[0])], "gen_ms") / 1000
        one = median(rows[(1, drafts[0])], "gen_ms") / 1000
        kept = sum(r["accepted"] for r in runs)
        drafted = sum(r["drafted"] for r in runs)
        print(f"| {n} | {draft} | {tokens:.0f} | {gen:.1f} | {tokens / gen:.1f} | {median(runs, 'decodes'):.0f} "
              f"| {kept} / {drafted} | {gen / base:.2f}x | {gen / one:.2f}x |")

    plain = runner.ask(prompt=text, stop=STOP, max_tokens=512, temperature=0, draft=0)
    drafted = runner.ask(prompt=text, stop=STOP, max_tokens=512, temperature=0, draft=max(drafts))
    same = plain["text"] == drafted["text"]
    print(f"\ntemperature 0, draft {max(drafts)} against none: "
          f"{'the same text' if same else 'DIFFERENT text'} ({plain['output_tokens']} tokens)")
    runner.close()
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
