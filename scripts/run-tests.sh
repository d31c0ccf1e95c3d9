#!/usr/bin/env bash
# Run lint, type checks and the test suite. pytest's "no tests collected" (exit 5) is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
"$VENV/bin/ruff" check src tests bench || exit 1
"$VENV/bin/mypy" || exit 1
# The slowest tests are listed, so that the suite's time budget can be watched in CI logs.
"$VENV/bin/python" -m pytest --durations=30 "$@"
rc=$?
if [ "$rc" = 5 ]; then
  echo "run-tests: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$rc"
