#!/usr/bin/env bash
# Builds plumb-bench in release and prints the engine's benchmark table: Markdown on stdout,
# progress on stderr. Arguments pass through to plumb-bench:
#   --runs N    repeat every measurement N times (default 7)
#   --dir PATH  write the generated repository into PATH (a new or empty folder) and keep it
# Needs git, Python 3 with pytest and ripgrep; scripts/setup-test-deps.sh installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-test-deps.sh >&2
cargo build --release -p plumb-bench >&2
exec "${CARGO_TARGET_DIR:-target}/release/plumb-bench" "$@"
