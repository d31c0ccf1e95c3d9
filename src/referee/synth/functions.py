"""One function of a module: find it by qualified name, and edit it alone.

Synthesis names functions as coverage does, by qualified name (``Class.method``,
``outer.inner``). ``function_nodes`` finds them (with ``ast``); ``edit_function`` rewrites one on
its own lines, so that a libcst transform touches a few dozen lines rather than the whole module
(the difference between seconds and minutes over thousands of candidates); ``ScopedTransformer``
is the libcst base that knows which function it is in.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache

import libcst as cst

__all__ = ["ScopedTransformer", "edit_function", "function_nodes", "is_docstring"]


@lru_cache(maxsize=32)
def function_nodes(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of ``source`` by qualified name (``Class.method``, ``outer.inner``)."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out[prefix + child.name] = child
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return out


def edit_function(source: str, qual: str, edit: Callable[[str, str], str | None]) -> str | None:
    """``source`` with function ``qual`` rewritten by ``edit`` on its own lines only.

    ``edit(snippet, name)`` gets the function's source dedented to column 0 (``name`` is its
    unqualified name there) and returns the new snippet, or None. The result is spliced back at
    the original indentation. None when that would not be exact (a string literal below the
    function's indentation, say) or the result does not compile: callers then edit the module.
    """
    try:
        node = function_nodes(source).get(qual)
    except SyntaxError:
        return None
    if node is None:
        return None
    lines = source.splitlines(keepends=True)
    start, end = node.lineno, node.end_lineno or node.lineno
    chunk = lines[start - 1 : end]
    indent = chunk[0][: len(chunk[0]) - len(chunk[0].lstrip())]
    if not chunk[0].lstrip().startswith(("def ", "async def ")) or any(
        line.strip() and not line.startswith(indent) for line in chunk
    ):
        return None
    snippet = "".join(line[len(indent) :] if line.strip() else line for line in chunk)
    if not snippet.endswith("\n"):
        snippet += "\n"
    changed = edit(snippet, qual.rsplit(".", 1)[-1])
    if changed is None:
        return None
    body = "".join(indent + line if line.strip() else line for line in changed.splitlines(True))
    if not chunk[-1].endswith("\n"):
        body = body.removesuffix("\n")
    out = "".join(lines[: start - 1]) + body + "".join(lines[end:])
    try:
        compile(out, "<edited>", "exec")
    except SyntaxError:
        return None
    return out


class ScopedTransformer(cst.CSTTransformer):
    """A libcst transformer that knows the qualified name of the function it is leaving."""

    def __init__(self) -> None:
        super().__init__()
        self.scope: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.scope.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        qual = ".".join(self.scope)
        self.scope.pop()
        return self.on_function(qual, updated)

    def on_function(
        self, qual: str, node: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        return node


def is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )
