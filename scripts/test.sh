#!/usr/bin/env bash
# The test command of the README: every crate's unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# llama.cpp gets the CPU paths this machine has (the same for every cargo call, so nothing rebuilds).
source scripts/llm-cpu-env.sh
cargo nextest run --workspace --locked --no-fail-fast "$@"
