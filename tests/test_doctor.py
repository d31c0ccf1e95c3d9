"""`referee doctor` on a machine without bubblewrap: the advice names what a user can type."""

import os
import subprocess
import sys
from pathlib import Path

import referee

SRC = str(Path(referee.__file__).parents[1])  # this checkout's source, whatever is installed


def test_doctor_without_bubblewrap_names_the_cli_flag(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": "/tmp", "PYTHONPATH": SRC}  # no bwrap on this PATH
    p = subprocess.run(
        [sys.executable, "-m", "referee.cli", "doctor"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("referee: "), p.stderr
    assert "apt-get install bubblewrap" in p.stderr
    assert "--backend local" in p.stderr  # the flag `referee exec` has
    assert "backend='local' for" not in p.stderr  # not a Python keyword as if it were a flag
    assert "Traceback" not in p.stderr


def test_doctor_reports_the_shell_tools_in_the_sandbox() -> None:
    from referee.sandbox.tools import SHELL_TOOLS

    p = subprocess.run(
        [sys.executable, "-m", "referee.cli", "doctor"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC}, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("shell tools: "))
    assert line.endswith(f"/{len(SHELL_TOOLS)} run in the sandbox"), p.stdout
