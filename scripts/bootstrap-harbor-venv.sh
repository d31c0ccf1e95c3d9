#!/usr/bin/env bash
# Build .venvs/harbor: Python 3.12 with harbor 0.25.0's task model (requirements-harbor.lock,
# --no-deps), for the test that Harbor's own loader accepts referee's Harbor exports.
# PYTHON312 picks the interpreter (default: python3.12 on PATH, else pyenv's 3.12). Without a
# Python 3.12 it says so and exits 0: that one test then skips, naming this script.
# Safe to run again; rebuilt when the lock or this script changes.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venvs/harbor
lock=requirements-harbor.lock
# pyenv's shim answers `command -v` but fails where 3.12 is not the selected version: each
# candidate is tried until one runs.
py=
for candidate in "${PYTHON312:-}" "$(command -v python3.12 || true)" \
    "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12; do
  if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] >= (3, 12)' \
      2>/dev/null; then
    py=$candidate
    break
  fi
done
if [ -z "$py" ]; then
  echo "bootstrap-harbor-venv: no Python 3.12 found (set PYTHON312); skipping .venvs/harbor" >&2
  exit 0
fi
want=$(cat "$lock" "$0" | sha256sum | cut -d' ' -f1)
stamp=$venv/.installed
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile --no-deps -r "$lock" \
  2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
"$venv/bin/python" -c "from harbor.models.task.task import Task"  # the loader imports
echo "$want" > "$stamp"
