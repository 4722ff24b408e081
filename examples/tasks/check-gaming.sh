#!/usr/bin/env bash
# Plays every scripted model under gaming/ on the host and scores it as SWE-bench does, without
# plumb (see check_gaming.py): each must score unresolved, and each task's gold patch must resolve.
#   examples/tasks/check-gaming.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -d "$here/repos" ] || "$here/make-repos.sh" >/dev/null
exec python3 "$here/check_gaming.py" "$@"
