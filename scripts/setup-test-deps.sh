#!/usr/bin/env bash
# Installs what plumb's tests use on Debian: git, Python 3 with pytest (the BILL-412 example's
# suite) and ruff (the lint step), bubblewrap and gVisor's runsc (the sandbox backends), ripgrep (the search benchmark's
# reference). Idempotent; quiet when all is present.
set -euo pipefail

need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-pip)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v runsc >/dev/null 2>&1 || need_apt+=(runsc)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: please install: ${need_apt[*]} (apt-get install ${need_apt[*]})" >&2
    exit 2
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# pytest runs the example's suite; ruff is the Python linter of the check ladder's lint step.
for module in pytest ruff; do
  if ! python3 -c "import $module" >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check "$module" \
      || python3 -m pip install --quiet --break-system-packages "$module"
  fi
done

if [ "${1:-}" = "--tests" ] && ! cargo nextest --version >/dev/null 2>&1; then
  cargo install --locked cargo-nextest
fi
echo "setup: git $(git --version | cut -d' ' -f3), $(python3 -c 'import sys, pytest; print(f"python {sys.version.split()[0]}, pytest {pytest.__version__}")')"
