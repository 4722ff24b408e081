#!/usr/bin/env bash
# The test command of the README: every crate's unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo nextest run --workspace --locked --no-fail-fast "$@"
