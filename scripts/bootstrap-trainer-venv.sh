#!/usr/bin/env bash
# Build the virtual environment of one trainer's contract tests: .venvs/NAME.
#   scripts/bootstrap-trainer-venv.sh verl|skyrl-gym|verifiers|areal|openrlhf
# 1. requirements-trainers/NAME.lock, every package with --no-deps: the trainer and what the code
#    the tests drive imports (the trainers' declared dependencies pull GPU torch builds, vLLM,
#    deepspeed, flash-attn...), plus referee's own requirements, pinned.
# 2. referee's built wheel (scripts/build-wheel.sh, dist/) with that trainer's extra, installed
#    WITH pip's resolver and the lock as constraints: `pip install 'dist/referee-*.whl[verl]'`.
#    If referee's declared requirements do not fit what the trainer's lock holds, this fails
#    (ResolutionImpossible), and so do the contract tests. A requirement the lock lacks fails too
#    (the lock must name every package of the venv: reproducible, offline-friendly); the message
#    names it. The tests import this installed referee, never src/ (tests/trainers/conftest.py).
# Safe to run again. The venv is rebuilt when its lock, referee's declared requirements or this
# script changed (.venvs/NAME/.installed holds their hash); when only referee's code changed, the
# new wheel replaces the old one (again with the resolver). PYTHON picks the interpreter (default
# python3.11; every trainer here installs on 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."

name=${1:?usage: $0 verl|skyrl-gym|verifiers|areal|openrlhf}
lock=requirements-trainers/$name.lock
venv=.venvs/$name
[ -f "$lock" ] || { echo "no lock file $lock" >&2; exit 2; }
case "$name" in  # the venv -> referee's extra for that trainer (pyproject.toml, "# Trainers")
  verl) extra=verl ;;
  skyrl-gym) extra=skyrl ;;
  verifiers) extra=prime ;;
  areal) extra=areal ;;
  openrlhf) extra=openrlhf ;;
  *) echo "bootstrap-trainer-venv: no referee extra known for $name" >&2; exit 2 ;;
esac
pip_q=(-q --disable-pip-version-check --no-compile)

wheel=$(scripts/build-wheel.sh)
# What the venv depends on: the lock, this script, and referee's declared requirements (the
# wheel's Requires-Dist: a changed range or extra rebuilds the venv; a changed line of code only
# replaces the wheel).
requires=$("${PYTHON:-python3.11}" - "$wheel" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
for line in z.read(meta).decode().splitlines():
    if line.startswith(("Requires-Dist:", "Requires-Python:")):
        print(line)
PY
)
want=$( { cat "$lock" "$0"; echo "$requires"; } | sha256sum | cut -d' ' -f1)
wheel_hash=$(sha256sum "$wheel" | cut -d' ' -f1)
stamp=$venv/.installed
if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$want" ] \
   && [ "$(sed -n 2p "$stamp")" = "$wheel_hash" ]; then
  exit 0
fi
start=$(date +%s)
quiet_pip() { { grep -v "is ignored: it is neither a file nor a directory" || true; }; }
install_referee() {
  # Not --no-deps: the resolver checks referee's requirements against the lock's packages. Its
  # output is shown when it fails (the conflict's causes, which -q would hide).
  local log rc=0
  log=$(mktemp)
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-compile -c "$lock" \
    "$wheel[$extra]" >"$log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || grep -vE "is ignored: it is neither|^(Looking in|Processing|Requirement already|Collecting|  Using cached|  Downloading|     )" "$log" >&2
  rm -f "$log"
  return "$rc"
}
if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$want" ]; then
  # Only referee's code changed: the same requirements, a new wheel.
  "$venv/bin/python" -m pip uninstall -q -y referee
  install_referee || { echo "bootstrap-trainer-venv: $name: installing $wheel[$extra] failed" >&2; exit 1; }
else
  rm -rf "$venv"
  "${PYTHON:-python3.11}" -m venv "$venv"
  # --no-compile: byte-compiling every installed file (torch, transformers, ray) was two thirds of
  # the install time; Python compiles the few modules the tests import when it imports them.
  "$venv/bin/python" -m pip install "${pip_q[@]}" --no-deps -r "$lock" 2>&1 | quiet_pip
  before=$("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | sort)
  install_referee || {
    echo "bootstrap-trainer-venv: $name: referee's requirements ($wheel[$extra]) do not fit" \
         "$lock (pip's resolver above)" >&2
    exit 1
  }
  after=$("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | sort)
  added=$(comm -13 <(echo "$before") <(echo "$after") | grep -v '^referee==' || true)
  if [ -n "$added" ]; then
    echo "bootstrap-trainer-venv: $name: referee's requirements pulled packages $lock does not" \
         "name; add them, pinned:" >&2
    echo "$added" >&2
    exit 1
  fi
fi
# The modules the contract test imports must import (probe list per trainer), and referee must be
# the installed wheel (run from /tmp: nothing of this checkout on sys.path).
case "$name" in
  verl) mods="verl verl.workers.reward_manager verl.experimental.reward_loop.reward_loop verl.experimental.agent_loop.agent_loop referee.train.verl_agent" ;;
  skyrl-gym) mods="skyrl_gym skyrl_gym.envs.base_text_env referee.train.skyrl" ;;
  verifiers) mods="verifiers.v1 verifiers.v1.utils.loaders verifiers.v1.tasksets referee.train.prime" ;;
  areal) mods="areal.api.reward_api areal.api.workflow_api areal.workflow.rlvr referee.train.areal" ;;
  openrlhf) mods="openrlhf.utils.agent referee.train.openrlhf" ;;
esac
for m in $mods referee.verify.dispatch referee.envs.code; do
  (cd /tmp && "$OLDPWD/$venv/bin/python" -c "import $m") \
    || { echo "bootstrap-trainer-venv: $name: import $m failed" >&2; exit 1; }
done
(cd /tmp && "$OLDPWD/$venv/bin/python" -c "
import referee, sysconfig, pathlib
site = pathlib.Path(sysconfig.get_paths()['purelib']).resolve()
assert pathlib.Path(referee.__file__).resolve().is_relative_to(site), referee.__file__
") || { echo "bootstrap-trainer-venv: $name: referee is not the installed wheel" >&2; exit 1; }
printf '%s\n%s\n' "$want" "$wheel_hash" > "$stamp"
echo "bootstrap-trainer-venv: $name ready in $(( $(date +%s) - start ))s, $(du -sh "$venv" | cut -f1)," \
     "referee from $(basename "$wheel")[$extra]"
