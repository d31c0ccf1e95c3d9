#!/usr/bin/env bash
# The trainer contract tests, each in its trainer's own venv: tests/trainers/test_NAME_contract.py
# runs with .venvs/NAME/bin/python and PYTHONPATH=src (referee is not installed there).
#   scripts/run-trainer-tests.sh [NAME...]    default: every trainer with a contract test
# A missing venv is built first (scripts/bootstrap-trainer-venv.sh NAME). If it cannot be built,
# that trainer is skipped with the reason printed, unless REFEREE_REQUIRE_TRAINERS=1 (CI, and
# `make test-trainers`): then the run fails. TRAINER_VENVS=DIR uses venvs already built in DIR
# (DIR/NAME) and builds nothing. Extra pytest arguments: PYTEST_ARGS.
set -uo pipefail
cd "$(dirname "$0")/.."

venvs=${TRAINER_VENVS:-}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/trainers/test_*_contract.py; do
    [ -e "$f" ] || continue
    n=${f#tests/trainers/test_}
    n=${n%_contract.py}
    names+=("${n//_/-}")
  done
fi
[ ${#names[@]} -gt 0 ] || { echo "run-trainer-tests: no contract tests found" >&2; exit 2; }

status=0
for name in "${names[@]}"; do
  file=tests/trainers/test_${name//-/_}_contract.py
  [ -f "$file" ] || { echo "run-trainer-tests: $name: no $file" >&2; status=1; continue; }
  if [ -n "$venvs" ]; then
    py=$venvs/$name/bin/python
    ready=$([ -x "$py" ] && echo yes || echo "no $py")
  else
    py=.venvs/$name/bin/python
    if scripts/bootstrap-trainer-venv.sh "$name"; then ready=yes
    else ready="scripts/bootstrap-trainer-venv.sh $name failed"; fi
  fi
  if [ "$ready" != yes ]; then
    if [ "${REFEREE_REQUIRE_TRAINERS:-0}" = 1 ]; then
      echo "run-trainer-tests: $name: FAILED: its venv is not there ($ready)" >&2
      status=1
    else
      echo "run-trainer-tests: $name: SKIPPED: its venv is not there ($ready)" >&2
    fi
    continue
  fi
  echo "run-trainer-tests: $name ($file)"
  # pyproject's addopts leave tests/trainers out of the main suite: replaced here.
  PYTHONPATH=src "$py" -m pytest -o addopts="-ra --strict-markers" -p no:cacheprovider \
    ${PYTEST_ARGS:-} "$file" || status=1
done
exit $status
