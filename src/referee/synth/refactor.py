"""Refactoring tasks: an inverse refactoring applied to real code; the model refactors it back.

Three inverse refactorings, each on one module, each undoing a structure the authors chose:

* ``inline-helper``: a helper called from two or more places is inlined at each call site (its
  body substituted, arguments bound) and its definition removed. The task: extract the
  repeated logic into a helper of that name, called from each place.
* ``merge-helper``: a private helper called from exactly one function is merged into it and
  removed. The task: split it back out under its name.
* ``duplicate-block``: a helper's body is copied into one of its callers in place of the call
  (the helper stays). The task: remove the duplication.

Inlining is done only where it is safe by construction: a body that returns only at its end,
no ``yield``, ``await``, ``global``, ``nonlocal``, nested functions, classes or lambdas,
``super()``; positional and keyword arguments only; no name of the helper's locals used in the
caller, no free name of the helper rebound there. The original code is the reference; the
task's ``hidden["structure"]`` is the predicate (:mod:`referee.verify.structure`) that the
reference meets and the starting state does not; its tests are the stable tests covering the
touched functions, all passing before and after (:func:`referee.synth.validate.validate`
checks both).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from referee import __version__
from referee.synth.baseline import Baseline
from referee.synth.build import GENERATOR_VERSION, RepoRef, short_hash, slug, unified_diff
from referee.synth.candidates import Candidate
from referee.synth.functions import function_nodes
from referee.synth.repo import Repository
from referee.synth.validate import Validated
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Difficulty, Provenance, Task
from referee.tasks.split import assign_split
from referee.verify.structure import check_structure, complexity, fingerprint, size

__all__ = ["OPERATORS", "refactor_candidates", "refactor_task"]

OPERATORS = ("inline-helper", "merge-helper", "duplicate-block")
MIN_HELPER_NODES = 8  # a smaller helper (``return x.y``) is no repeated logic worth a task
MIN_BLOCK = 3  # statements of a duplicated block (the window of the no-clone rule)
_FORBIDDEN = (
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.Global,
    ast.Nonlocal,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)
_ANSWER = (
    "Behaviour must not change: the repository's tests must keep passing. Answer with a "
    "unified diff (as `git diff` prints it) against the repository, paths relative to its "
    "root. Do not change the tests: they are restored before grading."
)


@dataclass(frozen=True)
class _Helper:
    qual: str
    node: ast.FunctionDef
    params: list[str]
    kwonly: list[str]
    defaults: dict[str, ast.expr]
    cls: str | None  # the class of a method
    pre: list[ast.stmt]  # the statements before the final return (all when it has none)
    ret: ast.expr | None  # the final return's value
    stored: set[str]  # names the body binds (comprehension targets too)
    free: set[str]  # names the body reads that it does not bind (and are not parameters)
    early: bool  # returns before its end: inlinable only where the call is ``return g(...)``


@dataclass(frozen=True)
class _Site:
    caller: str
    stmt: ast.stmt  # the statement holding the call
    call: ast.Call


@dataclass(frozen=True)
class _Edit:
    """Replace ``source[start:end]`` (character offsets) with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class _Inlined:
    """The edits that inline a helper at one call site. ``code`` is the inlined code (the
    fragment a no-clone rule looks for in the caller), ``block`` the part of it that reads as
    the helper's own body (arguments bound before it left out), ``lines`` its size."""

    edits: list[_Edit]
    code: str
    block: str
    lines: int


def _names(node: ast.AST) -> tuple[set[str], set[str]]:
    """(names stored, names loaded) anywhere under ``node``."""
    stored: set[str] = set()
    loaded: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (loaded if isinstance(sub.ctx, ast.Load) else stored).add(sub.id)
        elif isinstance(sub, ast.arg):
            stored.add(sub.arg)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            stored.add(sub.name)
        elif isinstance(sub, ast.alias):
            stored.add((sub.asname or sub.name).split(".")[0])
    return stored, loaded


