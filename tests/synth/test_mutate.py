import ast
import difflib

import pytest

from referee.synth.mutate import OPERATORS, apply_mutation, find_mutations
from referee.tasks.humaneval import load_problems

SAMPLE = '''def clamp(x, lo=0, hi=10):
    """Keep x within [lo, hi]."""
    if x < lo and lo <= hi:   # below
        return lo
    while x > hi:
        x = x - 1
    return x * 1 % 7


class Words(dict):
    def __init__(self):
        super().__init__()
        self.seen = 0

    def lookup(self, key):
        try:
            return self[key]
        except KeyError:
            raise ValueError(key)

    def first(self, words, strict):
        total = 0
        for w in words:
            if not w:
                continue
            total += 1
            if strict:
                w = w.lower()
            else:
                w = w.strip()
            return max(w, "a")
        return total
'''
# Operators that change one token; the others replace or remove whole statements.
ONE_LINE = {
    "comparison",
    "arithmetic",
    "boolean",
    "negate-condition",
    "constant",
    "drop-return-value",
    "break-continue",
    "call-swap",
    "exception-swap",
}


def _changed(a, b):
    return [
        line
        for line in difflib.ndiff(a.splitlines(), b.splitlines())
        if line.startswith(("+ ", "- "))
    ]


def test_every_operator_is_found_in_the_sample():
    found = {m.operator for m in find_mutations(SAMPLE)}
    assert found == set(OPERATORS)


def test_each_mutation_is_valid_and_keeps_the_rest_byte_for_byte():
    for m in find_mutations(SAMPLE):
        out = apply_mutation(SAMPLE, m)
        ast.parse(out)
        assert out != SAMPLE
        if m.operator in ONE_LINE:
            assert len(_changed(SAMPLE, out)) == 2, (m, _changed(SAMPLE, out))
        assert '"""Keep x within [lo, hi]."""' in out
        assert "# below" in out or m.operator == "remove-conditional"


def test_specific_mutations():
    by = {(m.function, m.operator, m.index): m for m in find_mutations(SAMPLE)}
    assert "if x <= lo and" in apply_mutation(SAMPLE, by[("clamp", "comparison", 0)])
    assert "x < lo or lo <= hi" in apply_mutation(SAMPLE, by[("clamp", "boolean", 0)])
    assert "if not (x < lo and lo <= hi)" in apply_mutation(
        SAMPLE, by[("clamp", "negate-condition", 0)]
    )
    assert "x = x + 1" in apply_mutation(SAMPLE, by[("clamp", "arithmetic", 0)])
    assert "return x * 1 // 7" in apply_mutation(SAMPLE, by[("clamp", "arithmetic", 1)])
    assert "return None" in apply_mutation(SAMPLE, by[("clamp", "drop-return-value", 0)])
    assert "below" not in apply_mutation(SAMPLE, by[("clamp", "remove-conditional", 0)])
    assert "total += 1" not in apply_mutation(SAMPLE, by[("Words.first", "remove-assignment", 1)])
    assert "break" in apply_mutation(SAMPLE, by[("Words.first", "break-continue", 0)])
    assert "min(w, " in apply_mutation(SAMPLE, by[("Words.first", "call-swap", 1)])
    assert "except IndexError:" in apply_mutation(SAMPLE, by[("Words.lookup", "exception-swap", 0)])
    assert "raise TypeError(key)" in apply_mutation(
        SAMPLE, by[("Words.lookup", "exception-swap", 1)]
    )
    assert "super()" not in apply_mutation(SAMPLE, by[("Words.__init__", "remove-super-call", 0)])
    swapped = apply_mutation(SAMPLE, by[("Words.first", "swap-if-else", 0)])
    assert swapped.index("w.strip()") < swapped.index("w.lower()")


def test_sites_are_named_by_qualified_function():
    names = {m.function for m in find_mutations(SAMPLE)}
    assert names == {"clamp", "Words.first", "Words.__init__", "Words.lookup"}
    src = "class A:\n    def f(self):\n        return 1\n\n\nclass B:\n    def f(self):\n        return 2\n"
    sites = find_mutations(src, function="B.f")
    assert sites and all(m.function == "B.f" for m in sites)
    assert "return 1\n" in apply_mutation(src, sites[0])  # A.f untouched


def test_restricted_to_one_function():
    src = "def a(x):\n    return x + 1\n\n\ndef b(x):\n    return x - 1\n"
    sites = find_mutations(src, function="b")
    assert sites and {m.function for m in sites} == {"b"}
    out = apply_mutation(src, next(m for m in sites if m.operator == "arithmetic"))
    assert "return x + 1\n\n\ndef b(x):\n    return x + 1" in out


def test_removing_the_only_statement_of_a_block_leaves_pass():
    src = "def f(x):\n    if x:\n        x = 1\n    return x\n"
    m = next(m for m in find_mutations(src) if m.operator == "remove-assignment")
    assert apply_mutation(src, m) == "def f(x):\n    if x:\n        pass\n    return x\n"


@pytest.mark.parametrize("problem", load_problems()[::8], ids=lambda p: p.task_id)
def test_mutants_of_humaneval_solutions_are_valid_python(problem):
    source = problem.prompt + problem.canonical_solution
    for m in find_mutations(source, function=problem.entry_point):
        try:
            out = apply_mutation(source, m)
        except ValueError:
            continue
        ast.parse(out)
        assert out != source


def test_conditions_written_without_a_space_still_negate_cleanly():
    src = (
        "def f(x):\n    if(x > 1):\n        return 1\n    while(x):\n        x -= 1\n    return 0\n"
    )
    for m in find_mutations(src):
        if m.operator == "negate-condition":
            out = apply_mutation(src, m)
            ast.parse(out)
            assert "if not (" in out or "while not (" in out


def test_function_local_application_equals_the_whole_module_one():
    from pathlib import Path

    from referee.synth.mutate import apply_in_function, apply_in_module

    fixture = Path(__file__).parents[1] / "fixtures" / "minirepo" / "minilib"
    sources = [SAMPLE, *(p.read_text() for p in sorted(fixture.glob("*.py")))]
    sources += [p.prompt + p.canonical_solution for p in load_problems()[::10]]
    compared = 0
    for source in sources:
        for m in find_mutations(source):
            local = apply_in_function(source, m)
            try:
                whole = apply_in_module(source, m)
            except ValueError:
                assert local is None
                continue
            assert local in (None, whole), m
            compared += local is not None
    assert compared > 200
