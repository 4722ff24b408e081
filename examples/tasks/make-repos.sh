#!/usr/bin/env bash
# Builds the task set's repositories from sources/ as real git histories, offline:
#   examples/tasks/make-repos.sh [DEST]      (DEST defaults to examples/tasks/repos/)
#
# Each sources/<repo>/NN-<slug>.diff is one commit (applied in order, message in NN-<slug>.msg).
# Names, e-mail and dates are fixed and git reads no configuration, so every machine gets the same
# commit ids and tasks.jsonl can name them. An existing DEST/<repo> is replaced.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:-$here/repos}

# No user or system configuration (no hooks path, signing, autocrlf, templates, default branch).
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_COUNT=0
export GIT_AUTHOR_NAME="Plumb Examples" GIT_AUTHOR_EMAIL="examples@plumb.invalid"
export GIT_COMMITTER_NAME="Plumb Examples" GIT_COMMITTER_EMAIL="examples@plumb.invalid"
export TZ=UTC LC_ALL=C

# An empty template folder: git init copies no sample hooks.
template=$(mktemp -d)
trap 'rm -rf "$template"' EXIT

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
for src in "$here"/sources/*/; do
  name=$(basename "$src")
  repo=$dest/$name
  rm -rf "$repo"
  git init -q --template="$template" -b main "$repo"
  n=0
  for diff in "$src"/[0-9][0-9]-*.diff; do
    n=$((n + 1))
    msg=${diff%.diff}.msg
    if [ ! -f "$msg" ]; then
      echo "make-repos.sh: $diff has no commit message file $msg" >&2
      exit 2
    fi
    git -C "$repo" apply --index --whitespace=nowarn "$diff"
    # One commit a day from 2024-03-01, 10:00 UTC.
    date=$(printf '2024-03-%02dT10:00:00+00:00' "$n")
    GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
      git -C "$repo" commit -q --no-verify --no-gpg-sign -F "$msg"
  done
  echo "$name: $(git -C "$repo" rev-list --count HEAD) commits, head $(git -C "$repo" rev-parse HEAD)"
done
