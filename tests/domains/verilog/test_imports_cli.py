"""The ``verilog-rows`` import (good rows, malformed rows naming file, row and field, nothing
written) and the CLI round trip: generate, gold, verify."""

from __future__ import annotations

import json

import pytest

from referee.domains.verilog.imports import parse_header
from referee.errors import TaskError
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

from .conftest import HAVE_IVERILOG, NO_IVERILOG

pytestmark = pytest.mark.skipif(not HAVE_IVERILOG, reason=NO_IVERILOG)

GOOD = {
    "id": "and2",
    "description": "y is a AND b.",
    "module_header": "module and2(input a, b, output y);",
    "reference": "module and2(input a, b, output y);\n  assign y = a & b;\nendmodule\n",
    "top": "and2",
}
SEQ = {
    "id": "dff",
    "description": "q follows d at each rising edge; rst_n (active low, synchronous) clears it.",
    "module_header": "module dff(input clk, input rst_n, input [1:0] d, output reg [1:0] q);",
    "reference": "module dff(input clk, input rst_n, input [1:0] d, output reg [1:0] q);\n"
    "  always @(posedge clk) q <= !rst_n ? 2'd0 : d;\nendmodule\n",
    "top": "dff",
    "clock": "clk",
    "reset": "rst_n",
    "reset_active": 0,
    "segments": 4,
}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_good_rows_import_as_checked_tasks(tmp_path):
    out = tmp_path / "t.jsonl"
    summary = import_tasks("verilog-rows", write(tmp_path / "rows.jsonl", [GOOD, SEQ]), out)
    assert summary.count == 2 and summary.kinds == {"verilog": 2}
    tasks = read_tasks(out)
    assert [t.id for t in tasks] == ["verilog-rows/and2", "verilog-rows/dff"]
    assert tasks[1].payload["reset_active"] == 0 and tasks[1].hidden["stimulus"]["segments"] == 4
    assert [p["width"] for p in tasks[1].payload["ports"]] == [1, 1, 2, 2]


@pytest.mark.parametrize(
    ("change", "field", "why"),
    [
        ({"top": None}, "top", "missing"),
        ({"module_header": "module and2(a, b);"}, "module_header", "no direction"),
        ({"module_header": "module other(input a, output y);"}, "module_header", "not top"),
        ({"clock": "clk"}, "clock", "1-bit input"),
        ({"reference": "module and2(input a, b, output y); assign y = a &; endmodule"},
         "reference", "does not pass"),
        ({"reference": "module and2(input a, b, output y); endmodule"}, "reference",
         "empty module passes"),
    ],
)  # fmt: skip
def test_a_malformed_row_names_file_row_and_field_and_writes_nothing(tmp_path, change, field, why):
    # The checks in the sandbox come after a good row, the others fail before any sandbox.
    before = [SEQ] if field == "reference" else []
    rows = write(tmp_path / "rows.jsonl", [*before, {**GOOD, **change}])
    out = tmp_path / "t.jsonl"
    with pytest.raises(TaskError) as e:
        import_tasks("verilog-rows", rows, out)
    line = len(before) + 1
    assert f"rows.jsonl:{line}: field {field!r}" in str(e.value) and why in str(e.value), e.value
    assert not out.exists()


def test_parse_header_reads_widths_and_refuses_parameters():
    ports = parse_header("module m(input [7:0] a, input signed [0:3] b, output y);", "m")
    assert [(p.name, p.width) for p in ports] == [("a", 8), ("b", 4), ("y", 1)]
    with pytest.raises(ValueError, match="numeric ranges"):
        parse_header("module m(input [W-1:0] a, output y);", "m")


def test_cli_generates_gives_gold_and_verifies(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    cli = CliRunner()
    tasks, gold = tmp_path / "tasks.jsonl", tmp_path / "gold.jsonl"
    made = cli.invoke(app, ["tasks", "generate", "v-counter", "--count", "2", "--seed", "3",
                            "--out", str(tasks)])  # fmt: skip
    assert made.exit_code == 0, made.output
    given = cli.invoke(app, ["tasks", "gold", str(tasks)])
    assert given.exit_code == 0, given.output
    gold.write_text(given.stdout)
    judged = cli.invoke(app, ["verify", "--tasks", str(tasks), "--samples", str(gold), "--json"])
    assert judged.exit_code == 0, judged.output
    verdicts = [json.loads(x) for x in judged.stdout.splitlines() if x.startswith("{")]
    assert len(verdicts) == 2 and all(v["passed"] for v in verdicts)


def test_cli_import_of_a_malformed_row_exits_2_and_writes_nothing(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    rows = write(tmp_path / "rows.jsonl", [{**GOOD, "module_header": "module and2(a);"}])
    out = tmp_path / "t.jsonl"
    r = CliRunner().invoke(app, ["tasks", "import", "verilog-rows", str(rows), "--out", str(out)])
    assert r.exit_code == 2 and "rows.jsonl:1: field 'module_header'" in r.output, r.output
    assert not out.exists()


COUNTER = {
    "id": "cnt10",
    "description": "q counts up by one at each rising edge; rst (synchronous) clears it.",
    "module_header": "module cnt10(input clk, input rst, output reg [9:0] q);",
    "reference": "module cnt10(input clk, input rst, output reg [9:0] q);\n"
    "  always @(posedge clk) if (rst) q <= 10'd0; else q <= q + 10'd1;\nendmodule\n",
    "top": "cnt10",
    "clock": "clk",
    "reset": "rst",
    "segments": 2,
}


def test_a_row_asks_for_long_runs_without_resets_and_a_late_bug_is_caught(tmp_path):
    # Wrong only from the 300th cycle after a reset: it stops counting there.
    late = COUNTER["reference"].replace("q <= q + 10'd1", "q <= (q == 10'd300) ? q : q + 10'd1")
    out = tmp_path / "t.jsonl"
    long_row = {**COUNTER, "id": "cnt10-long", "cycles": 500, "reset_rate": 0}
    import_tasks("verilog-rows", write(tmp_path / "rows.jsonl", [COUNTER, long_row]), out)
    short, long = read_tasks(out)
    assert long.hidden["stimulus"]["cycles"] == 500 and long.hidden["stimulus"]["reset_rate"] == 0
    from referee.domains.verilog.verifier import VerilogVerifier

    with VerilogVerifier() as v:
        assert v.verify(short, late).passed  # 32-cycle segments never get there
        caught = v.verify(long, late)
    assert not caught.passed and "q expected 0100101101 got 0100101100" in caught.tests[0].detail


@pytest.mark.parametrize(
    ("change", "field"),
    [({"reset_rate": 2}, "reset_rate"), ({"long_cycles": -1}, "long_cycles"),
     ({"cycles": 5000, "segments": 8}, "cycles")],
)  # fmt: skip
def test_bad_stimulus_fields_name_the_field(tmp_path, change, field):
    rows = write(tmp_path / "rows.jsonl", [{**COUNTER, **change}])
    with pytest.raises(TaskError, match=f"field {field!r}"):
        import_tasks("verilog-rows", rows, tmp_path / "t.jsonl")
