#!/usr/bin/env bash
# Build referee's wheel into dist/ (git-ignored) and print its path: the wheel the trainer venvs
# install (scripts/bootstrap-trainer-venv.sh), with pip's resolver, as a user would.
#   scripts/build-wheel.sh
# Builds only when the sources changed: dist/.source-hash holds a hash of pyproject.toml,
# README.md and every file under src/ the wheel was built from; one build serves every venv of
# a run. PYTHON picks the interpreter that runs `pip wheel` (default python3.11, not .venv's:
# CI builds the trainer venvs while `make test` is still making .venv); the build backend
# (hatchling, pyproject's build-system) comes from pip's configured indexes into an isolated
# build environment.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p dist
exec 9>dist/.lock
flock 9  # two venvs built at once wait for one build
py=${PYTHON:-python3.11}
hash=$( { sha256sum pyproject.toml README.md
          find src -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | sort -z \
            | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)
wheel=$(ls dist/referee-*.whl 2>/dev/null | head -n1 || true)
if [ -n "$wheel" ] && [ "$(cat dist/.source-hash 2>/dev/null)" = "$hash" ]; then
  echo "$wheel"; exit 0
fi
rm -f dist/referee-*.whl dist/.source-hash
"$py" -m pip wheel -q --disable-pip-version-check --no-deps -w dist . >&2
echo "$hash" > dist/.source-hash
ls dist/referee-*.whl
