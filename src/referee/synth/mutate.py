"""Mutation operators for bug-injection tasks, on libcst trees so that formatting survives.

A mutation is one small, plausible change at one place of a function: a comparison made strict
or loose, an arithmetic or boolean operator swapped, a condition negated, an integer constant
moved by one, a ``return`` value dropped, a guard (an ``if`` block) or an assignment removed,
the branches of an ``if``/``else`` swapped, ``break`` and ``continue`` exchanged, or one call
exchanged for its sibling (``min``/``max``, ``lower``/``upper``...). Because libcst keeps
whitespace and comments, the diff between the original and the mutant is the edit itself, as in
a real change. Sites are named by the qualified name of the innermost function holding them
(``Class.method``, ``outer.inner``), the same names the coverage map uses.

>>> src = "def f(xs):\\n    return [x for x in xs if x > 0]  # positives\\n"
>>> m = find_mutations(src)[0]
>>> m.operator, m.line, m.function
('comparison', 2, 'f')
>>> print(apply_mutation(src, m), end="")
def f(xs):
    return [x for x in xs if x >= 0]  # positives
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from referee.synth.functions import edit_function, function_nodes

__all__ = ["OPERATORS", "Mutation", "apply_mutation", "find_mutations"]

_COMPARE_SWAPS: dict[type[cst.CSTNode], type[cst.CSTNode]] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
}
_ARITH_SWAPS: dict[type[cst.CSTNode], type[cst.CSTNode]] = {
    cst.Add: cst.Subtract,
    cst.Subtract: cst.Add,
    cst.Multiply: cst.FloorDivide,
    cst.FloorDivide: cst.Multiply,
    cst.Modulo: cst.FloorDivide,
}
_BOOL_SWAPS: dict[type[cst.CSTNode], type[cst.CSTNode]] = {cst.And: cst.Or, cst.Or: cst.And}
# Sibling calls a programmer confuses; both directions.
_CALL_PAIRS = [
    ("min", "max"),
    ("any", "all"),
    ("lower", "upper"),
    ("lstrip", "rstrip"),
    ("startswith", "endswith"),
    ("find", "rfind"),
    ("index", "rindex"),
    ("split", "rsplit"),
    ("keys", "values"),
]
_CALL_SWAPS = {a: b for a, b in _CALL_PAIRS} | {b: a for a, b in _CALL_PAIRS}
# An exception raised or caught under the name of a sibling.
_EXC_SWAPS = {
    "KeyError": "IndexError",
    "IndexError": "KeyError",
    "ValueError": "TypeError",
    "TypeError": "ValueError",
    "AttributeError": "KeyError",
    "LookupError": "ValueError",
}

#: Operator name -> what it does, for prompts and reports.
OPERATORS: dict[str, str] = {
    "comparison": "a comparison made strict or loose, or inverted",
    "arithmetic": "an arithmetic operator swapped",
    "boolean": "`and` and `or` swapped",
    "negate-condition": "the condition of an `if` or `while` negated",
    "constant": "an integer constant moved by one",
    "drop-return-value": "a `return <value>` turned into `return None`",
    "remove-conditional": "an `if` block without `else` removed (a guard or a special case)",
    "swap-if-else": "the bodies of an `if` and its `else` swapped",
    "remove-assignment": "an assignment or augmented assignment removed",
    "break-continue": "`break` and `continue` exchanged",
    "call-swap": "a call exchanged for its sibling (min/max, any/all, lower/upper, ...)",
    "exception-swap": "an exception raised or caught under a sibling's name (KeyError/IndexError)",
    "remove-super-call": "a `super().method(...)` call removed (a class's parent never set up)",
}


# libcst trees are immutable, so one parse of a module serves every site of it (parsing is
# the slow part: tens of milliseconds for a large module).
_parse = lru_cache(maxsize=32)(cst.parse_module)


@dataclass(frozen=True)
class Mutation:
    """One place and one change; ``index`` ranks it among ``operator``'s sites in ``function``."""

    operator: str
    index: int
    line: int
    function: str | None
    description: str


def _call_name(node: cst.Call) -> cst.Name | None:
    func = node.func
    name = func.attr if isinstance(func, cst.Attribute) else func
    return name if isinstance(name, cst.Name) and name.value in _CALL_SWAPS else None


def _exception_name(node: cst.CSTNode) -> cst.Name | None:
    """The swappable exception name a ``raise`` or ``except`` names, if any."""
    target: cst.BaseExpression | None = None
    if isinstance(node, cst.Raise):
        target = node.exc
        if isinstance(target, cst.Call):
            target = target.func
    elif isinstance(node, cst.ExceptHandler):
        target = node.type
    return target if isinstance(target, cst.Name) and target.value in _EXC_SWAPS else None


