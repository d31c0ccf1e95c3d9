"""The verifier in the sandbox: gold passes on every family, the empty module earns nothing,
and mismatches, X outputs, compile errors and wrong resets are told apart per segment."""

from __future__ import annotations

import pytest

from referee.domains.verilog.spec import Port
from referee.domains.verilog.task import verilog_task
from referee.domains.verilog.verifier import compare_cycle
from referee.tasks.model import Task
from referee.verify.dispatch import count_tests

COUNTER_REF = """module cnt(input clk, input rst, input en, output reg [3:0] q);
  always @(posedge clk) begin
    if (rst) q <= 4'd0;
    else if (en) q <= q + 4'd1;
  end
endmodule
"""


def counter_task() -> Task:
    ports = [Port("clk", "input", 1), Port("rst", "input", 1), Port("en", "input", 1),
             Port("q", "output", 4)]  # fmt: skip
    return verilog_task(
        name="test/cnt-v1", top="cnt", description="A 4-bit counter with enable.",
        ports=ports, reference=COUNTER_REF, seed=5, clock="clk", reset="rst",
        segments=4, cycles=32,
    )  # fmt: skip


def empty(task: Task) -> str:
    return f"```verilog\n{task.payload['module_header']}\nendmodule\n```"


def test_gold_passes_and_the_empty_module_scores_zero_on_every_family(verifier, family_tasks):
    for task in family_tasks:
        gold = verifier.verify(task, task.hidden["reference"])
        assert gold.passed and gold.reward == 1.0, (task.id, gold.tests[:2], gold.infra_error)
        assert len(gold.tests) == count_tests(task) in (8, 9) and gold.sandbox is not None
        nothing = verifier.verify(task, empty(task))
        assert nothing.reward == 0.0 and not nothing.passed, task.id
        assert verifier.verify(task, "").reward == 0.0


def test_a_wrong_reset_value_fails_with_the_output_and_cycle_named(verifier):
    task = counter_task()
    wrong = COUNTER_REF.replace("q <= 4'd0", "q <= 4'd1")
    v = verifier.verify(task, wrong)
    assert not v.passed and v.reward < 1.0
    bad = next(t for t in v.tests if t.status == "failed")
    assert bad.detail.startswith("mismatch: cycle ") and " q expected " in bad.detail


def test_a_missing_enable_is_caught(verifier):
    v = verifier.verify(counter_task(), COUNTER_REF.replace("else if (en)", "else"))
    assert v.reward == 0.0


def test_x_where_the_reference_has_bits_is_a_mismatch_but_x_in_the_reference_is_free():
    assert not compare_cycle("0101", "01x1") and not compare_cycle("1", "z")
    assert compare_cycle("xxxx", "0110") and compare_cycle("z", "z")
    assert not compare_cycle("01", "001")


def test_an_uninitialised_register_is_x_and_fails(verifier):
    no_reset = COUNTER_REF.replace("if (rst) q <= 4'd0;\n    else ", "")
    v = verifier.verify(counter_task(), no_reset)
    assert v.reward == 0.0 and "got xxxx" in v.tests[0].detail


def test_a_compile_error_is_an_error_on_every_segment(verifier):
    v = verifier.verify(counter_task(), COUNTER_REF.replace("q + 4'd1", "q +"))
    assert {t.status for t in v.tests} == {"error"}
    assert v.tests[0].detail.startswith("compile error: ") and "design.v" in v.tests[0].detail


def test_a_static_rejection_flags_the_construct(verifier):
    v = verifier.verify(
        counter_task(), COUNTER_REF.replace("endmodule", "initial $finish;\nendmodule")
    )
    assert v.reward == 0.0 and v.flags and v.flags[0].kind == "forbidden-construct"
    assert v.tests[0].detail.startswith("rejected: system task $finish")


def test_a_hanging_design_is_a_timeout(verifier):
    hang = COUNTER_REF.replace("endmodule", "reg r;\ninitial forever begin end\nendmodule")
    v = verifier.verify(counter_task(), hang)
    assert v.reward == 0.0 and {t.status for t in v.tests} == {"timeout"}
    assert "time limit" in v.tests[0].detail


def test_a_broken_reference_is_an_infra_error_not_a_zero(verifier):
    task = counter_task().revised(
        hidden={**counter_task().hidden, "reference": "module cnt(; endmodule"}
    )
    v = verifier.verify(task, COUNTER_REF)
    assert v.infra_error and "reference does not simulate" in v.infra_error and not v.passed


@pytest.mark.parametrize("field", ["ports", "top"])
def test_a_malformed_task_is_an_infra_error_naming_the_field(verifier, field):
    task = counter_task()
    bad = Task.create(
        name="test/bad-v1", prompt="p", domain="verilog", kind="verilog",
        payload={**task.payload, field: 7}, hidden=task.hidden,
    )  # fmt: skip
    v = verifier.verify(bad, COUNTER_REF)
    assert v.infra_error and field in v.infra_error and "test/bad-v1" in v.infra_error


def test_an_output_inverted_while_the_clock_is_high_fails_in_every_segment(verifier):
    # VerilogEval's own testbench reports half its samples wrong; sampled only with the clock
    # low, this scored 1.0.
    cheat = (
        COUNTER_REF.replace("output reg [3:0] q", "output [3:0] q")
        .replace(
            "always @(posedge clk) begin",
            "reg [3:0] r;\n  assign q = clk ? ~r : r;\n  always @(posedge clk) begin",
        )
        .replace("q <=", "r <=")
        .replace("q + 4'd1", "r + 4'd1")
    )
    v = verifier.verify(counter_task(), cheat)
    assert v.reward == 0.0 and not v.passed, v.tests[:1]
    assert "q (clock high) expected" in v.tests[0].detail


def test_a_design_wrong_only_on_a_value_the_reference_compares_with_is_caught(verifier):
    ref = "module m(input [7:0] a, output y);\n  assign y = (a == 8'hA5) ? 1 : 0;\nendmodule\n"
    task = verilog_task(
        name="test/eq-v1", top="m", description="y is 1 when a is 8'hA5.",
        ports=[Port("a", "input", 8), Port("y", "output", 1)], reference=ref, seed=2,
        segments=8, cycles=16,
    )  # fmt: skip
    # With this seed, 128 uniform draws (the stimulus before branch values) never hold 0xA5.
    assert verifier.verify(task, ref).passed
    v = verifier.verify(task, ref.replace("(a == 8'hA5) ? 1 : 0", "1'b0"))
    assert not v.passed and "y expected 1 got 0" in next(
        t.detail for t in v.tests if t.status == "failed"
    )
