#!/usr/bin/env bash
# Build the virtual environment of one trainer's contract tests: .venvs/NAME, from
# requirements-trainers/NAME.lock, every package with --no-deps (the trainers' declared
# dependencies pull GPU torch builds, vLLM, deepspeed, flash-attn...; the lock lists only what
# the code the tests drive imports, plus referee's own import-time needs). referee itself is not
# installed there: the tests put src/ on PYTHONPATH.
#   scripts/bootstrap-trainer-venv.sh verl|skyrl-gym|verifiers|areal|openrlhf
# Safe to run again: does nothing when the venv is newer than its lock. PYTHON picks the
# interpreter (default python3.11; every trainer here installs on 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."

name=${1:?usage: $0 verl|skyrl-gym|verifiers|areal|openrlhf}
lock=requirements-trainers/$name.lock
venv=.venvs/$name
[ -f "$lock" ] || { echo "no lock file $lock" >&2; exit 2; }
stamp=$venv/.installed

if [ -f "$stamp" ] && [ "$stamp" -nt "$lock" ]; then
  exit 0
fi
start=$(date +%s)
rm -rf "$venv"
"${PYTHON:-python3.11}" -m venv "$venv"
# --no-compile: byte-compiling every installed file (torch, transformers, ray) was two thirds of
# the install time; Python compiles the few modules the tests import when it imports them.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-compile -r "$lock" 2>&1 \
  | { grep -v "is ignored: it is neither a file nor a directory" || true; }
# The modules the contract test imports must import (probe list per trainer).
case "$name" in
  verl) mods="verl verl.workers.reward_manager verl.experimental.reward_loop.reward_loop verl.experimental.agent_loop.agent_loop referee.train.verl_agent" ;;
  skyrl-gym) mods="skyrl_gym skyrl_gym.envs.base_text_env" ;;
  verifiers) mods="verifiers.v1 verifiers.v1.utils.loaders verifiers.v1.tasksets" ;;
  areal) mods="areal.api.reward_api areal.api.workflow_api areal.workflow.rlvr" ;;
  openrlhf) mods="openrlhf.utils.agent" ;;
  *) mods="" ;;
esac
for m in $mods referee.verify.dispatch referee.envs.code; do
  (cd /tmp && PYTHONPATH="$OLDPWD/src" "$OLDPWD/$venv/bin/python" -c "import $m") \
    || { echo "bootstrap-trainer-venv: $name: import $m failed" >&2; exit 1; }
done
touch "$stamp"
echo "bootstrap-trainer-venv: $name ready in $(( $(date +%s) - start ))s, $(du -sh "$venv" | cut -f1)"
