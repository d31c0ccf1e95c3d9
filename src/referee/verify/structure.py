"""Structural predicates: what a refactoring must leave in a module, checked on its syntax tree.

A refactoring task (``referee synth --kinds refactor``) has no failing test to fix: its tests
pass before and after. What the answer must achieve is structural, and
:func:`check_structure` decides it from the resulting source text alone, parsed on the host and
never run (so nothing the solution's code does at run time can change the outcome). A
predicate is ``{"path": "pkg/mod.py", "rules": [...]}``; each rule is a plain dict:

* ``{"rule": "defines", "name": "X"}``: a function named ``X`` exists (at any level);
* ``{"rule": "calls", "caller": "C.f", "callee": "X"}``: function ``C.f`` exists and calls
  ``X`` (``X(...)``, ``self.X(...)``, ``anything.X(...)``);
* ``{"rule": "no-clone", "fragment": F, "within": ["f", ...] | None, "allowed": k}``: the
  code fragment ``F`` (from :func:`fingerprint`) occurs at most ``k`` times in the listed
  functions (None: in every function of the module);
* ``{"rule": "bounded", "function": "f", "complexity": c, "nodes": n}``: function ``f`` exists,
  its :func:`complexity` is at most ``c`` and its syntax tree has at most ``n`` nodes.

Fragments compare syntax trees with the names renamed in order of appearance (``total = a +
b`` and ``s = x + y`` are the same fragment), attributes and constants kept: a statement
fragment matches any window of as many consecutive statements of one block, an expression
fragment any sub-expression.

>>> src = "def f(a):\\n    return a * 2 + 1\\n\\ndef g(b):\\n    return f(b)\\n"
>>> [r.ok for r in check_structure(src, [{"rule": "calls", "caller": "g", "callee": "f"}])]
[True]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RuleResult", "check_structure", "complexity", "describe", "fingerprint", "size"]


@dataclass(frozen=True)
class RuleResult:
    rule: str  # the rule in words (stable: the same rule always reads the same)
    ok: bool
    why: str = ""  # why it does not hold


def complexity(node: ast.AST) -> int:
    """1 + branches, loops, handlers, extra boolean operands and comparison operators."""
    n = 1
    for sub in ast.walk(node):
        if isinstance(sub, ast.If | ast.For | ast.While | ast.IfExp | ast.ExceptHandler):
            n += 1
        elif isinstance(sub, ast.BoolOp):
            n += len(sub.values) - 1
        elif isinstance(sub, ast.Compare):
            n += len(sub.ops)
        elif isinstance(sub, ast.comprehension):
            n += 1 + len(sub.ifs)
    return n


def size(node: ast.AST) -> int:
    """The number of nodes of ``node``'s syntax tree, its docstring left out."""
    n = sum(1 for _ in ast.walk(node))
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and _is_docstring(body[0]):
        n -= sum(1 for _ in ast.walk(body[0]))
    return n


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


_NAME = re.compile(r"\b(Name\(id=|arg\(arg=)'([^']*)'")


def _rename(dumps: Sequence[str]) -> str:
    """The dumps joined, each name replaced by its rank of first appearance (``v0``, ``v1``)."""
    names: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        return f"{m.group(1)}'{names.setdefault(m.group(2), f'v{len(names)}')}'"

    return _NAME.sub(sub, "\n".join(dumps))


def _renamed(nodes: Sequence[ast.AST]) -> str:
    return _rename([ast.dump(n) for n in nodes])


def fingerprint(code: str) -> dict[str, str]:
    """The fragment of ``code`` (statements, or one expression) for a ``no-clone`` rule."""
    try:
        expr = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        stmts = ast.parse(code).body
        return {"kind": "statements", "count": str(len(stmts)), "dump": _renamed(stmts)}
    return {"kind": "expression", "count": "1", "dump": _renamed([expr])}


def _child_blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """The statement lists directly under ``node`` (bodies, else and finally branches, handlers,
    match cases). Statements live only there: walking these, never expressions, is enough."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", None) or []:
        yield handler.body
    if isinstance(node, ast.Match):
        for case in node.cases:
            yield case.body


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for block in _child_blocks(node):
            for child in block:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.setdefault(prefix + child.name, child)
                    walk(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.ClassDef):
                    walk(child, f"{prefix}{child.name}.")
                else:
                    walk(child, prefix)

    walk(tree, "")
    return out


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list under ``node``, at any depth."""
    todo = [node]
    while todo:
        for block in _child_blocks(todo.pop()):
            yield block
            todo.extend(block)


