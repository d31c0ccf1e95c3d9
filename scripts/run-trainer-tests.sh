#!/usr/bin/env bash
# Run the trainer contract tests, each in its trainer's own venv (.venvs/NAME, built by
# scripts/bootstrap-trainer-venv.sh NAME from requirements-trainers/NAME.lock):
#   scripts/run-trainer-tests.sh [NAME...]      # default: every trainer with a contract test
# NAME is a venv name (verl, skyrl-gym, verifiers, areal, openrlhf); its test file is
# tests/trainers/test_<name>_contract.py (skyrl-gym: test_skyrl_contract.py). VENVS=DIR uses
# venvs built elsewhere; NO_BOOTSTRAP=1 fails instead of building a missing venv.
set -uo pipefail
cd "$(dirname "$0")/.."
venvs=${VENVS:-.venvs}

test_file() {  # NAME -> its contract test
  local base=${1//-/_}
  case "$1" in
    skyrl-gym) base=skyrl ;;
  esac
  echo "tests/trainers/test_${base}_contract.py"
}

run_one() {  # NAME -> run its contract test in its venv
  local name=$1 file venv
  file=$(test_file "$name")
  venv=$venvs/$name
  [ -f "$file" ] || { echo "run-trainer-tests: no contract test $file for $name" >&2; return 2; }
  if [ ! -x "$venv/bin/python" ]; then
    [ -n "${NO_BOOTSTRAP:-}" ] && { echo "run-trainer-tests: no venv $venv" >&2; return 2; }
    scripts/bootstrap-trainer-venv.sh "$name" || return 1
  fi
  echo "== $name: $file"
  PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" "$venv/bin/python" -m pytest "$file" -q \
    -p no:cacheprovider
  local rc=$?
  [ "$rc" = 5 ] && { echo "run-trainer-tests: $file collected no tests" >&2; return 1; }
  return "$rc"
}

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for lock in requirements-trainers/*.lock; do
    n=$(basename "$lock" .lock)
    [ -f "$(test_file "$n")" ] && names+=("$n")
  done
fi
failed=()
for n in "${names[@]}"; do
  run_one "$n" || failed+=("$n")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-trainer-tests: failed: ${failed[*]}" >&2
  exit 1
fi
echo "run-trainer-tests: passed: ${names[*]}"
