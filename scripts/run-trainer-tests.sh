#!/usr/bin/env bash
# The trainer contract tests, each in its trainer's own venv: the test file of NAME runs with
# .venvs/NAME/bin/python, against referee's built wheel installed there with that trainer's extra
# (scripts/bootstrap-trainer-venv.sh); src/ is never on sys.path (tests/trainers/conftest.py
# checks that referee is the installed one).
#   scripts/run-trainer-tests.sh [NAME...]    default: every trainer with a contract test
# NAME is a venv name (verl, skyrl-gym, verifiers, areal, openrlhf; requirements-trainers/NAME.lock);
# its test is tests/trainers/test_<name>_contract.py (skyrl-gym: test_skyrl_contract.py).
# A missing venv is built first (scripts/bootstrap-trainer-venv.sh NAME). If it cannot be built,
# that trainer is skipped with the reason printed, unless REFEREE_REQUIRE_TRAINERS=1 (CI, and
# `make test-trainers`): then the run fails. TRAINER_VENVS=DIR uses venvs already built in DIR
# (DIR/NAME) and builds nothing. Extra pytest arguments: PYTEST_ARGS. pytest's "no tests" (exit
# 5) is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."

test_file() {  # NAME -> its contract test
  local base=${1//-/_}
  case "$1" in
    skyrl-gym) base=skyrl ;;
  esac
  echo "tests/trainers/test_${base}_contract.py"
}

venvs=${TRAINER_VENVS:-}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for lock in requirements-trainers/*.lock; do
    n=$(basename "$lock" .lock)
    [ -f "$(test_file "$n")" ] && names+=("$n")
  done
fi
[ ${#names[@]} -gt 0 ] || { echo "run-trainer-tests: no contract tests found" >&2; exit 2; }

status=0
passed=()
for name in "${names[@]}"; do
  file=$(test_file "$name")
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
  # pyproject's addopts leave tests/trainers out of the main suite: replaced here. No PYTHONPATH:
  # the repository's root is on sys.path (tests/ is a package: tests.policy), src/ is not.
  env -u PYTHONPATH "$py" -m pytest -o addopts="-ra --strict-markers" -p no:cacheprovider \
    ${PYTEST_ARGS:-} "$file"
  rc=$?
  if [ "$rc" = 5 ]; then
    echo "run-trainer-tests: $file collected no tests; that is a failure" >&2
    rc=1
  fi
  if [ "$rc" = 0 ]; then passed+=("$name"); else status=1; fi
done
echo "run-trainer-tests: passed: ${passed[*]:-none}" >&2
exit $status