def _helper(qual: str, node: ast.AST, classes: set[str]) -> _Helper | None:
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return None
    scope = qual.rsplit(".", 1)[0] if "." in qual else None
    if scope is not None and (scope not in classes or "." in scope):
        return None  # nested functions and methods of nested classes stay out
    a = node.args
    if a.vararg or a.kwarg or a.posonlyargs:
        return None
    params = [p.arg for p in a.args]
    kwonly = [p.arg for p in a.kwonlyargs]
    if scope is not None and not params:
        return None
    defaults: dict[str, ast.expr] = {}
    for p, d in zip(params[len(params) - len(a.defaults) :], a.defaults, strict=True):
        if not _simple(d):  # a constant, or a global's name: checked per caller
            return None
        defaults[p] = d
    for p, kd in zip(kwonly, a.kw_defaults, strict=True):
        if kd is not None and not _simple(kd):
            return None
        if kd is not None:
            defaults[p] = kd
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body:
        return None
    ret = None
    if isinstance(body[-1], ast.Return):
        ret = body[-1].value
        body = body[:-1]
        if ret is None and not body:
            return None
    early = any(isinstance(sub, ast.Return) for stmt in body for sub in ast.walk(stmt))
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in ("super", "__class__", node.name):
            return None  # zero-argument super() and recursion do not survive inlining
        if isinstance(sub, _FORBIDDEN) and sub is not node:
            return None
    stored, loaded = set(), set()
    for part in [*body, *([ret] if ret is not None else [])]:
        s, ld = _names(part)
        stored |= s
        loaded |= ld
    free = loaded - stored - set(params)
    if sum(1 for _ in ast.walk(node)) < MIN_HELPER_NODES:
        return None
    return _Helper(qual, node, params, kwonly, defaults, scope, body, ret, stored, free, early)


def _bind(h: _Helper, site: _Site) -> dict[str, ast.expr] | None:
    """The helper's parameters mapped to the call's argument expressions, or None."""
    call = site.call
    params = list(h.params)
    bound: dict[str, ast.expr] = {}
    if h.cls is not None:  # self.g(...): the receiver is the first parameter
        assert isinstance(call.func, ast.Attribute)
        bound[params.pop(0)] = call.func.value
    if any(isinstance(x, ast.Starred) for x in call.args) or len(call.args) > len(params):
        return None
    bound.update(zip(params, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg is None or kw.arg in bound or kw.arg not in [*params, *h.kwonly]:
            return None
        bound[kw.arg] = kw.value
    for p in [*params, *h.kwonly]:
        if p not in bound:
            if p not in h.defaults:
                return None
            bound[p] = h.defaults[p]
    return bound


def _simple(e: ast.expr) -> bool:
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name | ast.Constant)


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, ast.expr]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return ast.copy_location(_clone(self.mapping[node.id]), node)
        return node


def _clone(e: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(e), mode="eval").body


def _atomic(e: ast.expr) -> bool:
    return isinstance(e, ast.Name | ast.Constant | ast.Call | ast.Attribute | ast.Subscript)


class _Module:
    """One module's text, its syntax tree and the offsets of its lines."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))
        # By qualified name, as function_nodes names them, but nodes of this tree (whose
        # parents are known), not of function_nodes' cached one.
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self._walk(self.tree, "")
        self.classes = {n.name for n in self.tree.body if isinstance(n, ast.ClassDef)}
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def _walk(self, node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions.setdefault(prefix + child.name, child)
                self._walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                self._walk(child, f"{prefix}{child.name}.")
            else:
                self._walk(child, prefix)

    def offset(self, line: int, col: int) -> int:
        """Character offset of (1-based line, UTF-8 byte column)."""
        text = self.lines[line - 1]
        return self.starts[line - 1] + len(text.encode()[:col].decode(errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def owner(self, node: ast.AST) -> tuple[str, ast.FunctionDef] | None:
        """The top-level function or method whose body holds ``node`` directly (not in a
        nested function, class or lambda), or None."""
        cur = node
        while cur in self.parents:
            cur = self.parents[cur]
            if isinstance(cur, ast.Lambda | ast.AsyncFunctionDef):
                return None
            if isinstance(cur, ast.FunctionDef):
                for qual, fn in self.functions.items():
                    if fn is cur:
                        parent = qual.rsplit(".", 1)[0] if "." in qual else None
                        if parent is None or parent in self.classes:
                            return qual, cur
                return None
        return None

    def segment(self, stmt: ast.stmt) -> str | None:
        """The text of a statement alone on one line (a trailing comment kept), else None."""
        if stmt.end_lineno != stmt.lineno or self.whole_lines(stmt) is None:
            return None
        return self.lines[stmt.lineno - 1].strip()

    def whole_lines(self, stmt: ast.stmt) -> tuple[int, int, str] | None:
        """(start, end offsets, indentation) of the lines ``stmt`` has to itself, or None."""
        first = self.lines[stmt.lineno - 1]
        last = self.lines[(stmt.end_lineno or stmt.lineno) - 1]
        before = first.encode()[: stmt.col_offset].decode(errors="replace")
        after = last.encode()[stmt.end_col_offset or 0 :].decode(errors="replace")
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            return None  # another statement shares its lines
        return self.starts[stmt.lineno - 1], self.starts[stmt.end_lineno or stmt.lineno], before


def _sites(m: _Module, h: _Helper, other_files: str) -> tuple[list[_Site], bool]:
    """The helper's calls that inlining can take, and whether they are all its uses (no other
    reference in the module, its strings or the repository's other files): only then may the
    helper be removed."""
    name = h.node.name
    exclusive = not re.search(rf"\b{re.escape(name)}\b", other_files) and not re.search(
        rf"['\"]{re.escape(name)}['\"]", m.source
    )  # not imported or named elsewhere, not named in a string (__all__, getattr)
    sites = []
    for node in ast.walk(m.tree):
        if h.cls is None:
            use = isinstance(node, ast.Name) and node.id == name
        else:
            use = isinstance(node, ast.Attribute) and node.attr == name
        if not use:
            continue
        call = m.parents.get(node)
        owner = m.owner(node)
        if not isinstance(call, ast.Call) or call.func is not node or owner is None:
            exclusive = False
            continue
        caller, fn = owner
        if caller == h.qual:
            exclusive = False
            continue
        if h.cls is not None:
            # self.g(...) inside another method of the same class, with the same receiver name
            assert isinstance(node, ast.Attribute)
            if (
                not caller.startswith(h.cls + ".")
                or not isinstance(node.value, ast.Name)
                or not fn.args.args
                or fn.args.args[0].arg != node.value.id
            ):
                exclusive = False
                continue
        stmt: ast.AST = call
        while not isinstance(stmt, ast.stmt):
            stmt = m.parents[stmt]
        sites.append(_Site(caller, stmt, call))
    return sites, exclusive


_SCOPES = (
    ast.BoolOp,
    ast.IfExp,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Lambda,
    ast.Await,
)


def _hoistable(m: _Module, site: _Site) -> bool:
    """Whether the helper's body can run just before the statement holding the call, its
    result taking the call's place: the statement runs the call exactly once, first thing."""
    stmt = site.stmt
    if isinstance(stmt, ast.If):
        holder: ast.AST = stmt.test
        if m.lines[stmt.lineno - 1].lstrip().startswith("elif"):
            return False
    elif isinstance(stmt, ast.For):
        holder = stmt.iter
    elif isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return):
        holder = stmt
    else:
        return False
    node: ast.AST = site.call
    while node is not holder:
        if isinstance(node, _SCOPES) or node is stmt:
            return node is holder
        node = m.parents[node]
    first = m.lines[stmt.lineno - 1]
    return not first.encode()[: stmt.col_offset].decode(errors="replace").strip()


