"""The static guard: what a graded module may not write, found through comments and strings."""

from __future__ import annotations

import pytest

from referee.domains.verilog.source import check_source, extract_verilog

OK = "module m(input a, output y);\n  assign y = ~a;\nendmodule\n"


def problems(code: str, top: str = "m") -> list[str]:
    return check_source(code, top).problems


def test_a_plain_module_passes_and_its_modules_are_listed():
    checked = check_source(OK + "module helper(input x, output z); assign z = x; endmodule", "m")
    assert checked.problems == [] and checked.modules == ["m", "helper"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("initial $finish;", "$finish"),
        ('initial $display("PASS");', "$display"),
        ('integer f; initial f = $fopen("tb.v");', "$fopen"),
        ('initial $system("ls");', "$system"),
        ("initial tb.err = 0;", "hierarchical reference tb.err"),
        ("wire w = g[0].x;", "hierarchical reference"),
        ("initial $root.t = 0;", "$root"),
        ("wire \\tb.x ;", "escaped identifiers"),
        ("initial $ finish;", "system task $"),
    ],
)
def test_forbidden_constructs_inside_a_module_are_named(body, named):
    found = problems(OK.replace("endmodule", f"  {body}\nendmodule"))
    assert found and named in " ".join(found), found


@pytest.mark.parametrize(
    ("code", "named"),
    [
        ('`include "tb.v"\n' + OK, "`include"),
        ("`define X 1\n" + OK, "`define"),
        ("wire stolen;\n" + OK, "top level"),
        ("package p; endpackage\n" + OK, "'package'"),
        ("import p::*;\n" + OK, "'import'"),
        (OK + OK, "declared twice"),
        ("module other(input a); endmodule", "no module named 'm'"),
        ("module m(input a); /* open", "unterminated"),
        ('module m(input a); parameter S = "`x"; endmodule', "backtick"),
    ],
)
def test_forbidden_file_structure_is_named(code, named):
    found = problems(code)
    assert found and named in " ".join(found), found


def test_comments_and_strings_neither_hide_nor_raise_findings():
    commented = OK.replace("endmodule", "  // $finish tb.x `include\n  /* $display */\nendmodule")
    assert problems(commented) == []
    assert problems(OK.replace("endmodule", '  parameter S = "$finish a.b";\nendmodule')) == []
    smuggled = OK.replace("endmodule", "  /* */ initial $finish;\nendmodule")
    assert "$finish" in " ".join(problems(smuggled))


def test_allowed_directives_numbers_and_named_ports_are_not_findings():
    code = (
        "`timescale 1ns/1ps\n`default_nettype none\n"
        "module m(input wire [3:0] a, output wire [7:0] y);\n"
        "  localparam real R = 1.5e3;\n  wire [7:0] t = $unsigned(a) + 8'hF + 'd1;\n"
        "  helper h (.x(a[0]), .z());\n  assign y = t + $clog2(16);\nendmodule\n"
        "module helper(input x, output z); assign z = x; endmodule\n"
    )
    checked = check_source(code, "m")
    assert checked.problems == []
    assert "`timescale" not in checked.code and checked.code.count("\n") == code.count("\n")


def test_the_last_verilog_block_of_an_answer_is_taken():
    text = "first\n```verilog\nmodule a; endmodule\n```\nthen\n```sv\nmodule b; endmodule\n```\n"
    assert extract_verilog(text) == "module b; endmodule\n"
    assert extract_verilog("```\nmodule c; endmodule\n```") == "module c; endmodule\n"
    assert extract_verilog(OK) == OK
    assert extract_verilog("Sure:\n```verilog\nmodule d; endmodule\n") == "module d; endmodule\n"
