"""Usage errors (Click's refusals of a command line) read as one line, through the exit-code
policy (issue 20, finding 7)."""

from __future__ import annotations

import pytest


def invoke(*args: str):
    from typer.testing import CliRunner

    from referee.cli import app

    return CliRunner().invoke(app, list(args), prog_name="referee")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["tasks", "generate", "list-ops", "--out", "x.jsonl", "--count", "0"],
            "referee: Invalid value for '--count': Input should be greater than or equal to 1; "
            "see referee tasks generate --help",
        ),
        (
            ["tasks", "generate", "list-ops", "--out", "x.jsonl", "--count", "abc"],
            "referee: Invalid value for '--count': Input should be a valid integer, unable to "
            "parse string as an integer; see referee tasks generate --help",
        ),
        (["trian"], "referee: No such command 'trian' (did you mean 'train'?); see referee --help"),
        (["tasks", "list", "--bogus"], "referee: No such option: --bogus; see referee tasks list --help"),
        (
            ["verify", "--tasks", "he.jsonl"],
            "referee: Missing option '--samples'; see referee verify --help",
        ),
        (["--bogus"], "referee: No such option: --bogus; see referee --help"),
    ],
)  # fmt: skip
def test_a_usage_error_is_one_line_naming_the_help_and_exits_2(tmp_path, monkeypatch, args, line):
    monkeypatch.chdir(tmp_path)
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert r.output.splitlines() == [line]
    assert not list(tmp_path.iterdir())


def test_exec_usage_errors_exit_125_in_one_line():
    from referee.errors import EXEC_FAILED

    r = invoke("exec", "--memory", "abc", "--", "true")
    assert r.exit_code == EXEC_FAILED
    assert r.output.splitlines() == [
        "referee: Invalid value for '--memory': Input should be a valid integer, unable to parse "
        "string as an integer; see referee exec --help"
    ]


def test_a_group_without_arguments_still_shows_its_help():
    r = invoke("tasks")
    assert r.exit_code == 2 and "Usage" in r.output and "generate" in r.output
