"""Candidate tasks before validation: bugs injected by mutation, bodies removed, combinations.

A candidate is a starting state (the files it changes, full text) plus the tests that cover
what changed. Only functions that the baseline's stable tests execute, and that are complex
enough to hide a bug (SWE-smith's measure: 1 + branches, loops, handlers, extra boolean
operands and comparisons; at least 3), become candidates.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from referee.synth.baseline import Baseline
from referee.synth.functions import (
    ScopedTransformer,
    edit_function,
    function_nodes,
    is_docstring,
)
from referee.synth.mutate import Mutation, apply_mutation, find_mutations
from referee.synth.repo import Repository
from referee.verify.structure import complexity

__all__ = [
    "Candidate",
    "bugfix_candidates",
    "combine",
    "complexity",
    "function_nodes",
    "implement_candidates",
]

MIN_COMPLEXITY = 3


@dataclass
class Candidate:
    kind: str  # bugfix | implement | testgen | refactor
    id: str
    path: str
    functions: tuple[str, ...]  # "path::Qualified.name"
    broken: dict[str, str]  # path -> full text of the starting state
    operators: tuple[str, ...]
    description: str
    selected: list[str]  # the stable tests covering the changed functions
    # Stable tests that run the changed function but never the changed statement: they cannot
    # see the change, so they pass on the starting state without being run (PASS_TO_PASS).
    implicit_p2p: list[str] = field(default_factory=list)
    parts: tuple[str, ...] = ()  # for combinations: the ids of the single bugs
    extra: dict[str, object] = field(default_factory=dict)

    def diff_key(self, original: str) -> str:
        """A hash of the change with whitespace and line numbers normalised (for dedup)."""
        a = [ln.strip() for ln in original.splitlines()]
        b = [ln.strip() for ln in self.broken[self.path].splitlines()]
        # unified_diff, not ndiff: ndiff's intraline matching is quadratic on large modules.
        body = [
            ln
            for ln in difflib.unified_diff(a, b, n=0, lineterm="")
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
        ]
        return hashlib.sha256("\n".join([self.path, *body]).encode()).hexdigest()[:16]


def statement_line(function: ast.AST, line: int) -> int:
    """The first line of the innermost statement of ``function`` holding ``line``: the line
    coverage.py records for it (a continuation line of a long expression is never recorded)."""
    best = getattr(function, "lineno", line)
    for sub in ast.walk(function):
        if isinstance(sub, ast.stmt) and sub is not function and sub.lineno <= line:
            end = sub.end_lineno or sub.lineno
            body_start = min(
                (s.lineno for f in ("body", "orelse", "finalbody", "handlers")
                 for s in getattr(sub, f, []) or []),
                default=end + 1,
            )  # fmt: skip
            if line < body_start and line <= end and sub.lineno >= best:
                best = sub.lineno
    return best


def _select(baseline: Baseline, key: str, line: int) -> tuple[list[str], list[str]]:
    """(tests to run, tests that pass unseen): by statement where sound, else by function."""
    whole = baseline.covering(key)
    by_line = baseline.covering_line(key, line)
    if by_line is None:
        return whole, []
    chosen = set(by_line)
    return by_line, [t for t in whole if t not in chosen]


def _eligible(repo: Repository, baseline: Baseline) -> list[tuple[str, str, int]]:
    """(path, qualname, complexity) of covered, complex-enough functions, in a stable order."""
    out = []
    for path in repo.python_files:
        try:
            nodes = function_nodes(repo.text(path))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for qual, node in nodes.items():
            if not baseline.covering(f"{path}::{qual}"):
                continue
            c = complexity(node)
            if c >= MIN_COMPLEXITY:
                out.append((path, qual, c))
    return out


def bugfix_candidates(
    repo: Repository, baseline: Baseline, *, seed: int, per_function: int = 4
) -> list[Candidate]:
    """Single mutations, at most ``per_function`` per function, drawn with ``seed``."""
    rng = random.Random(seed)
    out = []
    sites_by_file: dict[str, dict[str | None, list[Mutation]]] = {}
    for path, qual, c in _eligible(repo, baseline):
        source = repo.text(path)
        node = function_nodes(source)[qual]
        if path not in sites_by_file:  # one libcst pass per file, not per function
            grouped: dict[str | None, list[Mutation]] = {}
            for m in find_mutations(source):
                grouped.setdefault(m.function, []).append(m)
            sites_by_file[path] = grouped
        sites = list(sites_by_file[path].get(qual, []))
        rng.shuffle(sites)
        made = 0
        for m in sites:
            if made >= per_function:
                break
            try:
                mutant = apply_mutation(source, m)
            except ValueError:
                continue
            if _same_ast(source, mutant):
                continue  # equivalent by construction: not worth a test run
            key = f"{path}::{qual}"
            selected, implicit = _select(baseline, key, statement_line(node, m.line))
            out.append(
                Candidate(
                    kind="bugfix",
                    id=f"{key}:{m.operator}:{m.index}",
                    path=path,
                    functions=(key,),
                    broken={path: mutant},
                    operators=(m.operator,),
                    description=m.description,
                    selected=selected,
                    implicit_p2p=implicit,
                    extra={"complexity": c, "line": m.line, "mutation": m},
                )
            )
            made += 1
    return out


def combine(
    singles: list[Candidate], repo: Repository, baseline: Baseline, *, seed: int, limit: int
) -> list[Candidate]:
    """Combinations of 2-3 validated bugs in different functions of the same file."""
    rng = random.Random(seed + 1)
    by_file: dict[str, list[Candidate]] = {}
    for c in singles:
        by_file.setdefault(c.path, []).append(c)
    out: list[Candidate] = []
    files = sorted(by_file)
    rng.shuffle(files)
    for path in files:
        group = by_file[path]
        for _ in range(3):
            if len(out) >= limit:
                return out
            k = rng.choice((2, 3))
            chosen = _distinct_functions(group, k, rng)
            if len(chosen) < 2:
                break
            text = repo.text(path)
            try:
                # Each part's site is ranked within its own function, so applying the parts one
                # after the other (in different functions) finds every site unchanged.
                for part in chosen:
                    mutation = part.extra["mutation"]
                    assert isinstance(mutation, Mutation)
                    text = apply_mutation(text, mutation)
            except ValueError:
                continue
            selected = sorted({t for part in chosen for t in part.selected})
            implicit = sorted({t for p in chosen for t in p.implicit_p2p} - set(selected))
            out.append(
                Candidate(
                    kind="bugfix",
                    id="+".join(p.id for p in chosen),
                    path=path,
                    functions=tuple(p.functions[0] for p in chosen),
                    broken={path: text},
                    operators=tuple(p.operators[0] for p in chosen),
                    description="; ".join(p.description for p in chosen),
                    selected=selected,
                    implicit_p2p=implicit,
                    parts=tuple(p.id for p in chosen),
                    extra={"complexity": sum(int(p.extra["complexity"]) for p in chosen)},  # type: ignore[call-overload]
                )
            )
    return out


def _distinct_functions(group: list[Candidate], k: int, rng: random.Random) -> list[Candidate]:
    pool = group[:]
    rng.shuffle(pool)
    chosen: list[Candidate] = []
    for c in pool:
        if c.functions[0] not in {x.functions[0] for x in chosen}:
            chosen.append(c)
        if len(chosen) == k:
            break
    return chosen


class _StubBody(ScopedTransformer):
    """Replace the body of one function with ``raise NotImplementedError``, docstring kept."""

    def __init__(self, qual: str, message: str) -> None:
        super().__init__()
        self.target, self.message, self.done = qual, message, False

    def on_function(self, qual: str, node: cst.FunctionDef) -> cst.FunctionDef:
        if qual != self.target or not isinstance(node.body, cst.IndentedBlock):
            return node
        body = list(node.body.body)
        keep = body[:1] if body and is_docstring(body[0]) else []
        stub = cst.parse_statement(f"raise NotImplementedError({self.message!r})")
        self.done = True
        return node.with_changes(body=node.body.with_changes(body=[*keep, stub]))


def stub_function(source: str, qual: str, message: str = "implement this") -> str | None:
    """``source`` with ``qual``'s body replaced by a stub (docstring kept); None if not found.

    Done on the function's own lines where exact (``edit_function``), else on the module.
    """

    def edit(snippet: str, name: str) -> str | None:
        t = _StubBody(name, message)
        out = cst.parse_module(snippet).visit(t)
        return out.code if t.done else None

    local = edit_function(source, qual, edit)
    return local if local is not None else stub_in_module(source, qual, message)


def stub_in_module(source: str, qual: str, message: str) -> str | None:
    """``source`` with the body of function ``qual`` replaced by a stub raising ``message``
    (parsing the whole module); None when no such function is found."""
    t = _StubBody(qual, message)
    out = cst.parse_module(source).visit(t)
    return out.code if t.done else None


def implement_candidates(repo: Repository, baseline: Baseline) -> list[Candidate]:
    """One per covered function with a docstring and a body of at least 3 statements."""
    out = []
    for path, qual, c in _eligible(repo, baseline):
        source = repo.text(path)
        node = function_nodes(source)[qual]
        if ast.get_docstring(node) is None or len(node.body) < 4:  # docstring + 3 statements
            continue
        if re.search(r"\bsuper\(\)|\byield\b", ast.get_source_segment(source, node) or ""):
            continue  # generators and cooperative methods make poor implementation prompts
        stubbed = stub_function(source, qual)
        if stubbed is None:
            continue
        key = f"{path}::{qual}"
        out.append(
            Candidate(
                kind="implement",
                id=f"{key}:implement",
                path=path,
                functions=(key,),
                broken={path: stubbed},
                operators=("remove-body",),
                description="body removed",
                selected=baseline.covering(key),
                extra={"complexity": c, "statements": len(node.body) - 1},
            )
        )
    return out


@lru_cache(maxsize=32)
def _dump(source: str) -> str:
    return ast.dump(ast.parse(source))


def _same_ast(a: str, b: str) -> bool:
    return _dump(a) == ast.dump(ast.parse(b))