def _inline(m: _Module, h: _Helper, site: _Site) -> _Inlined | None:
    """The edits that inline ``h`` at ``site``, or None where that is not safe."""
    mapping = _bind(h, site)
    if mapping is None:
        return None
    fn = m.functions[site.caller]
    caller_stored, caller_loaded = _names(fn)
    caller_names = caller_stored | caller_loaded
    if h.free & caller_stored:
        return None  # a global the helper reads is shadowed in the caller
    for p, d in h.defaults.items():
        if mapping[p] is d and _names(d)[1] & caller_stored:
            return None  # so is a global the helper's default names
    if not h.pre and h.ret is not None:
        for arg in mapping.values():
            if _names(arg)[1] & h.stored:
                return None  # an argument's name would be captured (a comprehension's target)
        # An expression helper: substitute into the call's place. A parameter used more than
        # once takes only a simple argument (evaluated once either way).
        uses = [n.id for n in ast.walk(h.ret) if isinstance(n, ast.Name)]
        for p, arg in mapping.items():
            if not _simple(arg) and uses.count(p) > 1:
                return None
        expr = _Substitute(mapping).visit(_clone(h.ret))
        code = ast.unparse(expr)
        start, end = m.span(site.call)
        text = code if _atomic(expr) else f"({code})"
        if "\n" in text:
            return None
        return _Inlined([_Edit(start, end, text)], code, code, 1)
    stmt = site.stmt
    hoist: str | None = None  # the name that takes the place of a call inside an expression
    if isinstance(stmt, ast.Expr | ast.Return) and stmt.value is site.call:
        target = None
    elif isinstance(stmt, ast.Assign) and stmt.value is site.call and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif not h.early and _hoistable(m, site):
        target = None
        if isinstance(h.ret, ast.Name) and h.ret.id in h.stored:
            hoist = h.ret.id  # the helper's own result variable
        else:
            hoist = f"{h.node.name.strip('_')}_result"
            if hoist in caller_names or hoist in h.stored:
                return None
    else:
        return None
    if h.early and not isinstance(stmt, ast.Return):
        return None  # its returns can return from the caller only in the caller's return
    whole = m.whole_lines(stmt)
    if whole is None and hoist is None:
        return None
    # The helper's locals must not clash with the caller's names, except the names the call's
    # statement assigns right after the inlined body (``factory = _get_factory(...)``).
    assigned = _names(target)[0] if target is not None else set()
    if h.stored & caller_names - assigned:
        return None
    bindings, subst = [], {}
    for p, arg in mapping.items():
        if _simple(arg) and p not in h.stored and not _names(arg)[1] & h.stored:
            subst[p] = arg  # else bound first: the helper's locals would capture its names
        else:
            if p in caller_names:
                return None
            bindings.append(ast.Assign(targets=[ast.Name(p, ast.Store())], value=arg, lineno=0))
    new: list[ast.stmt] = [*bindings, *(_Substitute(subst).visit(_copy(s)) for s in h.pre)]
    ret = _Substitute(subst).visit(_clone(h.ret)) if h.ret is not None else None
    renamed = {p for p, a in subst.items() if not (isinstance(a, ast.Name) and a.id == p)}
    own = len(h.pre)  # statements that read as the helper's body
    if hoist is not None:
        if hoist != getattr(h.ret, "id", None):
            value = ret if ret is not None else ast.Constant(None)
            new.append(ast.Assign(targets=[ast.Name(hoist, ast.Store())], value=value, lineno=0))
    elif isinstance(stmt, ast.Return):
        if h.ret is not None or not h.pre or not isinstance(h.pre[-1], ast.Return | ast.Raise):
            new.append(ast.Return(value=ret, lineno=0))
            own += 1
    elif target is not None:
        value = ret if ret is not None else ast.Constant(None)
        if not (isinstance(value, ast.Name) and isinstance(target, ast.Name)) or (
            value.id != target.id
        ):
            new.append(ast.Assign(targets=[target], value=value, lineno=0))  # not x = x
    elif ret is not None and any(isinstance(n, ast.Call) for n in ast.walk(ret)):
        new.append(ast.Expr(value=ret))
    # A one-line statement that no argument changes keeps its text (quotes, comments).
    kept = {
        len(bindings) + i: m.segment(s) for i, s in enumerate(h.pre) if not _names(s)[1] & renamed
    }
    texts = [kept.get(i) or ast.unparse(ast.fix_missing_locations(s)) for i, s in enumerate(new)]
    code = "\n".join(texts)
    block = "\n".join(texts[len(bindings) : len(bindings) + own])
    if hoist is not None:
        first = m.lines[stmt.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        at = m.starts[stmt.lineno - 1]
        start, end = m.span(site.call)
        text = "".join(indent + ln + "\n" if ln.strip() else "\n" for ln in code.splitlines())
        edits = [_Edit(at, at, text), _Edit(start, end, hoist)]
    else:
        assert whole is not None
        start, end, indent = whole
        text = "".join(indent + ln + "\n" if ln.strip() else "\n" for ln in code.splitlines())
        edits = [_Edit(start, end, text)]
    # The fragment for the no-clone rule: what was inlined, without the final statement that
    # takes the call's place where it reads differently from the helper's ``return``.
    frag = "\n".join(texts[: len(new) - 1]) if len(new) > 1 and own < len(new) else code
    return _Inlined(edits, frag, block, text.count("\n"))


def _copy(s: ast.stmt) -> ast.stmt:
    return ast.parse(ast.unparse(s)).body[0]


def _apply(source: str, edits: list[_Edit]) -> str:
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[: e.start] + e.text + source[e.end :]
    return source


def _remove_function(m: _Module, node: ast.FunctionDef) -> tuple[int, int]:
    """The span of ``node``'s lines and the blank lines after it."""
    first, last = node.lineno, node.end_lineno or node.lineno
    while last < len(m.lines) and not m.lines[last].strip():
        last += 1
    if last == len(m.lines):  # at the end of the module: the blank lines before it go too
        while first > 1 and not m.lines[first - 2].strip():
            first -= 1
        return m.starts[first - 1], m.starts[last]
    return m.starts[first - 1], m.starts[last]


def _rules_for(
    m: _Module, grown: dict[str, int], fragments: list[dict[str, str]]
) -> list[dict[str, object]]:
    """no-clone rules for ``fragments`` in the callers, and each function of ``grown`` (name ->
    syntax nodes the inverse refactoring added to it) bounded by its original self."""
    rules: list[dict[str, object]] = []
    seen = set()
    for f in fragments:
        if f["dump"] in seen:
            continue
        seen.add(f["dump"])
        rules.append(
            {
                "rule": "no-clone",
                "fragment": f,
                "within": sorted(grown),
                "allowed": 0,
                "label": "the inlined code",
            }
        )
    for name, added in sorted(grown.items()):
        node = m.functions[name]
        n = size(node)
        # Room for a reworded line (a keyword argument, a temporary), never for half a copy of
        # what was inlined: a changed copy left beside the new call would escape no-clone.
        room = max(2, min(max(3, n // 10), added // 2))
        rules.append(
            {"rule": "bounded", "function": name, "complexity": complexity(node), "nodes": n + room}
        )
    return rules


def _nodes(code: str) -> int:
    try:
        return sum(1 for _ in ast.walk(ast.parse(code)))
    except SyntaxError:
        return 0


def _fragment(code: str) -> dict[str, str] | None:
    try:
        return fingerprint(code)
    except SyntaxError:
        return None


def refactor_candidates(repo: Repository, baseline: Baseline) -> list[Candidate]:
    """Candidates of the three inverse refactorings, at most one per helper and operator."""
    out: list[Candidate] = []
    for path in repo.python_files:
        try:
            m = _Module(repo.text(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        others = "\n".join(
            repo.files[p].decode("utf-8", "replace")
            for p in sorted(repo.files)
            if p != path and p.endswith((".py", ".pyi", ".rst", ".txt", ".cfg", ".toml"))
        )
        for qual, node in m.functions.items():
            h = _helper(qual, node, m.classes)
            if h is None:
                continue
            if sum(1 for q in m.functions if q.rsplit(".", 1)[-1] == node.name) > 1:
                continue  # overridden or redefined in the module: inlining could change which runs
            sites, exclusive = _sites(m, h, others)
            if sites:
                out.extend(_for_helper(baseline, m, path, h, sites, exclusive))
    return out


def _for_helper(
    baseline: Baseline, m: _Module, path: str, h: _Helper, sites: list[_Site], exclusive: bool
) -> list[Candidate]:
    inlined = [_inline(m, h, s) for s in sites]
    out = []
    name = h.node.name
    doc = (ast.get_docstring(h.node) or "").strip().split("\n\n")[0].replace("\n", " ")

    def make(
        op: str, broken: str, callers: list[str], rules: list[dict[str, object]], lines: int
    ) -> Candidate | None:
        try:
            compile(broken, path, "exec")
        except SyntaxError:
            return None
        touched = sorted({*callers, h.qual})
        return Candidate(
            kind="refactor",
            id=f"{path}::{h.qual}:{op}",
            path=path,
            functions=tuple(f"{path}::{q}" for q in touched),
            broken={path: broken},
            operators=(op,),
            description=f"{op} {h.qual}",
            selected=sorted({t for q in touched for t in baseline.covering(f"{path}::{q}")}),
            extra={
                "helper": h.qual,
                "doc": doc,
                "call_sites": len(sites),
                "callers": sorted(set(callers)),
                "inlined_lines": lines,
                "structure": {"path": path, "rules": rules},
            },
        )

    done = [i for i in inlined if i is not None]
    if exclusive and len(done) == len(sites):
        callers = [s.caller for s in sites]
        cut = _remove_function(m, h.node)
        broken = _apply(m.source, [*(e for i in done for e in i.edits), _Edit(*cut, "")])
        frags = [f for f in (_fragment(i.code) for i in done) if f is not None]
        if len(frags) == len(done):
            op = "inline-helper" if len(sites) >= 2 else "merge-helper"
            rules: list[dict[str, object]] = [{"rule": "defines", "name": name}]
            rules += [{"rule": "calls", "caller": q, "callee": name} for q in sorted(set(callers))]
            grown: dict[str, int] = {}
            for site, i in zip(sites, done, strict=True):
                grown[site.caller] = grown.get(site.caller, 0) + _nodes(i.code)
            rules += _rules_for(m, grown, frags)
            made = make(op, broken, callers, rules, sum(i.lines for i in done))
            if made is not None:
                out.append(made)
    # duplicate-block: the body copied into the first caller that takes it as a block.
    for s, i in zip(sites, inlined, strict=True):
        frag = _fragment(i.block) if i is not None and i.block else None
        if i is None or frag is None or frag["kind"] != "statements":
            continue
        if int(frag["count"]) < MIN_BLOCK:
            continue
        broken = _apply(m.source, i.edits)
        clone: dict[str, object] = {
            "rule": "no-clone",
            "fragment": frag,
            "within": None,
            "allowed": 1,
            "label": f"the body of {h.qual}",
        }
        if all(r.ok for r in check_structure(broken, [clone])):
            continue  # the copy does not read as the helper's body: no clone to remove
        rules = [clone, *_rules_for(m, {s.caller: _nodes(i.code), h.qual: _nodes(i.code)}, [])]
        made = make("duplicate-block", broken, [s.caller], rules, i.lines)
        if made is not None:
            out.append(made)
        break
    return out


def refactor_task(
    ref: RepoRef, v: Validated, *, seed: int, heldout_fraction: float, split_by: str
) -> Task:
    """A refactoring task from a validated candidate: no FAIL_TO_PASS, the predicate hidden."""
    c = v.candidate
    repo = ref.repo
    op = c.operators[0]
    helper = str(c.extra["helper"])
    name = helper.rsplit(".", 1)[-1]
    callers = [str(x) for x in c.extra["callers"]]  # type: ignore[attr-defined]
    cls = helper.rsplit(".", 1)[0] if "." in helper else None
    where = f"a method of `{cls}`" if cls else "a module-level function"
    doc = str(c.extra.get("doc") or "")
    what = f" Its job: {doc}" if doc else ""
    head = f"The repository {repo.label} is in your workspace."
    quoted = ", ".join(f"`{x}`" for x in callers)
    if op == "inline-helper":
        ask = (
            f"In `{c.path}`, {quoted} repeat the same logic in {c.extra['call_sites']} places. "
            f"Extract it into one helper named `{name}` ({where}) and call it from each of "
            f"those places, so that no copy of the repeated code is left.{what}"
        )
    elif op == "merge-helper":
        ask = (
            f"In `{c.path}`, the function `{callers[0]}` has grown too long. Split part of its "
            f"work back out into a helper named `{name}` ({where}) that `{callers[0]}` calls, "
            f"leaving no copy of the moved code behind.{what}"
        )
    else:
        ask = (
            f"In `{c.path}`, the function `{callers[0]}` repeats code that `{helper}` already "
            f"holds. Remove the duplication: `{callers[0]}` should reuse `{helper}`, which "
            "stays."
        )
    prompt = f"{head} {ask}\n\n{_ANSWER}"
    original, broken = repo.text(c.path), c.broken[c.path]
    sites = int(c.extra["call_sites"])  # type: ignore[call-overload]
    lines = int(c.extra["inlined_lines"])  # type: ignore[call-overload]
    feats = {
        "call_sites": float(sites if op == "inline-helper" else 1),
        "lines": float(lines),
        "tests": float(len(v.p2p)),
        "complexity": float(max(complexity(n) for n in _touched(original, c))),
    }
    estimate = min(1.0, round(0.2 + 0.05 * feats["call_sites"] + 0.015 * min(lines, 40), 4))
    unit = f"{repo.name}:{c.path}" + ("" if split_by == "module" else f"::{helper}")
    return Task.create(
        name=f"synth/{slug(repo.name)}/refactor-{op}-{slug(helper)[:50]}"
        f"-{short_hash(c.id)}-v{GENERATOR_VERSION}",
        prompt=prompt,
        kind=TaskKind.REPO_PATCH,
        answer_format="patch",
        payload={"repo": ref.payload(), "overrides": {c.path: broken}, "kind": "refactor"},
        hidden={
            "fail_to_pass": [],
            "pass_to_pass": v.p2p,
            "reference_patch": unified_diff(c.path, broken, original),
            "operators": [op],
            "functions": list(c.functions),
            "description": c.description,
            "structure": c.extra["structure"],
        },
        difficulty=Difficulty(estimate=estimate, features=feats),
        split=assign_split(unit, heldout_fraction),
        provenance=Provenance(
            source=repo.origin,
            generator=f"referee.synth.refactor@{GENERATOR_VERSION}",
            seed=seed,
            versions={"referee": __version__, repo.name: repo.version},
            unit=unit,
        ),
    )


def _touched(source: str, c: Candidate) -> list[ast.AST]:
    nodes = function_nodes(source)
    found: list[ast.AST] = [
        nodes[k.split("::", 1)[1]] for k in c.functions if k.split("::", 1)[1] in nodes
    ]
    return found or [ast.parse(source)]
