#!/usr/bin/env bash
# Sets up what the BILL-412 example needs, builds plumb, and runs `plumb fix` on it.
# Runs live under $PLUMB_HOME (default ~/.local/state/plumb); the example folder is never changed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-test-deps.sh
cargo build --release --locked -p plumb
exec target/release/plumb fix \
  --repo examples/billing \
  --ticket examples/billing/BILL-412.md \
  --model script:examples/billing/bill-412.script.jsonl "$@"
