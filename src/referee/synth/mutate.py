"""Mutation operators for bug-injection tasks, on libcst trees so that formatting survives.

A mutation is a single, small, plausible change at one place of a function: a comparison made
strict or loose, an arithmetic or boolean operator swapped, a condition negated, an integer
constant moved by one, a slice or ``range`` bound shifted, a ``return`` value dropped. Because
libcst keeps whitespace and comments, the diff between the original and the mutant is the one
token or expression that changed, as in a real edit.

>>> src = "def f(xs):\\n    return [x for x in xs if x > 0]  # positives\\n"
>>> m = find_mutations(src)[0]
>>> m.operator, m.line
('comparison', 2)
>>> print(apply_mutation(src, m), end="")
def f(xs):
    return [x for x in xs if x >= 0]  # positives
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

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

#: Operator name -> what it does, for prompts and reports.
OPERATORS: dict[str, str] = {
    "comparison": "a comparison made strict or loose, or inverted",
    "arithmetic": "an arithmetic operator swapped",
    "boolean": "`and` and `or` swapped",
    "negate-condition": "the condition of an `if` or `while` negated",
    "constant": "an integer constant moved by one",
    "drop-return-value": "a `return <value>` turned into `return None`",
}


@dataclass(frozen=True)
class Mutation:
    """One place and one change; ``index`` is its rank among the sites of ``operator``."""

    operator: str
    index: int
    line: int
    function: str | None
    description: str


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, only: str | None) -> None:
        self.only = only
        self.stack: list[str] = []
        self.found: list[Mutation] = []
        self.counts: dict[str, int] = {}

    def _add(self, operator: str, node: cst.CSTNode, description: str) -> None:
        if self.only is not None and (not self.stack or self.stack[-1] != self.only):
            return
        line = self.get_metadata(PositionProvider, node).start.line
        index = self.counts.get(operator, 0)
        self.counts[operator] = index + 1
        fn = self.stack[-1] if self.stack else None
        self.found.append(Mutation(operator, index, line, fn, description))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        if type(node.operator) in _COMPARE_SWAPS:
            new = _COMPARE_SWAPS[type(node.operator)].__name__
            self._add("comparison", node, f"{type(node.operator).__name__} -> {new}")

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) in _ARITH_SWAPS:
            new = _ARITH_SWAPS[type(node.operator)].__name__
            self._add("arithmetic", node, f"{type(node.operator).__name__} -> {new}")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._add("boolean", node, f"{type(node.operator).__name__} swapped")

    def visit_If(self, node: cst.If) -> None:
        self._add("negate-condition", node, "if condition negated")

    def visit_While(self, node: cst.While) -> None:
        self._add("negate-condition", node, "while condition negated")

    def visit_Integer(self, node: cst.Integer) -> None:
        self._add("constant", node, f"{node.value} -> {node.value} +/- 1")

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not (
            isinstance(node.value, cst.Name) and node.value.value == "None"
        ):
            self._add("drop-return-value", node, "return value dropped")


class _Applier(cst.CSTTransformer):
    """Finds the target in the same pre-order walk as the finder, then changes that node."""

    def __init__(self, target: Mutation) -> None:
        self.target = target
        self.counts: dict[str, int] = {}
        self.stack: list[str] = []
        self.node: cst.CSTNode | None = None

    def _count(self, operator: str, node: cst.CSTNode) -> None:
        if self.target.function is not None and (
            not self.stack or self.stack[-1] != self.target.function
        ):
            return
        index = self.counts.get(operator, 0)
        self.counts[operator] = index + 1
        if operator == self.target.operator and index == self.target.index:
            self.node = node

    @property
    def done(self) -> bool:
        return self.node is not None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        self.stack.pop()
        return updated_node

    # The same sites, in the same order, as _Finder.
    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        if type(node.operator) in _COMPARE_SWAPS:
            self._count("comparison", node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) in _ARITH_SWAPS:
            self._count("arithmetic", node)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._count("boolean", node)

    def visit_If(self, node: cst.If) -> None:
        self._count("negate-condition", node)

    def visit_While(self, node: cst.While) -> None:
        self._count("negate-condition", node)

    def visit_Integer(self, node: cst.Integer) -> None:
        self._count("constant", node)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not (
            isinstance(node.value, cst.Name) and node.value.value == "None"
        ):
            self._count("drop-return-value", node)

    # The change itself, on the one node found.
    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        out = super().on_leave(original_node, updated_node)
        if original_node is not self.node or not isinstance(out, cst.CSTNode):
            return out
        return _change(out)


def _change(node: cst.CSTNode) -> cst.CSTNode:
    if isinstance(node, cst.ComparisonTarget):
        return node.with_changes(operator=_COMPARE_SWAPS[type(node.operator)]())
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(operator=_ARITH_SWAPS[type(node.operator)]())
    if isinstance(node, cst.BooleanOperation):
        return node.with_changes(operator=_BOOL_SWAPS[type(node.operator)]())
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
    raise AssertionError(f"no change defined for {type(node).__name__}")


def find_mutations(source: str, function: str | None = None) -> list[Mutation]:
    """Every mutation site of ``source`` (only inside ``function`` when given), in source order."""
    finder = _Finder(function)
    MetadataWrapper(cst.parse_module(source)).visit(finder)
    return sorted(finder.found, key=lambda m: (m.line, m.operator, m.index))


def apply_mutation(source: str, mutation: Mutation) -> str:
    """``source`` with ``mutation`` applied; everything else byte for byte the same."""
    applier = _Applier(mutation)
    out = cst.parse_module(source).visit(applier)
    if not applier.done:
        raise ValueError(f"mutation site not found: {mutation}")
    return out.code
