"""`referee`'s entry point builds the parser of the one command it runs (typer would build all
of them first): the command line, its errors and its help must read as with the whole app."""

from __future__ import annotations

import sys

import pytest
import typer.main

from referee.cli import app, app_for, main


def _run(
    entry: object,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[object, str, str]:
    monkeypatch.setattr(sys, "argv", ["referee", *argv])
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as e:
        entry()  # type: ignore[operator]
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--help"],
        ["verify"],  # missing options: a usage error
        ["verify", "--tasks", "/nonexistent/t.jsonl", "--samples", "/nonexistent/s.jsonl"],
        ["verify", "--bogus"],
        ["exec", "--help"],
        ["tasks", "generate", "--help"],
        ["tasks", "lst"],
        ["verfy"],  # a typo: the suggestion needs every name
        ["--help"],
        [],
    ],
)
def test_main_reads_as_the_whole_app(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(main, argv, monkeypatch, capsys) == _run(app, argv, monkeypatch, capsys)


def test_one_command_is_built_when_the_command_line_names_one() -> None:
    assert set(typer.main.get_group(app_for(["verify", "--json"])).commands) == {"verify"}
    assert set(typer.main.get_group(app_for(["exec", "x"])).commands) == {"exec"}
    assert set(typer.main.get_group(app_for(["tasks", "list"])).commands) == {"tasks"}
    for argv in (["--help"], ["verfy"], [], ["--version"]):
        assert app_for(argv) is app
    assert len(app.registered_commands) > 10  # the app itself is untouched


def test_train_refuses_a_bad_option_before_importing_torch(tmp_path) -> None:
    # issue 33: `referee train --steps -1` took 6.4 s (torch, for --device) to say exit 2.
    import os
    import subprocess
    from pathlib import Path

    tasks = tmp_path / "t.jsonl"
    tasks.write_text("")
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from referee.cli import app\n"
        f"for args in (['--steps', '-1'], ['--tasks', {str(tasks)!r}, '--model', 'm',\n"
        "              '--steps', '-1']):\n"
        "    r = CliRunner().invoke(app, ['train', *args])\n"
        "    print(r.exit_code, 'torch' in sys.modules, r.output.strip())\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=120,
    )
    lines = p.stdout.splitlines()
    assert len(lines) == 2, p.stdout + p.stderr
    for line in lines:
        assert line.startswith("2 False referee: --steps"), line


def test_rich_loads_with_the_first_message_not_with_the_command_line() -> None:
    # A one-shot `referee verify --json` prints its first verdict before writing anything on
    # stderr: rich (~25 ms of imports) is not on that path (RESULTS §44).
    import os
    import subprocess
    from pathlib import Path

    code = (
        "import sys\n"
        "import referee.cli\n"
        "from referee.cli.console import err\n"
        "print('rich' in sys.modules)\n"
        "err.print('hello', markup=False)\n"
        "print('rich' in sys.modules, type(err.console).__name__)\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=120,
    )
    assert p.stdout.splitlines() == ["False", "True Console"], p.stdout + p.stderr
    assert p.stderr == "hello\n"
