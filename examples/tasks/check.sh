#!/usr/bin/env bash
# Checks every task of the set on the host, without plumb (see check.py for what is checked):
#   examples/tasks/check.sh [TASKS.jsonl]
# Builds the repositories first if repos/ is missing, and checks tasks.jsonl against specs/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -eq 0 ]; then
  [ -d "$here/repos" ] || "$here/make-repos.sh" >/dev/null
  python3 "$here/build-tasks.py" --check
fi
exec python3 "$here/check.py" "$@"
