"""Formal equivalence with Yosys in the sandbox: the references are proved equal to
themselves, wrong designs that simulation lets through get a counterexample in their
feedback, and an undecided proof decides nothing."""

from __future__ import annotations

import shutil

import pytest

from referee.domains.verilog.formal import parse_setting
from referee.domains.verilog.spec import Port
from referee.domains.verilog.task import verilog_task
from referee.domains.verilog.verifier import VerilogVerifier
from referee.errors import TaskError
from referee.tasks.model import Task
from referee.verify.dispatch import count_tests

from .conftest import HAVE_IVERILOG, NO_IVERILOG

needs_tools = pytest.mark.skipif(
    not HAVE_IVERILOG or shutil.which("yosys") is None,
    reason=NO_IVERILOG + "; yosys is not installed: apt-get install yosys (or make bootstrap)",
)

ADDER = (
    "module add(input [15:0] a, input [15:0] b, output [16:0] s);\n  assign s = a + b;\nendmodule\n"
)
DFF = (
    "module reg8(input clk, input rst, input [7:0] d, output reg [7:0] q);\n"
    "  always @(posedge clk) if (rst) q <= 8'd0; else q <= d;\nendmodule\n"
)


def adder_task(formal: object = True) -> Task:
    t = verilog_task(
        name="test/add-v1", top="add", description="s = a + b.",
        ports=[Port("a", "input", 16), Port("b", "input", 16), Port("s", "output", 17)],
        reference=ADDER, seed=3,
    )  # fmt: skip
    return t.revised(hidden={**t.hidden, "formal": formal})


def reg_task(formal: object = True) -> Task:
    t = verilog_task(
        name="test/reg8-v1", top="reg8", description="q takes d at each edge.",
        ports=[Port("clk", "input", 1), Port("rst", "input", 1), Port("d", "input", 8),
               Port("q", "output", 8)],
        reference=DFF, seed=3, clock="clk", reset="rst", segments=4,
    )  # fmt: skip
    return t.revised(hidden={**t.hidden, "formal": formal})


@pytest.fixture(scope="module")
def formal_verifier():
    if not HAVE_IVERILOG or shutil.which("yosys") is None:
        pytest.skip("iverilog or yosys is not installed (make bootstrap)")
    with VerilogVerifier() as v:
        yield v


def test_the_setting_reads_true_false_and_bmc_depths():
    assert parse_setting(None) is None and parse_setting(False) is None
    assert parse_setting(True) == 20 and parse_setting("bmc:5") == 5
    for bad in ("bmc:0", "yes", 3, "bmc:9999"):
        with pytest.raises(TaskError, match="true, false or 'bmc:N'"):
            parse_setting(bad)


@needs_tools
def test_a_combinational_bug_on_one_operand_pair_gets_a_counterexample(formal_verifier):
    wrong = ADDER.replace("a + b", "(a == 16'hBEEF && b == 16'h1234) ? 17'd0 : a + b")
    assert VerilogVerifier(formal_verifier.sandbox).verify(adder_task(False), wrong).passed
    v = formal_verifier.verify(adder_task(), wrong)
    formal = v.tests[-1]
    assert not v.passed and formal.name == "formal" and formal.status == "failed"
    assert "a=1011111011101111 b=0001001000110100" in formal.detail, formal.detail
    assert "s expected 01101000100100011 got 00000000000000000" in formal.detail
    assert len(v.tests) == count_tests(adder_task()) == 9


@needs_tools
def test_a_sequential_bug_behind_a_state_and_input_pair_is_found_by_bmc(formal_verifier):
    wrong = DFF.replace("q <= d;", "q <= (q == 8'h5A && d == 8'hC3) ? 8'h00 : d;")
    assert VerilogVerifier(formal_verifier.sandbox).verify(reg_task(False), wrong).passed
    v = formal_verifier.verify(reg_task("bmc:6"), wrong)
    assert not v.passed and v.tests[-1].status == "failed", v.tests[-1]
    detail = v.tests[-1].detail
    assert "bounded to 6 cycles" in detail and "d=11000011" in detail and "rst=1" in detail


@needs_tools
def test_references_and_equivalent_rewrites_are_proved(formal_verifier, family_tasks):
    for task in family_tasks:
        task = task.revised(hidden={**task.hidden, "formal": True})
        v = formal_verifier.verify(task, task.hidden["reference"])
        assert v.passed and v.tests[-1].status == "passed", (task.id, v.tests[-1])
    rewrite = ADDER.replace("a + b", "{1'b0, b} + {1'b0, a}")
    assert formal_verifier.verify(adder_task(), rewrite).tests[-1].detail == (
        "proved equivalent (combinational)"
    )


@needs_tools
def test_an_undecided_proof_or_a_failed_simulation_skips_the_formal_test(formal_verifier):
    # Yosys cannot read a real-valued delay expression in a continuous assignment; iverilog can.
    odd = ADDER.replace("assign s = a + b;", "real r = 1.5;\n  assign s = a + b;")
    v = formal_verifier.verify(adder_task(), odd)
    assert v.passed and v.reward == 1.0 and v.tests[-1].status == "skipped", v.tests[-1]
    assert v.tests[-1].detail.startswith("not decided")
    wrong = formal_verifier.verify(adder_task(), ADDER.replace("a + b", "a - b"))
    assert wrong.tests[-1].detail == "not run: the simulation failed" and wrong.reward == 0.0


LATCH = "module hold(input g, input d, output reg q);\n  always @(*) if (g) q = d;\nendmodule\n"


@needs_tools
def test_a_latch_without_a_clock_is_undecided_not_a_counterexample(formal_verifier):
    # One step leaves what each copy's latch holds free: the reference would get a
    # counterexample against itself (VerilogEval's circuit8 and m2014_q4a did).
    t = verilog_task(
        name="test/hold-v1", top="hold", description="q follows d while g is 1, else holds.",
        ports=[Port("g", "input", 1), Port("d", "input", 1), Port("q", "output", 1)],
        reference=LATCH, seed=5,
    )  # fmt: skip
    t = t.revised(hidden={**t.hidden, "formal": True})
    v = formal_verifier.verify(t, LATCH)
    assert v.passed and v.tests[-1].name == "formal" and v.tests[-1].status == "skipped"
    assert "holds state (a latch) but has no clock" in v.tests[-1].detail
