"""The numeric-rows import: a good file makes tasks whose references pass; a malformed row
stops the import naming the file, the row and the field, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.domains.numeric.imports import numeric_rows_tasks
from referee.errors import TaskError
from referee.tasks.sources import get_source

REFERENCE = "import math\ndef solve(params):\n    return {'N': params['N0'] * math.exp(-params['k'] * params['t'])}\n"
GOOD = {
    "id": "decay-1",
    "problem": "Return the amount N left at time t of N0 decaying at rate k.",
    "reference": REFERENCE,
    "parameter_sets": [
        {"N0": 1.0, "k": 0.5, "t": 2.0},
        {"N0": 3.0, "k": 0.1, "t": 7.0},
        {"N0": 2.0, "k": 2.0, "t": 0.3},
    ],
    "tolerance": {"rtol": 1e-9, "atol": 1e-12},
}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_good_file_imports_and_its_reference_passes(tmp_path, numeric_verifier, numeric_box):
    path = _write(
        tmp_path / "rows.jsonl",
        [
            GOOD,
            {
                **GOOD,
                "id": "decay-2",
                "signature": "def decay(params: dict) -> dict",
                "reference": REFERENCE.replace("def solve", "def decay"),
            },
        ],
    )
    assert get_source("numeric-rows").reads_file
    tasks = list(numeric_rows_tasks("train", path, sandbox=numeric_box))
    assert [t.id for t in tasks] == ["numeric/rows/decay-1", "numeric/rows/decay-2"]
    t = tasks[0]
    assert (
        t.kind == "numeric" and t.split == "train" and t.provenance.unit == "numeric-rows/decay-1"
    )
    assert len(t.hidden["params"]) == 2
    assert abs(t.payload["visible"]["expected"]["N"] - 0.36787944117144233) < 1e-15
    assert tasks[1].payload["entry_point"] == "decay"
    for task in tasks:
        assert numeric_verifier.verify(task, task.hidden["reference"]).passed
        assert numeric_verifier.verify(task, "").reward == 0.0


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"problem": None}, "problem", "missing"),
        ({"parameter_sets": [{"N0": 1.0, "k": 0.5, "t": 2.0}]}, "parameter_sets", "at least two"),
        ({"parameter_sets": [{"N0": 1.0}, 3]}, "parameter_sets", "set 1 is a int"),
        ({"tolerance": {"rtol": 1e-9}}, "tolerance", "'atol'"),
        ({"tolerance": {"rtol": -1, "atol": 0}}, "tolerance", "rtol must be"),
        ({"signature": "solve(params)"}, "signature", "def NAME"),
        ({"invariants": [{"name": "nope"}]}, "invariants", "not one of"),
        ({"id": "a b"}, "id", "letters"),
        ({"reference": "def solve(params):\n    return {'N': 1 / 0}\n"}, "reference", "raised"),
        (
            {"reference": "def solve(params):\n    return {'N': float('nan')}\n"},
            "reference",
            "not a finite number",
        ),
    ],
)
def test_a_malformed_row_names_file_row_and_field(tmp_path, numeric_box, change, field, message):
    bad = {k: v for k, v in {**GOOD, "id": "bad", **change}.items() if v is not None}
    path = _write(tmp_path / "rows.jsonl", [GOOD, bad])
    with pytest.raises(TaskError) as e:
        list(numeric_rows_tasks("train", path, sandbox=numeric_box))
    text = str(e.value)
    assert f"{path}:2:" in text and f"field {field!r}" in text and message in text, text


def test_the_cli_import_writes_nothing_when_a_row_is_bad(tmp_path):
    path = _write(tmp_path / "rows.jsonl", [GOOD, {**GOOD, "id": "x", "tolerance": 3}])
    out = tmp_path / "tasks.jsonl"
    r = CliRunner().invoke(app, ["tasks", "import", "numeric-rows", str(path), "--out", str(out)])
    assert r.exit_code == 2 and "rows.jsonl:2" in r.output and "tolerance" in r.output
    assert not out.exists()
