import ast

from referee.synth.candidates import complexity, statement_line, stub_function
from referee.synth.functions import function_nodes

SRC = '''class A:
    def f(self, x, y):
        """Doc."""
        total = (x +
                 y)
        if (x >
                y):
            return [i
                    for i in range(3)]
        while x < 3:
            x += 1
        return total
'''


def test_statement_line_is_what_coverage_records():
    fn = function_nodes(SRC)["A.f"]
    expected = {4: 4, 5: 4, 6: 6, 7: 6, 8: 8, 9: 8, 10: 10, 11: 11, 12: 12}
    assert {line: statement_line(fn, line) for line in expected} == expected


def test_complexity_counts_branches_loops_and_comparisons():
    fn = function_nodes(SRC)["A.f"]
    # 1 + if + while + comprehension + 2 comparisons
    assert complexity(fn) == 6


def test_stub_keeps_signature_and_docstring():
    out = stub_function(SRC, "A.f", "todo")
    assert out is not None
    ast.parse(out)
    assert (
        'def f(self, x, y):\n        """Doc."""\n        raise NotImplementedError(\'todo\')' in out
    )
    assert stub_function(SRC, "A.g") is None


def test_function_local_stub_equals_the_whole_module_one():
    from pathlib import Path

    from referee.synth.candidates import stub_in_module

    fixture = Path(__file__).parents[1] / "fixtures" / "minirepo" / "minilib"
    sources = [SRC, *(p.read_text() for p in sorted(fixture.glob("*.py")))]
    checked = 0
    for source in sources:
        for qual in function_nodes(source):
            assert stub_function(source, qual, "m") == stub_in_module(source, qual, "m"), qual
            checked += 1
    assert checked >= 7
