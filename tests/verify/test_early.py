"""``referee verify``'s sandbox started before the command line is parsed (issue 32): only for a
plain ``verify`` whose options can be read for sure, handed to the command when it asks with
the same options, closed otherwise; the command's output is the same either way."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import referee
import referee.__main__ as entry
from referee.cli import main as cli_main
from referee.verify import early


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["verify", "--tasks", "t.jsonl", "--samples", "s.jsonl"], (True, None)),
        (["verify", "--workers", "3", "--json"], (True, 3)),
        (["verify", "--workers=2"], (True, 2)),
        (["verify", "--workers", "0"], (False, None)),  # the parser says why
        (["verify", "--workers", "two"], (False, None)),
        (["verify", "--workers"], (False, None)),
        (["verify", "--ray", "local"], (False, None)),
        (["verify", "--ray=auto"], (False, None)),
        (["verify", "--help"], (False, None)),
        (["verify", "-h"], (False, None)),
        (["exec", "--workers", "2"], (False, None)),
        (["--version"], (False, None)),
        ([], (False, None)),
    ],
)
def test_only_a_plain_verify_is_started_early(argv, expected):
    assert early.plain_verify_workers(argv) == expected


def test_take_hands_over_the_sandbox_made_for_the_same_options_only():
    assert early.take(None) is None  # nothing started
    early.start(1)
    sandbox = early.take(1)
    assert sandbox is not None and sandbox.python_workers == 1
    try:
        assert sandbox.run_python("print(6 * 7)").stdout == "42\n"
    finally:
        sandbox.close()
    assert early.take(1) is None  # handed over once
    early.start(1)
    assert early.take(2) is None  # other options: closed here, the command makes its own
    assert early.take(1) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--tasks", "/nonexistent/t.jsonl", "--samples", "/nonexistent/s.jsonl"],
        ["verify", "--workers", "1", "--tasks", "/nonexistent/t.jsonl"],  # a usage error
    ],
)
def test_the_entry_point_answers_as_the_cli_does(argv, monkeypatch, capsys):
    results = []
    for main in (entry.main, cli_main):
        monkeypatch.setattr(sys, "argv", ["referee", *argv])
        monkeypatch.setenv("COLUMNS", "100")
        with pytest.raises(SystemExit) as e:
            main()
        out = capsys.readouterr()
        results.append((e.value.code, out.out, out.err))
        held = early.take(1)  # a usage error ends before verify takes it: exit closes it
        if held is not None:
            held.close()
    assert results[0] == results[1]
    assert results[0][0] == 2


def test_a_command_that_ends_before_verify_leaves_no_sandbox_behind(tmp_path):
    # A usage error (no --samples) ends before verify runs: the early sandbox is closed at exit,
    # its scratch folder (named after the process) removed.
    env = {**os.environ, "PYTHONPATH": str(Path(referee.__file__).parents[1])}
    p = subprocess.Popen(
        [sys.executable, "-m", "referee", "verify", "--workers", "1", "--tasks", "t.jsonl"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert b"--samples" in err
    left = list(Path(tempfile.gettempdir()).glob(f"referee-{p.pid}-*"))
    assert left == []
