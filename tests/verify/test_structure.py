"""Structural predicates of refactoring tasks: syntax-tree checks on a module's text."""

from referee.verify.structure import check_structure, complexity, fingerprint, size

SOURCE = '''
def _norm(values):
    """Docstrings do not count."""
    total = sum(values)
    scaled = [v / total for v in values]
    top = max(scaled)
    return top


def first(xs):
    return _norm(xs) + 1


class Box:
    def weigh(self, items):
        return self.helper(items) * 2

    def helper(self, items):
        return len(items)
'''

BLOCK = "total = sum(values)\nscaled = [v / total for v in values]\ntop = max(scaled)\n"


def _ok(source, *rules):
    return [r.ok for r in check_structure(source, list(rules))]


def test_defines_and_calls():
    assert _ok(SOURCE, {"rule": "defines", "name": "_norm"}) == [True]
    assert _ok(SOURCE, {"rule": "defines", "name": "helper"}) == [True]  # a method counts
    assert _ok(SOURCE, {"rule": "defines", "name": "norm"}) == [False]
    assert _ok(SOURCE, {"rule": "calls", "caller": "first", "callee": "_norm"}) == [True]
    assert _ok(SOURCE, {"rule": "calls", "caller": "Box.weigh", "callee": "helper"}) == [True]
    assert _ok(SOURCE, {"rule": "calls", "caller": "Box.helper", "callee": "weigh"}) == [False]
    # The caller must exist by its qualified name.
    [r] = check_structure(SOURCE, [{"rule": "calls", "caller": "weigh", "callee": "helper"}])
    assert not r.ok and r.why == "no function weigh"


def test_no_clone_matches_statement_windows_whatever_the_names():
    renamed = BLOCK.replace("total", "t").replace("values", "xs").replace("top", "m")
    frag = fingerprint(renamed)
    assert frag["kind"] == "statements" and frag["count"] == "3"
    rule = {"rule": "no-clone", "fragment": frag, "within": None, "allowed": 0}
    [r] = check_structure(SOURCE, [rule])
    assert not r.ok and r.why == "found 1 copies"
    assert _ok(SOURCE, {**rule, "allowed": 1}) == [True]
    assert _ok(SOURCE, {**rule, "within": ["first"]}) == [True]
    # Another attribute or constant is other code.
    other = fingerprint(BLOCK.replace("max", "min").replace("v / total", "v / 2"))
    assert _ok(SOURCE, {**rule, "fragment": other}) == [True]


def test_no_clone_of_an_expression_matches_sub_expressions():
    frag = fingerprint("len(things) * 2")
    assert frag["kind"] == "expression"
    rule = {"rule": "no-clone", "fragment": frag, "within": ["Box.weigh"], "allowed": 0}
    assert _ok(SOURCE, rule) == [True]  # self.helper(items) * 2 is a call of another shape
    inlined = SOURCE.replace("self.helper(items) * 2", "len(items) * 2 + 0")
    assert _ok(inlined, rule) == [False]


def test_bounded_and_measures():
    tree_src = "def f(x):\n    if x > 1 and x < 3:\n        return [y for y in x if y]\n"
    import ast

    fn = ast.parse(tree_src).body[0]
    assert complexity(fn) == 1 + 1 + 1 + 2 + 2  # if, extra operand, two compares, comp + if
    assert size(fn) > 10
    rule = {"rule": "bounded", "function": "f", "complexity": 7, "nodes": size(fn)}
    assert _ok(tree_src, rule) == [True]
    assert _ok(tree_src, {**rule, "complexity": 6}) == [False]
    assert _ok(tree_src, {**rule, "nodes": size(fn) - 1}) == [False]
    assert _ok(tree_src, {**rule, "function": "g"}) == [False]


def test_missing_unparsable_and_malformed():
    rules = [{"rule": "defines", "name": "f"}, {"rule": "calls"}, {"rule": "???"}]
    assert _ok(None, *rules) == [False, False, False]
    assert check_structure(None, rules)[0].why == "the file is missing"
    assert _ok("def f(:\n", *rules) == [False, False, False]
    results = check_structure("def f():\n    pass\n", rules)
    assert [r.ok for r in results] == [True, False, False]
    assert "could not be checked" in results[1].why and "unknown rule" in results[2].why
