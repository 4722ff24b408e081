#!/usr/bin/env bash
# Copies the browser builds of the web page's libraries from npm into crates/server/web/vendor/,
# at the versions crates/server/web/package-lock.json pins (`npm ci`: the lock's integrity
# hashes are checked), and writes vendor/SHA256SUMS. The files are committed, so building plumb
# needs neither npm nor a network; the server embeds them.
#
#   scripts/vendor-web.sh          refresh vendor/ (after changing package.json: run `npm install
#                                  --package-lock-only` in crates/server/web first)
#   scripts/vendor-web.sh --check  fail unless vendor/ is exactly what the lock gives
set -euo pipefail
cd "$(dirname "$0")/.."
web=crates/server/web
check=false
[[ "${1:-}" == "--check" ]] && check=true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$web/package.json" "$web/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

# package file -> vendored name
files=(
  "preact/dist/preact.mjs preact.mjs"
  "preact/hooks/dist/hooks.mjs preact-hooks.mjs"
  "htm/dist/htm.mjs htm.mjs"
  "diff2html/bundles/js/diff2html-ui-base.min.js diff2html-ui-base.min.js"
  "diff2html/bundles/css/diff2html.min.css diff2html.min.css"
  "@highlightjs/cdn-assets/highlight.min.js highlight.min.js"
  "@highlightjs/cdn-assets/styles/github.min.css hljs-light.min.css"
  "@highlightjs/cdn-assets/styles/github-dark.min.css hljs-dark.min.css"
  "marked/lib/marked.esm.js marked.esm.js"
  "dompurify/dist/purify.min.js purify.min.js"
)
licenses=(preact htm diff2html @highlightjs/cdn-assets marked dompurify)

out="$work/vendor"
mkdir -p "$out/licenses"
for entry in "${files[@]}"; do
  read -r from to <<<"$entry"
  cp "$work/node_modules/$from" "$out/$to"
done
for package in "${licenses[@]}"; do
  license=$(ls "$work/node_modules/$package" | grep -i -m1 '^licen[cs]e')
  cp "$work/node_modules/$package/$license" "$out/licenses/${package//\//-}.txt"
done
(cd "$out" && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum > SHA256SUMS)

if $check; then
  if diff -r "$out" "$web/vendor"; then
    echo "vendor-web: $web/vendor is what package-lock.json gives"
  else
    echo "vendor-web: $web/vendor differs from what package-lock.json gives: run scripts/vendor-web.sh" >&2
    exit 1
  fi
else
  rm -rf "$web/vendor"
  cp -r "$out" "$web/vendor"
  echo "vendor-web: $web/vendor refreshed"
fi