def _is_super_call(node: cst.CSTNode) -> bool:
    if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1):
        return False
    expr = node.body[0]
    if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call)):
        return False
    func = expr.value.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    )


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _sites(node: cst.CSTNode) -> list[tuple[str, str]]:
    """The (operator, description) pairs that apply at ``node``; one walk defines them all."""
    if isinstance(node, cst.ComparisonTarget) and type(node.operator) in _COMPARE_SWAPS:
        new = _COMPARE_SWAPS[type(node.operator)].__name__
        return [("comparison", f"{type(node.operator).__name__} -> {new}")]
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITH_SWAPS:
        new = _ARITH_SWAPS[type(node.operator)].__name__
        return [("arithmetic", f"{type(node.operator).__name__} -> {new}")]
    if isinstance(node, cst.BooleanOperation):
        return [("boolean", f"{type(node.operator).__name__} swapped")]
    if isinstance(node, cst.If):
        out = [("negate-condition", "if condition negated")]
        if node.orelse is None:
            out.append(("remove-conditional", "if block removed"))
        elif isinstance(node.orelse, cst.Else):
            out.append(("swap-if-else", "if and else bodies swapped"))
        return out
    if isinstance(node, cst.While):
        return [("negate-condition", "while condition negated")]
    if isinstance(node, cst.Integer):
        return [("constant", f"{node.value} -> {node.value} +/- 1")]
    if isinstance(node, cst.Return) and node.value is not None and not _is_none(node.value):
        return [("drop-return-value", "return value dropped")]
    if (
        isinstance(node, cst.SimpleStatementLine)
        and len(node.body) == 1
        and isinstance(node.body[0], cst.Assign | cst.AugAssign)
    ):
        return [("remove-assignment", "assignment removed")]
    if isinstance(node, cst.Break | cst.Continue):
        return [("break-continue", f"{type(node).__name__.lower()} exchanged")]
    if (exc := _exception_name(node)) is not None:
        return [("exception-swap", f"{exc.value} -> {_EXC_SWAPS[exc.value]}")]
    if _is_super_call(node):
        return [("remove-super-call", "super() call removed")]
    if isinstance(node, cst.Call) and (name := _call_name(node)) is not None:
        return [("call-swap", f"{name.value} -> {_CALL_SWAPS[name.value]}")]
    return []


