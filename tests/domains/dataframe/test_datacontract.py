"""Data contracts on the host: each rule's violation named, types judged by the reported kind,
the rendered pandera source the same schema as the one the grader builds. No sandbox."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from referee.domains.dataframe.datacontract import (
    check_contract,
    contract_error,
    frame_from_report,
    pandera_schema,
    render_contract,
)
from referee.domains.dataframe.dirty import KINDS
from referee.domains.dataframe.pipelines import contract_for

CONTRACT: dict[str, Any] = {
    "name": "t",
    "columns": {
        "id": {"type": "int", "unique": True, "checks": [{"ge": 1}]},
        "site": {"type": "str", "checks": [{"isin": ["north", "south"]}]},
        "w": {"type": "float", "checks": [{"in_range": [0, 1000], "include_min": False}]},
        "d": {"type": "datetime", "checks": [{"in_range": ["2024-01-01", "2025-12-31"]}]},
        "e": {"type": "datetime", "nullable": True},
    },
    "row_checks": [{"column": "e", "op": "ge", "other": "d"}],
}
KINDS_OF = ["int", "str", "float", "datetime", "datetime"]


def _report(*rows: list[Any], kinds: list[str] = KINDS_OF) -> dict[str, Any]:
    return {"columns": ["id", "site", "w", "d", "e"], "kinds": kinds, "rows": list(rows)}


def _row(i: int = 1, site: str = "north", w: float = 2.5, d: str = "2024-03-01") -> list[Any]:
    return [["i", i], ["s", site], ["f", w], ["t", f"{d}T00:00:00"], None]


def test_a_table_that_keeps_the_contract_breaks_nothing():
    assert check_contract(_report(_row(1), _row(2, "south")), CONTRACT) == []
    assert contract_error(CONTRACT) == ""


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([_row(1), _row(1)], "id: duplicate values in 2 rows (unique)"),
        ([_row(0)], "id: greater_than_or_equal_to(1) fails for 1 row (e.g. 0)"),
        ([_row(1, "N")], "site: isin(['north', 'south']) fails for 1 row (e.g. N)"),
        ([_row(1, w=0.0)], "w: in_range(0, 1000) fails for 1 row (e.g. 0.0)"),
        ([_row(1, d="2023-12-31")], "d: in_range(2024-01-01 00:00:00, 2025-12-31 00:00:00)"),
        (
            [
                [
                    ["i", 1],
                    ["s", "north"],
                    ["f", 1.0],
                    ["t", "2024-03-05T00:00:00"],
                    ["t", "2024-03-01T00:00:00"],
                ]
            ],
            "row check e >= d fails for 1 row",
        ),
        (
            [[["i", 1], ["s", "north"], None, ["t", "2024-03-05T00:00:00"], None]],
            "w: 1 missing value",
        ),
    ],
)
def test_each_broken_rule_is_named(rows: list[list[Any]], said: str):
    broken = check_contract(_report(*rows), CONTRACT)
    assert any(said in b for b in broken), broken
    assert all(b.startswith("contract: ") for b in broken)


def test_types_are_judged_by_the_reported_kind_not_by_what_the_values_could_be():
    as_text = _report(
        [["s", "1"], ["s", "north"], ["s", "2.5"], ["s", "2024-03-01"], None],
        kinds=["str", "str", "str", "str", "empty"],
    )
    broken = check_contract(as_text, CONTRACT)
    assert "contract: id: wrong type, expected int, got str" in broken
    assert "contract: d: wrong type, expected datetime, got str" in broken
    # A column of no values takes the contract's type; a wrong type hides its value checks.
    assert not any(b.startswith("contract: e:") or "fails for" in b for b in broken), broken
    mixed = _report([["i", 1], ["s", "north"], ["i", 2], ["t", "2024-03-01T00:00:00"], ["s", "x"]])
    mixed["kinds"] = ["int", "str", "int", "datetime", "mixed"]
    broken = check_contract(mixed, CONTRACT)
    assert "contract: w: wrong type, expected float, got int" in broken
    assert "contract: e: wrong type, expected datetime, got mixed" in broken


def test_every_combined_key_is_checked():
    keyed = {**CONTRACT, "unique": [["site", "d"], ["w", "d"]]}
    assert check_contract(_report(_row(1), _row(2, "south", w=3.0)), keyed) == []
    broken = check_contract(_report(_row(1), _row(2)), keyed)
    assert "contract: unique key ['site', 'd'] is repeated in 2 rows" in broken
    assert "contract: unique key ['w', 'd'] is repeated in 2 rows" in broken


def test_columns_must_be_exactly_the_contract_s():
    report = _report(_row(1))
    report["columns"] = ["id", "site", "w", "d", "extra"]
    broken = check_contract(report, CONTRACT)
    assert "contract: unexpected column extra (the contract is strict)" in broken
    assert "contract: missing column e" in broken


def test_a_rebuilt_frame_has_one_dtype_per_kind():
    frame = frame_from_report(_report(_row(1)), CONTRACT)
    assert [str(t) for t in frame.dtypes] == [
        "Int64",
        "str",
        "float64",
        "datetime64[us]",
        "datetime64[us]",
    ]


@pytest.mark.parametrize("contract", [CONTRACT, contract_for(set(KINDS)), contract_for({"types"})])
def test_the_rendered_source_is_the_schema_the_grader_builds(contract: dict[str, Any]):
    namespace: dict[str, Any] = {}
    exec(render_contract(contract), namespace)  # the grader's own text, not a candidate's
    shown, built = namespace["contract"], pandera_schema(contract)
    assert set(shown.columns) == set(built.columns)
    for name, col in built.columns.items():
        other = shown.columns[name]
        assert (str(other.dtype), other.nullable, other.unique) == (
            str(col.dtype),
            col.nullable,
            col.unique,
        )
        assert [c.name for c in other.checks] == [c.name for c in col.checks]
        assert [c.statistics for c in other.checks] == [c.statistics for c in col.checks]
    assert [c.name for c in shown.checks] == [c.name for c in built.checks]
    assert shown.strict == built.strict
    # And both judge a frame alike: one good, one breaking the row check.
    good = frame_from_report(_report(_row(1), _row(2, "south")), CONTRACT)
    bad = good.assign(e=pd.to_datetime(["2023-01-01", None]).astype("datetime64[us]"))
    if contract is CONTRACT:
        for frame, ok in ((good, True), (bad, False)):
            for schema in (shown, built):
                try:
                    schema.validate(frame)
                    held = True
                except Exception:
                    held = False
                assert held is ok


@pytest.mark.parametrize(
    ("contract", "said"),
    [
        ({"columns": []}, "an object with 'columns'"),
        ({"columns": {"a": {"type": "decimal"}}}, "column 'a': 'type'"),
        ({"columns": {"a": {"type": "int", "checks": [{"between": 1}]}}}, "names none of"),
        ({"columns": {"a": {"type": "int"}}, "unique": [["b"]]}, "unique key"),
        (
            {
                "columns": {"a": {"type": "int"}},
                "row_checks": [{"column": "a", "op": "eq", "other": "a"}],
            },
            "'op'",
        ),
    ],
)
def test_a_malformed_contract_is_named(contract: dict[str, Any], said: str):
    assert said in contract_error(contract)
