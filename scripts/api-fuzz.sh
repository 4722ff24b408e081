#!/usr/bin/env bash
# Fuzzes plumb serve's API from its own OpenAPI document with schemathesis (PyPI): starts a server
# on a fresh SQLite store in a throwaway home (no workers, so no task runs and every request is
# about the API itself), makes a token, and lets schemathesis generate valid and invalid requests
# for every operation. Fails on any 5xx, a status or content type the document does not list, or a
# response body that does not match its schema. Bounded by --max-examples per operation and phase.
#
#   scripts/api-fuzz.sh [PLUMB_BINARY]      (default: the debug build in the cargo target folder)
#
# PLUMB_FUZZ_EXAMPLES (default 100) sets the examples per operation and phase.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
plumb="${1:-$target/debug/plumb}"
if [ ! -x "$plumb" ]; then
  echo "api-fuzz: no plumb binary at $plumb: build it (cargo build -p plumb) or give its path" >&2
  exit 2
fi
# schemathesis lives in a folder of its own (scripts/setup-test-deps.sh --tests puts it there).
st_dir="${PLUMB_SCHEMATHESIS_DIR:-/opt/plumb-test-tools/schemathesis-4.32.5}"
if [ ! -f "$st_dir/.installed" ]; then
  echo "api-fuzz: schemathesis is missing from $st_dir: scripts/setup-test-deps.sh --tests installs it (PLUMB_SCHEMATHESIS_DIR names another folder)" >&2
  exit 2
fi

home="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$home"
}
trap cleanup EXIT

export PLUMB_HOME="$home/state" XDG_CONFIG_HOME="$home/config"
db="sqlite:$home/plumb.db"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
token="$("$plumb" token create --tenant fuzz --db "$db")"
"$plumb" -c "model=script:$PWD/examples/billing/bill-412.script.jsonl" \
  serve --db "$db" --workers 0 --listen "127.0.0.1:$port" 2>"$home/serve.log" &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -fsS "$base/api/capabilities" >/dev/null 2>&1 && break
  sleep 0.2
done

status=0
# The event stream of a real, queued task stays open by design (it follows the task); the fuzzer
# only ever invents ids, which end at once with 404, and the stream has its own tests.
# From the throwaway home: schemathesis keeps a cache folder where it runs.
(cd "$home" && PYTHONPATH="$st_dir" python3 -m schemathesis.cli --no-color run "$base/api/openapi.json" \
  --header "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-examples "${PLUMB_FUZZ_EXAMPLES:-100}" \
  --request-timeout 10 \
  --seed 4117 \
  --generation-deterministic \
  --suppress-health-check all) || status=$?
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "api-fuzz: plumb serve is gone; its log:" >&2
  cat "$home/serve.log" >&2
  exit 1
fi
if grep -q "panicked" "$home/serve.log"; then
  echo "api-fuzz: plumb serve panicked; its log:" >&2
  cat "$home/serve.log" >&2
  exit 1
fi
exit "$status"
