"""The ``shell-rows`` import: good rows become validated tasks; a malformed row, a reference
that fails or a check that passes on nothing is an error naming file, row and field, and the
CLI writes nothing then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.sources import load_source

GOOD = {
    "id": "disk-1",
    "prompt": "Compress var/log/old.log with gzip (keep the name old.log.gz).",
    "setup": "mkdir -p var/log && printf 'a\\nb\\n' > var/log/old.log",
    "check": "test -f var/log/old.log.gz && test ! -e var/log/old.log && "
    '[ "$(zcat var/log/old.log.gz)" = "$(printf \'a\\nb\')" ]',
    "reference": "gzip var/log/old.log",
    "manifest": {"writable": ["var/log"], "commands": ["gzip"]},
}


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_good_rows_become_shell_tasks_judged_by_their_check(tmp_path, shell_verifier):
    rows = [GOOD, {**GOOD, "id": "disk-2", "manifest": None}]
    tasks = list(load_source("shell-rows", "train", write_rows(tmp_path / "r.jsonl", rows)))
    assert [t.id for t in tasks] == ["shell-rows/disk-1", "shell-rows/disk-2"]
    assert tasks[0].kind.value == "shell" and tasks[0].payload["manifest"]["commands"] == ["gzip"]
    assert "gzip var/log/old.log" not in tasks[0].user_prompt + str(tasks[0].payload)
    assert shell_verifier.verify(tasks[0], "gzip var/log/old.log").passed
    assert not shell_verifier.verify(tasks[0], "touch var/log/old.log.gz").passed


@pytest.mark.parametrize(
    ("row", "named"),
    [
        ({k: v for k, v in GOOD.items() if k != "check"}, r"r\.jsonl:2: field 'check': missing"),
        ({**GOOD, "manifest": {"write": ["x"]}}, r"r\.jsonl:2: field 'manifest': unknown key"),
        ({**GOOD, "reference": "true"}, r"r\.jsonl:2: field 'reference': does not pass"),
        ({**GOOD, "check": "true"}, r"r\.jsonl:2: field 'check': passes on an empty answer"),
    ],
)
def test_a_bad_row_is_an_error_naming_file_row_and_field(tmp_path, row, named):
    path = write_rows(tmp_path / "r.jsonl", [GOOD, row])
    with pytest.raises(TaskError, match=named):
        list(load_source("shell-rows", "train", path))


def test_the_cli_writes_nothing_when_a_row_is_bad(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    path = write_rows(tmp_path / "r.jsonl", [GOOD, {**GOOD, "reference": "true"}])
    out = tmp_path / "tasks.jsonl"
    r = CliRunner().invoke(app, ["tasks", "import", "shell-rows", str(path), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "field 'reference'" in r.output and not out.exists()
