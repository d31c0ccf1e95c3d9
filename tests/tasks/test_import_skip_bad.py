"""`referee tasks import ... --skip-bad`: every file source skips its bad rows and reports each
in one line naming the row; the good rows are written. Without it the first bad row stops the
import (exit 2) and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError
from referee.tasks.imports import import_tasks
from referee.tasks.imports.rows import RowError, iter_rows
from referee.tasks.model import read_tasks
from referee.tasks.sources import iter_source, register_source, unregister_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"
JSONL = {"apps": 3, "taco": 2, "livecodebench": 3, "deepcoder": 3}
GOOD_FILES = {
    "apps": "apps/test.jsonl",
    "taco": "taco/train.jsonl",
    "livecodebench": "livecodebench/test.jsonl",
    "deepcoder": "deepcoder/primeintellect.jsonl",
}
#: Every registered source that reads a file (the domains' included).
FILE_SOURCES = [
    "apps", "taco", "codecontests", "livecodebench", "deepcoder", "verl", "swebench",
    "text-to-sql", "verilog-rows", "numeric-rows", "dataframe-rows", "toolworld-rows",
    "shell-rows",
]  # fmt: skip


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def bad_then_good(tmp_path: Path, source: str) -> Path:
    """A file with a line that is not JSON, a row missing every field, then the good rows."""
    good = (FIXTURES / GOOD_FILES[source]).read_text()
    path = tmp_path / (Path(GOOD_FILES[source]).name)
    path.write_text("{not json\n{}\n" + good)
    return path


@pytest.mark.parametrize("source", sorted(JSONL))
def test_skip_bad_writes_the_good_rows_and_reports_each_bad_one(tmp_path, source):
    path, out = bad_then_good(tmp_path, source), tmp_path / "tasks.jsonl"
    r = invoke("tasks", "import", source, str(path), "--out", str(out), "--skip-bad")
    assert r.exit_code == 0, r.output
    assert len(read_tasks(out)) == JSONL[source]
    skipped = [ln for ln in r.output.splitlines() if ln.startswith("skipped ")]
    assert skipped[0] == (
        f"skipped {path}:1: not valid JSON (Expecting property name enclosed in double quotes "
        "at column 2)"
    )
    assert skipped[1].startswith(f"skipped {path}:2: field '") and len(skipped) == 2
    assert "skipped 2 bad rows" in " ".join(r.output.split())


@pytest.mark.parametrize("source", sorted(JSONL))
def test_without_skip_bad_the_first_bad_row_stops_the_import(tmp_path, source):
    path, out = bad_then_good(tmp_path, source), tmp_path / "tasks.jsonl"
    r = invoke("tasks", "import", source, str(path), "--out", str(out))
    assert r.exit_code == 2 and f"{path}:1: not valid JSON" in " ".join(r.output.split())
    assert not out.exists()


@pytest.mark.parametrize("source", FILE_SOURCES)
def test_every_file_source_goes_on_past_its_bad_rows(tmp_path, source):
    path = tmp_path / "rows.jsonl"
    path.write_text('"text"\n{"id": 7}\n')
    bad: list[RowError] = []
    assert list(iter_source(source, "train", path, on_bad_row=bad.append)) == []
    assert [e.where for e in bad] == [f"{path}:1", f"{path}:2"], [str(e) for e in bad]
    assert all("\n" not in str(e) for e in bad)
    with pytest.raises(RowError, match=rf"^{path}:1: expected a JSON object, got a string$"):
        list(iter_source(source, "train", path))


def test_a_json_array_file_skips_its_bad_items(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text('[{"a": 1}, 3, {"a": 2}]')
    bad: list[RowError] = []
    assert [r.data["a"] for r in iter_rows(path, bad.append)] == [1, 2]
    assert [e.where for e in bad] == [f"{path}: row 2"]


def test_import_tasks_keeps_the_skipped_rows_in_its_summary(tmp_path):
    path, out = bad_then_good(tmp_path, "apps"), tmp_path / "t.jsonl"
    summary = import_tasks("apps", path, out, split="train", skip_bad=True)
    assert summary.count == 3 and len(summary.skipped) == 2
    assert summary.skipped[1].startswith(f"{path}:2: field '")


def test_skip_bad_is_refused_where_no_rows_can_be_skipped(tmp_path):
    r = invoke("tasks", "import", "humaneval", "--out", str(tmp_path / "t.jsonl"), "--skip-bad")
    assert r.exit_code == 2 and "reads no file, so it has no rows to skip" in r.output
    register_source("rigid-rows", lambda split, path: [], reads_file=True)
    try:
        with pytest.raises(ConfigError, match="'rigid-rows' cannot skip bad rows"):
            list(iter_source("rigid-rows", "train", tmp_path, on_bad_row=print))
    finally:
        unregister_source("rigid-rows")
