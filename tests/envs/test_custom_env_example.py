"""examples/custom_env.py runs as a script, and its environment judges honestly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from tests.envs.helpers import run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_env.py"


def _module():
    spec = importlib.util.spec_from_file_location("custom_env_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_as_a_script():
    r = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert r.returncode == 0, r.stderr
    assert "guess 37: correct" in r.stdout
    assert '"reward":1.0' in r.stdout.splitlines()[-1]


def test_the_example_fails_when_the_turns_run_out():
    example = _module()
    verdict = run(example.main(secret=99, max_turns=3))  # binary search needs 7 guesses
    assert not verdict.passed and verdict.reward == 0.0
    verdict = run(example.main(secret=99, max_turns=7))
    assert verdict.passed
