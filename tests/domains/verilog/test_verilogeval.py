"""``referee tasks import verilogeval``: VerilogEval's problems read from the installed
nvidia-bigcode-eval package; a few real problems imported through the source (gold passes
and an empty module fails, checked at import), the header kept as written, and a problem
the verifier cannot judge refused by row."""

from __future__ import annotations

import importlib.util
import itertools

import pytest

from referee.domains.verilog import verilogeval
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

from .conftest import HAVE_IVERILOG, NO_IVERILOG

HAVE_PACKAGE = importlib.util.find_spec("bigcode_eval") is not None
pytestmark = [
    pytest.mark.skipif(not HAVE_IVERILOG, reason=NO_IVERILOG),
    pytest.mark.skipif(
        not HAVE_PACKAGE,
        reason="nvidia-bigcode-eval is not installed: make bootstrap "
        "(requirements-benchmarks.lock, --no-deps)",
    ),
]
#: A combinational problem with a [3:1] port, a clocked one with an active-high reset.
PICKED = ("gatesv", "count15")


ALL_ROWS = verilogeval.verilogeval_rows


def some_rows(subset):
    return iter([r for r in ALL_ROWS(subset) if r.data["task_id"] in PICKED])


def test_both_sets_are_read_whole_from_the_package() -> None:
    human = list(verilogeval.verilogeval_rows("human"))
    machine = list(verilogeval.verilogeval_rows("machine"))
    assert (len(human), len(machine)) == (156, 143)
    first = human[0].data
    assert {"task_id", "prompt", "canonical_solution", "test", "detail_description"} <= set(first)
    assert human[0].where.endswith("VerilogEval_Human.jsonl:1")


def test_real_problems_import_with_gold_passing_and_empty_failing(
    tmp_path, monkeypatch, verifier
) -> None:
    monkeypatch.setattr(verilogeval, "verilogeval_rows", some_rows)
    out = tmp_path / "ve.jsonl"
    summary = import_tasks("verilogeval", None, out, subset="human", skip_bad=True)
    assert summary.skipped == [] and summary.count == 2
    tasks = {t.id: t for t in read_tasks(out)}
    assert set(tasks) == {"verilogeval/human/gatesv", "verilogeval/human/count15"}
    gates, counter = tasks["verilogeval/human/gatesv"], tasks["verilogeval/human/count15"]
    assert "output [3:1] out_any" in gates.payload["module_header"]  # the header as written
    assert gates.payload["clock"] is None
    assert (counter.payload["clock"], counter.payload["reset"]) == ("clk", "reset")
    assert counter.hidden["stimulus"]["long_cycles"] == verilogeval.LONG_CYCLES
    assert counter.hidden["stimulus"]["bias"] == {}  # its only 1-bit inputs: clock and reset
    assert gates.hidden["stimulus"]["bias"] == {}  # combinational: uniform throughout
    for task in tasks.values():
        assert verifier.verify(task, task.hidden["reference"]).passed
        empty = f"{task.payload['module_header']}\nendmodule\n"
        assert not verifier.verify(task, empty).passed
    # A counter that wraps after 14 instead of 15: seen only after 15 cycles without a reset.
    wrong = counter.hidden["reference"].replace("q <= q+1", "q <= (q == 4'd14) ? 4'd0 : q+1")
    assert wrong != counter.hidden["reference"]
    assert not verifier.verify(counter, wrong).passed


def test_a_problem_the_verifier_cannot_judge_is_refused_by_row(monkeypatch) -> None:
    row = next(itertools.islice(verilogeval.verilogeval_rows("human"), 0, None))
    broken = dict(row.data, prompt="module top_module(inout x);")
    bad = type(row)(row.path, row.number, broken, row.by_line)
    monkeypatch.setattr(verilogeval, "verilogeval_rows", lambda subset: iter([bad]))
    skipped = []
    assert list(verilogeval.verilogeval_tasks("heldout", "human", skipped.append)) == []
    assert len(skipped) == 1
    assert "VerilogEval_Human.jsonl:1: field 'prompt': port 'x' is inout" in str(skipped[0])


def test_an_unknown_subset_is_refused() -> None:
    from referee.errors import ConfigError

    with pytest.raises(ConfigError, match="subsets human and machine, not 'robot'"):
        list(verilogeval.verilogeval_tasks("heldout", "robot"))
