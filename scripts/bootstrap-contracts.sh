#!/usr/bin/env bash
# Add the trainers' client packages (requirements-contracts.lock) to referee's virtual
# environment, for the wire-contract tests in tests/service. They go in with --no-deps: their
# declared dependencies (torch builds, ray, deepspeed, gradio...) are not needed by the client
# code the tests call, and the lock lists the few modules that code does import.
# Runs scripts/bootstrap.sh first. Safe to run again; does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
scripts/bootstrap.sh

stamp="$VENV/.contracts-installed"
if [ ! -f "$stamp" ] || [ requirements-contracts.lock -nt "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-compile \
    -r requirements-contracts.lock
  # the clients import, and nothing they added replaced a pin of requirements.lock
  "$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import sys

import openenv.core.env_client  # noqa: F401
import openenv.core.generic_client  # noqa: F401
import openrlhf.utils.agent  # noqa: F401
import sandbox_fusion  # noqa: F401

bad = []
for line in open("requirements.lock"):
    line = line.split("#")[0].strip()
    if "==" in line:
        name, version = line.split("==")
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            continue
        if have.split("+")[0] != version:
            bad.append(f"{name} {have} (requirements.lock: {version})")
if bad:
    sys.exit("bootstrap-contracts: pins changed: " + ", ".join(bad))
PY
  touch "$stamp"
fi
