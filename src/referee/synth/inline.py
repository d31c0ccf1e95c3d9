"""Inlining a function at its call sites, where that is safe by construction.

The machinery of the inverse refactorings (:mod:`referee.synth.refactor`): find the helpers
that can be inlined (:func:`helper_of`), their call sites (:func:`call_sites`), and the text
edits that put a helper's body in a call's place (:func:`inline_at`), its arguments bound. Safe
means: the body returns only at its end (or the call is ``return g(...)``, where any return
returns from the caller too); no ``yield``, ``await``, ``global``, ``nonlocal``, nested
functions or classes, zero-argument ``super()``, recursion, ``*args`` or ``**kwargs``; no local
of the helper used in the caller and no global it reads rebound there; a call inside an
expression only where the statement runs it once, first thing (its body then runs just before
the statement). Analysis is done with ``ast`` and the edits on the text, so everything but the
inlined lines keeps its form; statements the arguments do not change keep their text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = [
    "Edit",
    "Helper",
    "Inlined",
    "ParsedModule",
    "Site",
    "apply_edits",
    "call_sites",
    "helper_of",
    "inline_at",
    "names_in",
    "removal_span",
]

MIN_HELPER_NODES = 8  # a smaller helper (``return x.y``) is no repeated logic worth a task
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


@dataclass(frozen=True)
class Helper:
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
class Site:
    caller: str
    stmt: ast.stmt  # the statement holding the call
    call: ast.Call


@dataclass(frozen=True)
class Edit:
    """Replace ``source[start:end]`` (character offsets) with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Inlined:
    """The edits that inline a helper at one call site. ``code`` is the inlined code (the
    fragment a no-clone rule looks for in the caller), ``block`` the part of it that reads as
    the helper's own body (arguments bound before it left out), ``lines`` its size."""

    edits: list[Edit]
    code: str
    block: str
    lines: int


def names_in(node: ast.AST) -> tuple[set[str], set[str]]:
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


def helper_of(qual: str, node: ast.AST, classes: set[str]) -> Helper | None:
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
        s, ld = names_in(part)
        stored |= s
        loaded |= ld
    free = loaded - stored - set(params)
    if sum(1 for _ in ast.walk(node)) < MIN_HELPER_NODES:
        return None
    return Helper(qual, node, params, kwonly, defaults, scope, body, ret, stored, free, early)


def _bind(h: Helper, site: Site) -> dict[str, ast.expr] | None:
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


class ParsedModule:
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


def call_sites(m: ParsedModule, h: Helper, other_files: str) -> tuple[list[Site], bool]:
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
        sites.append(Site(caller, stmt, call))
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


def _hoistable(m: ParsedModule, site: Site) -> bool:
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
    enclosing = set()
    while node is not holder:
        if isinstance(node, _SCOPES) or node is stmt:
            return node is holder
        node = m.parents[node]
        enclosing.add(id(node))
    # Calls around it run after it (their arguments first), calls inside it are its arguments
    # (bound before the body either way); any other call could run before it, and would then
    # run after the hoisted body: not first thing.
    inside = {id(n) for n in ast.walk(site.call)}
    for n in ast.walk(holder):
        if isinstance(n, ast.Call | ast.NamedExpr) and id(n) not in inside | enclosing:
            return False
    first = m.lines[stmt.lineno - 1]
    return not first.encode()[: stmt.col_offset].decode(errors="replace").strip()


def inline_at(m: ParsedModule, h: Helper, site: Site) -> Inlined | None:
    """The edits that inline ``h`` at ``site``, or None where that is not safe."""
    mapping = _bind(h, site)
    if mapping is None:
        return None
    fn = m.functions[site.caller]
    caller_stored, caller_loaded = names_in(fn)
    caller_names = caller_stored | caller_loaded
    if h.free & caller_stored:
        return None  # a global the helper reads is shadowed in the caller
    for p, d in h.defaults.items():
        if mapping[p] is d and names_in(d)[1] & caller_stored:
            return None  # so is a global the helper's default names
    if not h.pre and h.ret is not None:
        for arg in mapping.values():
            if names_in(arg)[1] & h.stored:
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
        return Inlined([Edit(start, end, text)], code, code, 1)
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
    assigned = names_in(target)[0] if target is not None else set()
    if h.stored & caller_names - assigned:
        return None
    bindings, subst = [], {}
    for p, arg in mapping.items():
        if _simple(arg) and p not in h.stored and not names_in(arg)[1] & h.stored:
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
        len(bindings) + i: m.segment(s) for i, s in enumerate(h.pre) if not names_in(s)[1] & renamed
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
        edits = [Edit(at, at, text), Edit(start, end, hoist)]
    else:
        assert whole is not None
        start, end, indent = whole
        text = "".join(indent + ln + "\n" if ln.strip() else "\n" for ln in code.splitlines())
        edits = [Edit(start, end, text)]
    # The fragment for the no-clone rule: what was inlined, without the final statement that
    # takes the call's place where it reads differently from the helper's ``return``.
    frag = "\n".join(texts[: len(new) - 1]) if len(new) > 1 and own < len(new) else code
    return Inlined(edits, frag, block, text.count("\n"))


def _copy(s: ast.stmt) -> ast.stmt:
    return ast.parse(ast.unparse(s)).body[0]


def apply_edits(source: str, edits: list[Edit]) -> str:
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[: e.start] + e.text + source[e.end :]
    return source


def removal_span(m: ParsedModule, node: ast.FunctionDef) -> tuple[int, int]:
    """The span of ``node``'s lines and the blank lines after it."""
    first, last = node.lineno, node.end_lineno or node.lineno
    while last < len(m.lines) and not m.lines[last].strip():
        last += 1
    if last == len(m.lines):  # at the end of the module: the blank lines before it go too
        while first > 1 and not m.lines[first - 2].strip():
            first -= 1
        return m.starts[first - 1], m.starts[last]
    return m.starts[first - 1], m.starts[last]