class _Scoped(cst.CSTVisitor):
    """Tracks the qualified name of the innermost function (None outside any function)."""

    def __init__(self) -> None:
        self.scope: list[tuple[str, str]] = []  # (kind, name)

    @property
    def function(self) -> str | None:
        if not self.scope or self.scope[-1][0] != "def":
            return None
        return ".".join(name for _, name in self.scope)

    def _enter(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.FunctionDef):
            self.scope.append(("def", node.name.value))
        elif isinstance(node, cst.ClassDef):
            self.scope.append(("class", node.name.value))

    def _leave(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            self.scope.pop()


class _Finder(_Scoped):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, only: str | None) -> None:
        super().__init__()
        self.only = only
        self.found: list[Mutation] = []
        self.counts: dict[tuple[str, str], int] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        fn = self.function
        if fn is not None and (self.only is None or fn == self.only):
            for operator, description in _sites(node):
                line = self.get_metadata(PositionProvider, node).start.line
                index = self.counts.get((fn, operator), 0)
                self.counts[(fn, operator)] = index + 1
                self.found.append(Mutation(operator, index, line, fn, description))
        self._enter(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._leave(original_node)


class _Applier(cst.CSTTransformer):
    """Finds the target in the same pre-order walk as the finder, then changes that node."""

    def __init__(self, target: Mutation) -> None:
        super().__init__()
        self.target = target
        self.scope = _Scoped()
        self.counts: dict[tuple[str, str], int] = {}
        self.node: cst.CSTNode | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        fn = self.scope.function
        if fn is not None and (self.target.function is None or fn == self.target.function):
            for operator, _ in _sites(node):
                index = self.counts.get((fn, operator), 0)
                self.counts[(fn, operator)] = index + 1
                if operator == self.target.operator and index == self.target.index:
                    self.node = node
        self.scope._enter(node)
        return True

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        self.scope._leave(original_node)
        if original_node is not self.node:
            return updated_node
        return _change(updated_node, self.target.operator)


def _change(node: cst.CSTNode, operator: str) -> cst.CSTNode | cst.RemovalSentinel:
    if isinstance(node, cst.ComparisonTarget):
        return node.with_changes(operator=_COMPARE_SWAPS[type(node.operator)]())
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(operator=_ARITH_SWAPS[type(node.operator)]())
    if isinstance(node, cst.BooleanOperation):
        return node.with_changes(operator=_BOOL_SWAPS[type(node.operator)]())
    if operator in ("remove-conditional", "remove-assignment", "remove-super-call"):
        return cst.RemoveFromParent()
    if operator == "exception-swap" and (exc := _exception_name(node)) is not None:
        renamed = exc.with_changes(value=_EXC_SWAPS[exc.value])
        if isinstance(node, cst.ExceptHandler):
            return node.with_changes(type=renamed)
        assert isinstance(node, cst.Raise)
        if isinstance(node.exc, cst.Call):
            return node.with_changes(exc=node.exc.with_changes(func=renamed))
        return node.with_changes(exc=renamed)
    if (
        operator == "swap-if-else"
        and isinstance(node, cst.If)
        and isinstance(node.orelse, cst.Else)
    ):
        return node.with_changes(
            body=node.orelse.body, orelse=node.orelse.with_changes(body=node.body)
        )
    if isinstance(node, cst.If | cst.While):
        test = node.test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        negated = cst.UnaryOperation(operator=cst.Not(), expression=test)
        # `if(x):` is valid Python but `ifnot (x):` is not: the keyword needs its space back.
        space = cst.SimpleWhitespace(" ")
        if isinstance(node, cst.If):
            return node.with_changes(test=negated, whitespace_before_test=space)
        return node.with_changes(test=negated, whitespace_after_while=space)
    if isinstance(node, cst.Integer):
        value = int(node.value, 0)
        # Up from zero, otherwise down by one: both are the classic off-by-one.
        return node.with_changes(value=str(value + 1 if value == 0 else value - 1))
    if isinstance(node, cst.Return):
        return node.with_changes(value=cst.Name("None"))
    if isinstance(node, cst.Break):
        return cst.Continue(semicolon=node.semicolon)
    if isinstance(node, cst.Continue):
        return cst.Break(semicolon=node.semicolon)
    if isinstance(node, cst.Call) and (name := _call_name(node)) is not None:
        new = name.with_changes(value=_CALL_SWAPS[name.value])
        if isinstance(node.func, cst.Attribute):
            return node.with_changes(func=node.func.with_changes(attr=new))
        return node.with_changes(func=new)
    raise AssertionError(f"no change defined for {type(node).__name__} ({operator})")


def find_mutations(source: str, function: str | None = None) -> list[Mutation]:
    """Every mutation site of ``source`` in source order; only inside ``function`` when given.

    ``function`` is a qualified name (``Class.method``); sites outside any function are never
    returned (a mutated module constant is rarely a realistic bug).
    """
    finder = _Finder(function)
    MetadataWrapper(_parse(source), unsafe_skip_copy=True).visit(finder)
    return sorted(finder.found, key=lambda m: (m.line, m.operator, m.index))


def apply_mutation(source: str, mutation: Mutation) -> str:
    """``source`` with ``mutation`` applied; everything else byte for byte the same.

    Raises ``ValueError`` when the site is gone or the change would leave invalid Python. The
    change is made on the function's own lines where that is exact (transforming one function
    instead of the whole module is what makes thousands of candidates cheap), else on the module.
    """
    local = apply_in_function(source, mutation)
    return local if local is not None else apply_in_module(source, mutation)


def apply_in_function(source: str, mutation: Mutation) -> str | None:
    """``source`` with ``mutation`` applied by re-parsing only its function (fast on big
    modules); None when the mutation names no function or it cannot be found there, so that the
    caller falls back to :func:`apply_in_module`."""
    if mutation.function is None:
        return None
    node = function_nodes(source).get(mutation.function) if _parses(source) else None
    start = node.lineno if node is not None else 1

    def edit(snippet: str, name: str) -> str | None:
        local = Mutation(
            mutation.operator, mutation.index, mutation.line - start + 1, name,
            mutation.description,
        )  # fmt: skip
        try:
            return apply_in_module(snippet, local)
        except ValueError:
            return None

    return edit_function(source, mutation.function, edit)


def _parses(source: str) -> bool:
    try:
        function_nodes(source)
    except SyntaxError:
        return False
    return True


def apply_in_module(source: str, mutation: Mutation) -> str:
    """``source`` with ``mutation`` applied; everything else byte for byte the same.

    Raises ``ValueError`` when the site is gone, or when the change would leave invalid Python
    (removing the only statement of a block): such a mutation is simply not a candidate.
    """
    applier = _Applier(mutation)
    try:
        code = _parse(source).visit(applier).code
        compile(code, "<mutant>", "exec")
    except (SyntaxError, cst.CSTValidationError, ValueError) as e:
        raise ValueError(f"mutation leaves invalid Python: {mutation}: {e}") from None
    if applier.node is None:
        raise ValueError(f"mutation site not found: {mutation}")
    return code