def _occurrences(fragment: Mapping[str, str], node: ast.AST) -> int:
    dump = fragment["dump"]
    if fragment["kind"] == "expression":
        head = dump.split("(", 1)[0]
        return sum(
            1
            for sub in ast.walk(node)
            if isinstance(sub, ast.expr) and type(sub).__name__ == head and _renamed([sub]) == dump
        )
    width = int(fragment["count"])
    # Each statement is dumped once, and a window is compared only where its statement kinds
    # match: a huge module costs a scan, not a syntax-tree dump per window.
    heads = [line.split("(", 1)[0] for line in dump.split("\n")]
    found = 0
    for block in _blocks(node):
        kinds = [type(stmt).__name__ for stmt in block]
        dumps: list[str | None] = [None] * len(block)
        for i in range(len(block) - width + 1):
            if kinds[i : i + width] != heads:
                continue
            for j in range(i, i + width):
                dumps[j] = dumps[j] or ast.dump(block[j])
            if _rename([d for d in dumps[i : i + width] if d is not None]) == dump:
                found += 1
    return found


def describe(rule: Mapping[str, Any]) -> str:
    """A rule in words (the name of its outcome in a verdict)."""
    try:
        return _describe(rule)
    except (KeyError, TypeError, ValueError):
        return f"malformed rule {dict(rule)!r}"[:200]


def _describe(rule: Mapping[str, Any]) -> str:
    kind = rule.get("rule")
    if kind == "defines":
        return f"a function named {rule['name']} exists"
    if kind == "calls":
        return f"{rule['caller']} calls {rule['callee']}"
    if kind == "no-clone":
        where = ", ".join(rule["within"]) if rule.get("within") else "the module"
        allowed = int(rule.get("allowed", 0))
        what = rule.get("label") or "the duplicated code"
        return f"{what} occurs at most {allowed} time(s) in {where}"
    if kind == "bounded":
        return (
            f"{rule['function']} has complexity <= {rule['complexity']} and "
            f"<= {rule['nodes']} syntax nodes"
        )
    return f"unknown rule {kind!r}"


def _check(rule: Mapping[str, Any], funcs: Mapping[str, ast.AST], tree: ast.Module) -> str:
    """'' if ``rule`` holds, else why not."""
    kind = rule.get("rule")
    if kind == "defines":
        name = str(rule["name"])
        if any(q == name or q.endswith("." + name) for q in funcs):
            return ""
        return f"no function named {name}"
    if kind == "calls":
        caller = funcs.get(str(rule["caller"]))
        if caller is None:
            return f"no function {rule['caller']}"
        callee = str(rule["callee"])
        for sub in ast.walk(caller):
            if isinstance(sub, ast.Call):
                f = sub.func
                if (isinstance(f, ast.Name) and f.id == callee) or (
                    isinstance(f, ast.Attribute) and f.attr == callee
                ):
                    return ""
        return f"{rule['caller']} does not call {callee}"
    if kind == "no-clone":
        within = rule.get("within")
        if within:
            scopes = [funcs[q] for q in within if q in funcs]
        else:
            # Top-level functions and methods only: a nested function is inside its parent.
            scopes = [n for q, n in funcs.items() if not _nested(q, funcs)]
        found = sum(_occurrences(rule["fragment"], n) for n in scopes)
        allowed = int(rule.get("allowed", 0))
        return "" if found <= allowed else f"found {found} copies"
    if kind == "bounded":
        node = funcs.get(str(rule["function"]))
        if node is None:
            return f"no function {rule['function']}"
        c, n = complexity(node), size(node)
        if c > int(rule["complexity"]):
            return f"complexity {c}"
        if n > int(rule["nodes"]):
            return f"{n} syntax nodes"
        return ""
    return f"unknown rule {kind!r}"


def _nested(qual: str, funcs: Mapping[str, ast.AST]) -> bool:
    parts = qual.split(".")
    return any(".".join(parts[:i]) in funcs for i in range(1, len(parts)))


def check_structure(source: str | None, rules: Sequence[Mapping[str, Any]]) -> list[RuleResult]:
    """Each rule of ``rules`` checked on ``source`` (None: the file is missing)."""
    tree: ast.Module | None = None
    why = "the file is missing"
    if source is not None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            why = f"the file does not parse: {type(e).__name__}"
    if tree is None:
        return [RuleResult(describe(r), False, why) for r in rules]
    funcs = _functions(tree)
    out = []
    for r in rules:
        try:
            failure = _check(r, funcs, tree)
        except (KeyError, TypeError, ValueError, RecursionError) as e:
            failure = f"the rule could not be checked: {type(e).__name__}: {e}"
        out.append(RuleResult(describe(r), not failure, failure))
    return out
