"""`make bench-floor`'s runner (bench/floor.py): the row contract other bench modules follow, the
one table, and a module's failure shown in its cells instead of ending the run.

Only the runner's own logic is tested here, on rows made up for the test; the measurements
themselves are bench/floor_*.py's and run by `make bench-floor`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_floor_runner", BENCH / "floor.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


floor = _runner()


def _row(cost: float, floor_ms: float, **more: Any) -> dict[str, Any]:
    return {
        "kind": "k",
        "unit": "check",
        "cost_ms": cost,
        "floor_ms": floor_ms,
        "note": "n",
        **more,
    }


def _run(tree: str, rows: list[dict[str, Any]] | None, error: str = "") -> dict[str, Any]:
    if rows is None:
        return {"module": "floor_x", "tree": tree, "ok": False, "error": error}
    return {"module": "floor_x", "tree": tree, "ok": True, "rows": rows}


def test_every_module_is_found_by_its_name() -> None:
    assert "floor_function" in floor.modules(None)
    assert floor.modules("function") == ["floor_function"]
    assert floor.modules("no-such-kind") == []


@pytest.mark.parametrize(
    "rows",
    [
        [],
        {"kind": "k"},
        [{"kind": "k", "unit": "check", "cost_ms": 1.0, "floor_ms": 1.0}],  # no note
        [{"kind": "k", "unit": "check", "cost_ms": "1", "floor_ms": 1.0, "note": ""}],
    ],
)
def test_rows_that_break_the_contract_are_refused(rows: Any) -> None:
    with pytest.raises(ValueError):
        floor.validate(rows)


def test_ratios_are_the_medians_of_each_runs_own_ratio() -> None:
    # The anchor's costs and floors move together (a loaded round): its ratio is 2.0 in every
    # run, which the ratio of the medians (5 / 2 = 2.5) would not say.
    runs = [
        _run("anchor", [_row(2.0, 1.0)]),
        _run("anchor", [_row(5.0, 2.5)]),
        _run("anchor", [_row(8.0, 4.0)]),
        _run("current", [_row(1.0, 1.0)]),
        _run("current", [_row(3.0, 2.0)]),
        _run("current", [_row(4.0, 4.0)]),
    ]
    (e,) = floor.aggregate(runs, ["anchor", "current"])
    assert e["anchor"]["ratio_med"] == 2.0
    assert e["current"]["ratio_med"] == 1.0
    assert e["anchor"]["cost_med_ms"] == 5.0
    text = floor.table([e], ["anchor", "current"])
    assert "| k | check | 5 ms | 3 ms |" in text
    assert "2.00x (50.0 % of floor)" in text and "1.00x (100.0 % of floor)" in text


def test_a_module_failing_in_one_tree_fills_that_trees_cells_and_the_run_goes_on() -> None:
    runs = [
        _run("anchor", None, error="ImportError: no module named referee.new_thing"),
        _run("current", [_row(2.0, 1.0)]),
    ]
    (e,) = floor.aggregate(runs, ["anchor", "current"])
    line = floor.table([e], ["anchor", "current"]).splitlines()[2]
    assert "error: ImportError: no module named referee.new_thing" in line
    assert "2.00x" in line


def test_a_module_failing_in_both_trees_still_has_a_row() -> None:
    runs = [_run("anchor", None, error="boom"), _run("current", None, error="boom too")]
    (e,) = floor.aggregate(runs, ["anchor", "current"])
    line = floor.table([e], ["anchor", "current"]).splitlines()[2]
    assert "floor_x (no rows)" in line and "error: boom" in line and "error: boom too" in line


def test_verdicts_that_differ_between_the_trees_are_called_out() -> None:
    runs = [
        _run("anchor", [_row(2.0, 1.0, verdicts="aaa")]),
        _run("current", [_row(1.0, 1.0, verdicts="bbb")]),
    ]
    entries = floor.aggregate(runs, ["anchor", "current"])
    assert entries[0]["verdicts_equal"] is False
    assert "verdicts differ between the trees" in floor.table(entries, ["anchor", "current"])
    same = [_run(t, [_row(1.0, 1.0, verdicts="aaa")]) for t in ("anchor", "current")]
    assert floor.aggregate(same, ["anchor", "current"])[0]["verdicts_equal"] is True
