"""The ``dataframe-rows`` import: good rows become judged tasks; a malformed row is an error
naming the file, the row and the field, and nothing is written."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from referee.domains.dataframe.imports import infer_schema
from referee.domains.dataframe.redteam import EXPLOITS
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.errors import TaskError
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

SALES = "region,amount,day\nnorth,10.5,2024-01-02\nsouth,3,2024-01-05\nnorth,,2024-02-01\n"
REFERENCE = (
    "import pandas as pd\n\ndef transform(tables):\n"
    "    s = tables['sales']\n"
    "    return s.groupby('region', as_index=False).agg(total=('amount', 'sum'))\n"
)


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "acme/region-totals-v1",
        "instruction": "Total amount per region.",
        "inputs": {"sales": SALES},
        "reference": REFERENCE,
        "rules": [
            {"type": "unique", "columns": ["region"]},
            {"type": "total", "column": "total", "table": "sales", "of": "amount"},
        ],
    }
    row.update(over)
    return row


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_good_rows_import_and_their_references_pass(tmp_path: Path, df_verifier: DataframeVerifier):
    (tmp_path / "sales.csv").write_text(SALES.replace("north,,", "west,1,"))
    frame = pd.read_csv(io.StringIO(SALES), parse_dates=["day"])
    frame.to_parquet(tmp_path / "sales.parquet")
    hidden = [
        {"sales": "sales.csv"},
        {"sales": SALES + "east,7.25,2024-03-01\n"},
        {"sales": "sales.parquet"},
    ]
    src = _write(
        tmp_path / "rows.jsonl",
        [_row(), _row(id="acme/with-hidden-v1", hidden_inputs=hidden, ordered=False)],
    )
    out = tmp_path / "tasks.jsonl"
    summary = import_tasks("dataframe-rows", src, out, split="train")
    assert summary.count == 2
    tasks = read_tasks(out)
    # Made from the sample: up to 4, those with the sample's own output dropped; given: all 3.
    assert 1 <= len(tasks[0].hidden["instances"]) <= 4 and len(tasks[1].hidden["instances"]) == 3
    assert tasks[0].payload["schema"] == {
        "sales": {"region": "str", "amount": "float", "day": "date"}
    }
    assert tasks[1].hidden["instances"][0]["facts"]["totals"] == {"total": 14.5}
    # The sample's output hard-coded earns nothing on the sets made from the sample.
    assert df_verifier.verify(tasks[0], EXPLOITS[0].make(tasks[0])).reward == 0.0
    for t in tasks:
        assert t.split == "train" and t.provenance.unit == t.id
        assert df_verifier.verify(t, t.hidden["reference"]).passed
        assert df_verifier.verify(t, "").reward == 0.0


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"reference": None}, "reference"),
        ({"reference": "x = 1"}, "reference"),
        ({"inputs": {"sales": 3}}, "inputs"),
        ({"inputs": {"sales": "missing.csv"}}, "inputs"),
        ({"schema": {"sales": {"region": "text"}}}, "schema"),
        ({"hidden_inputs": [{"other": SALES}]}, "inputs"),
        ({"rules": [{"type": "nonsense"}]}, "rules"),
        ({"reference": "def transform(tables):\n    raise ValueError('no')\n"}, "reference"),
    ],
)
def test_a_malformed_row_names_file_row_and_field_and_writes_nothing(
    tmp_path: Path, row: dict[str, Any], field: str
):
    src = _write(tmp_path / "rows.jsonl", [_row(), _row(**row)])
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(TaskError) as e:
        import_tasks("dataframe-rows", src, out)
    assert f"rows.jsonl:2: field '{field}'" in str(e.value)
    assert not out.exists()


def test_schema_inference():
    assert infer_schema("a,b,c\ntrue,1e3,x\nfalse,,\n") == {"a": "bool", "b": "float", "c": "str"}
