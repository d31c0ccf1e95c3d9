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
'''


def test_every_operator_is_found_in_the_sample():
    found = {m.operator for m in find_mutations(SAMPLE)}
    assert found == set(OPERATORS)


def test_each_mutation_changes_one_line_and_keeps_the_rest_byte_for_byte():
    for m in find_mutations(SAMPLE):
        out = apply_mutation(SAMPLE, m)
        ast.parse(out)
        changed = [
            line
            for line in difflib.ndiff(SAMPLE.splitlines(), out.splitlines())
            if line.startswith(("+ ", "- "))
        ]
        assert len(changed) == 2, (m, changed)
        assert "# below" in out and '"""Keep x within [lo, hi]."""' in out


def test_specific_mutations():
    by = {(m.operator, m.index): m for m in find_mutations(SAMPLE)}
    assert "if x <= lo and" in apply_mutation(SAMPLE, by[("comparison", 0)])
    assert "x < lo or lo <= hi" in apply_mutation(SAMPLE, by[("boolean", 0)])
    assert "if not (x < lo and lo <= hi)" in apply_mutation(SAMPLE, by[("negate-condition", 0)])
    assert "x = x + 1" in apply_mutation(SAMPLE, by[("arithmetic", 0)])
    assert "return x * 1 // 7" in apply_mutation(SAMPLE, by[("arithmetic", 1)])
    assert "return None" in apply_mutation(SAMPLE, by[("drop-return-value", 0)])


def test_restricted_to_one_function():
    src = "def a(x):\n    return x + 1\n\n\ndef b(x):\n    return x - 1\n"
    sites = find_mutations(src, function="b")
    assert sites and {m.function for m in sites} == {"b"}
    out = apply_mutation(src, next(m for m in sites if m.operator == "arithmetic"))
    assert "return x + 1\n\n\ndef b(x):\n    return x + 1" in out


@pytest.mark.parametrize("problem", load_problems()[::8], ids=lambda p: p.task_id)
def test_mutants_of_humaneval_solutions_are_valid_python(problem):
    source = problem.prompt + problem.canonical_solution
    for m in find_mutations(source, function=problem.entry_point):
        out = apply_mutation(source, m)
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
