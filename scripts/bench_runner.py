#!/usr/bin/env python3
"""The embedded-model runner alone: prompt and generation speed, and peak memory.

Usage: scripts/bench_runner.py [--llm target/release/plumb-llm] [--model 1.5b|0.5b|PATH]
                               [--prompt-words 1800] [--gen 128] [--repeats 3] [--threads 0]

Starts `plumb-llm`, then per repeat sends one fresh prompt (a numbered Python-like listing of about
--prompt-words words, so nothing is in the cache) with `max_tokens` = --gen and no grammar, at
temperature 0. A reply may stop early at an end token, so generation speed is the reply's own
output_tokens over gen_ms. Prints a table of the runner's own timings (prompt_ms, gen_ms, measured
around llama.cpp's calls) and the best repeat. Build the runner first:
    source scripts/llm-cpu-env.sh && cargo build --release -p plumb-llm
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
}


def models_dir():
    if os.environ.get("PLUMB_MODELS_DIR"):
        return Path(os.environ["PLUMB_MODELS_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "plumb" / "models"


def listing(words, salt):
    lines, count, n = [], 0, 0
    while count < words:
        n += 1
        line = f"def step_{salt}_{n}(total, rate):  # line {n}: apply the rate to the running total"
        lines.append(line)
        lines.append(f"    return round(total * rate + {n}, 2)")
        count += len(line.split()) + 6
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default=str(ROOT / "target" / "release" / "plumb-llm"))
    parser.add_argument("--model", default="1.5b")
    parser.add_argument("--prompt-words", type=int, default=1800)
    parser.add_argument("--gen", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    model = Path(args.model) if args.model not in FILES else models_dir() / FILES[args.model]
    if not model.is_file():
        sys.exit(f"{model} is not there; install it with `plumb models fetch {args.model}`")
    if not Path(args.llm).is_file():
        sys.exit(f"{args.llm} does not exist; build it with cargo build --release -p plumb-llm")
    command = [args.llm, "--model", str(model)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    runner = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = json.loads(runner.stdout.readline())
    if ready.get("event") != "ready":
        sys.exit(f"the runner did not start: {ready}")
    print(f"runner {args.llm}, model {model.name}, n_ctx {ready['n_ctx']}, load {ready['load_ms']:.0f} ms, "
          f"{os.cpu_count()} CPUs")
    print()
    print("| repeat | prompt tokens | prompt ms | prompt tok/s | output tokens | gen ms | gen tok/s | peak RSS MB |")
    print("|--:|--:|--:|--:|--:|--:|--:|--:|")
    best = None
    for repeat in range(1, args.repeats + 1):
        prompt = ("<|im_start|>system\nYou explain code.<|im_end|>\n<|im_start|>user\n"
                  f"{listing(args.prompt_words, repeat)}\n\nDescribe every function above, one line each."
                  "<|im_end|>\n<|im_start|>assistant\n")
        request = {"id": repeat, "prompt": prompt, "max_tokens": args.gen, "temperature": 0.0, "seed": repeat}
        runner.stdin.write(json.dumps(request) + "\n")
        runner.stdin.flush()
        reply = json.loads(runner.stdout.readline())
        if "error" in reply:
            sys.exit(f"the runner answered with an error: {reply}")
        fresh = reply["prompt_tokens"] - reply["cached_tokens"]
        prompt_rate = fresh / reply["prompt_ms"] * 1000
        gen_rate = reply["output_tokens"] / reply["gen_ms"] * 1000 if reply["gen_ms"] else 0.0
        print(f"| {repeat} | {fresh} | {reply['prompt_ms']:.0f} | {prompt_rate:.1f} | {reply['output_tokens']} | "
              f"{reply['gen_ms']:.0f} | {gen_rate:.1f} | {reply['peak_rss_kb'] / 1024:.0f} |", flush=True)
        if best is None or prompt_rate > best[0]:
            best = (prompt_rate, gen_rate)
    runner.stdin.close()
    runner.wait()
    print()
    print(f"best repeat: prompt {best[0]:.1f} tok/s, generation {best[1]:.1f} tok/s")


if __name__ == "__main__":
    main()
