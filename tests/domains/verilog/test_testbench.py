"""The testbench's stimulus draws the values the reference branches on, and its records carry
both clock phases."""

from __future__ import annotations

from referee.domains.verilog.spec import Port, Stimulus, VerilogSpec
from referee.domains.verilog.testbench import (
    BRANCH_RATE,
    branch_values,
    parse_records,
    stimulus_vectors,
)
from referee.domains.verilog.testbench import (
    testbench as make_testbench,
)


def spec_of(reference: str, *ports: Port, clock: str | None = None) -> VerilogSpec:
    return VerilogSpec("t", "m", ports, clock, None, 1, reference, Stimulus(seed=4))


A8, B4, Y = Port("a", "input", 8), Port("b", "input", 4), Port("y", "output", 1)


def test_compared_literals_and_case_items_are_branch_values():
    ref = """module m(input [7:0] a, input [3:0] b, output reg y);
      // a == 8'h11 in a comment does not count
      always @* begin
        case (b)
          4'd3, 4'b1010: y = a != 'd7;
          default: y = (8'hF0 == a) || (a[7:4] == 4'h9) || (b < 2);
        endcase
      end
    endmodule"""
    got = branch_values(spec_of(ref, A8, B4, Y))
    assert got["a"] == sorted([(7, 255), (0xF0, 255), (0x90, 0xF0)])
    assert got["b"] == [(1, 15), (2, 15), (3, 15), (10, 15)]
    assert branch_values(spec_of("module m(input [7:0] a, output y); assign y = &a; endmodule",
                                 A8, Y)) == {}  # fmt: skip


def test_the_stimulus_plays_a_compared_value_often():
    ref = "module m(input [7:0] a, output y); assign y = (a == 8'hA5) ? 1 : 0; endmodule"
    vectors = stimulus_vectors(spec_of(ref, A8, Y))
    hits = sum(v == 0xA5 for v in vectors)
    # 256 cycles, a quarter of them branch values: about 64, by chance alone 1.
    assert len(vectors) == 256 and hits > 0.5 * BRANCH_RATE * len(vectors)


def test_a_clocked_testbench_records_each_cycle_with_the_clock_low_and_high():
    spec = spec_of("", Port("clk", "input", 1), A8, Y, clock="clk")
    _, source = make_testbench(spec, "N1", 3)
    assert '"N1 %0d %b"' in source and '"N1 h%0d %b"' in source
    out = "N1 0 1\nN1 h0 0\nN1 1 1\nN1 h2 1\nN1 END 3\n"
    records, ended = parse_records(out, "N1", 3, 1, phases=2)
    assert records == [["1", "0"], None, None] and ended
    _, comb = make_testbench(spec_of("", A8, Y), "N2", 3)
    assert "h%0d" not in comb
