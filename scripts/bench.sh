#!/usr/bin/env bash
# Builds plumb-bench in release and prints a benchmark table: Markdown on stdout, progress on
# stderr. The first argument chooses the table; the rest pass through to plumb-bench:
#   scripts/bench.sh [engine]     the engine's table (the default):
#     --runs N          repeat every measurement N times (default 7)
#     --dir PATH        write the generated repository into PATH (a new or empty folder) and keep it
#   scripts/bench.sh sandbox      spawn overhead per command of the none, bwrap and gvisor
#                                 sandboxes, interleaved in one run (issue 3's benchmark):
#     --true-runs N     run `true` N times per backend (default 50)
#     --pytest-runs N   run the BILL-412 suite N times per backend (default 10)
#   scripts/bench.sh sse          the server-sent events parser on one line of 1, 4 and 16 MiB
#     --runs N          repeat every measurement N times (default 7)
#   scripts/bench.sh search --tree DIR   search_code beside ripgrep on a large tree (e.g. the
#                                 SymPy sdist scripts/repomap_bench.py unpacks)
#     --runs N          repeat every query N times (default 7)
#   scripts/bench.sh prompt --tree DIR --test-cmd CMD   the prompt's size round by round over a
#                                 scripted run on a large Python tree, at the defaults and with
#                                 every result whole (docs/prompt.md)
#     --rounds N        rounds of the scripted run (default 30)
#   scripts/bench.sh all          the engine's and the sandbox's tables, the engine's first
# Needs git, Python 3 with pytest and ripgrep, and for the sandbox table bubblewrap and runsc
# (gVisor runs only as root); scripts/setup-test-deps.sh installs what is missing. A backend
# that does not work here gets a row saying why instead of figures.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-test-deps.sh >&2
cargo build --release -p plumb-bench >&2
exec "${CARGO_TARGET_DIR:-target}/release/plumb-bench" "$@"
