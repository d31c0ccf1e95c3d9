"""A static guard: flags code that looks like an attempt on the verifier, as evidence.

Flags do not decide the reward (the checks are built to hold without them); they are evidence on
the verdict for the tracker and the audit queue. The guard parses the code with ``ast`` and never
runs it. Code that does not parse is flagged as such.
"""

from __future__ import annotations

import ast
import re
import threading
import warnings

from referee.verify.verdict import Flag

__all__ = ["scan", "scan_all"]

#: One parse at a time in this process. CPython 3.11 keeps the AST constructor's recursion depth
#: per interpreter, not per thread: when a thread switch lands inside ``ast.parse`` (a finalizer
#: run by a garbage collection during it, say) and another thread parses meanwhile, one of them
#: raises ``SystemError: AST constructor recursion depth mismatch`` (seen under the service's
#: concurrent load: a right answer reported as "verifier crashed"). ``ast.parse`` holds the GIL
#: anyway, so the lock costs no parallelism. It also keeps ``warnings.catch_warnings`` (process
#: state) from interleaving between threads.
_PARSE_LOCK = threading.RLock()

_EXIT_CALLS = {"exit", "quit", "_exit", "abort", "kill", "killpg"}
_PATCH_CALLS = {"setattr", "delattr"}
_DYNAMIC_CALLS = {"__import__", "eval", "exec", "compile"}
_OPEN_CALL = "open"
_EXIT_EXCEPTIONS = {"SystemExit", "KeyboardInterrupt", "SkipTest"}
_EXIT_ATTRS = {"exit", "_exit"}
_PATCHED_NAMES = {"__builtins__", "__loader__"}
_PATCHED_MODULES = {"builtins", "sys", "os", "math", "json", "random", "time"}
_SUSPECT_MODULES = {
    "inspect": "frame-inspection",
    "gc": "object-graph-inspection",
    "ctypes": "native-memory-access",
    "atexit": "exit-hook",
    "signal": "signal-handling",
    "builtins": "builtins-patching",
    "importlib": "import-machinery",
    "subprocess": "process-spawning",
    "unittest": "test-framework-access",
    "pytest": "test-framework-access",
    "_pytest": "test-framework-access",
    "traceback": "frame-inspection",
}
_SUSPECT_ATTRS = {
    "_getframe": "frame-inspection",
    "f_back": "frame-inspection",
    "f_locals": "frame-inspection",
    "f_globals": "frame-inspection",
    "settrace": "tracing",
    "setprofile": "tracing",
    "excepthook": "exit-hook",
    "modules": "module-table-access",
    "__subclasses__": "object-graph-inspection",
    "get_referrers": "object-graph-inspection",
    "get_objects": "object-graph-inspection",
}
_ALWAYS_TRUE_DUNDERS = {
    "__eq__",
    "__ne__",
    "__bool__",
    "__hash__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__contains__",
}

#: Every identifier the walk below compares with. A node can be flagged only if one of these is
#: the text of one of the source's name tokens (an import's root, an attribute, a called or
#: assigned name, a function's name), so a source none of them occurs in has nothing to flag.
_TRIGGERS = frozenset().union(
    _EXIT_CALLS,
    _PATCH_CALLS,
    _DYNAMIC_CALLS,
    {_OPEN_CALL, "sys"},
    _EXIT_EXCEPTIONS,
    _SUSPECT_MODULES,
    _SUSPECT_ATTRS,
    _EXIT_ATTRS,
    _PATCHED_NAMES,
    _ALWAYS_TRUE_DUNDERS,
    _PATCHED_MODULES,
)
_WORDS = re.compile(r"\w+", re.ASCII)
#: A run of word characters that starts with a digit and goes on with a letter or "_": a number
#: with a name glued to it ("1if", "0x1f", "1e5"), where a name token may start inside the run.
_GLUED = re.compile(r"\b\d+[^\W\d]", re.ASCII)


def _snippet(source: str, node: ast.AST) -> str:
    line = getattr(node, "lineno", 0)
    lines = source.splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f"line {line}: {text[:120]}"


def scan(source: str) -> list[Flag]:
    """Flags for ``source`` (deduplicated by kind, first evidence kept).

    The same flags as :func:`scan_all`, cheaper for the usual clean source: the parse always
    happens (code that does not parse is flagged), the walk over the tree only where a name it
    looks for can be in it (:func:`_may_flag`)."""
    tree = _parse(source)
    if isinstance(tree, Flag):
        return [tree]
    if not _may_flag(source):
        return []
    return _walk(source, tree)


def scan_all(source: str) -> list[Flag]:
    """Flags for ``source``, walking every node of its tree (the reference :func:`scan` is
    held to)."""
    tree = _parse(source)
    if isinstance(tree, Flag):
        return [tree]
    return _walk(source, tree)


def _parse(source: str) -> ast.Module | Flag:
    try:
        # A model's odd literals ("1_000x") make the parser warn on the host's stderr, once per
        # solution, in the middle of a run's progress lines; the guard's verdict is all we need.
        with _PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(source)
    except SyntaxError as e:
        return Flag(kind="does-not-parse", evidence=f"line {e.lineno}: {e.msg}")


def _may_flag(source: str) -> bool:
    """False only where the walk cannot flag anything: an ASCII source (its names are their
    text, where the parser normalises a non-ASCII name: ``exit`` in full-width letters is
    ``exit``) in which no run of word characters is a trigger, and none is a number with letters
    glued to it (the tokenizer may split those: ``1if x`` is ``1 if x``). Every name token of
    such a source is a whole run, so no name the walk compares with occurs in its tree."""
    if not source.isascii():
        return True
    return not _TRIGGERS.isdisjoint(_WORDS.findall(source)) or _GLUED.search(source) is not None


def _walk(source: str, tree: ast.Module) -> list[Flag]:
    found: dict[str, str] = {}

    def flag(kind: str, node: ast.AST) -> None:
        found.setdefault(kind, _snippet(source, node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in _EXIT_CALLS:
                flag("exit-call", node)
            if name in _PATCH_CALLS and node.args:
                flag("attribute-patching", node)
            if name in _DYNAMIC_CALLS:
                flag("dynamic-code", node)
            if name == _OPEN_CALL and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    flag("file-access", node)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            exc_name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", "")
            if exc_name in _EXIT_EXCEPTIONS:
                flag("exit-call", node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
            for n in names:
                root = n.split(".")[0]
                if root in _SUSPECT_MODULES:
                    flag(_SUSPECT_MODULES[root], node)
                if root == "sys" and isinstance(node, ast.ImportFrom):
                    flag("module-table-access", node)
        elif isinstance(node, ast.Attribute):
            if node.attr in _SUSPECT_ATTRS:
                flag(_SUSPECT_ATTRS[node.attr], node)
            if node.attr in _EXIT_ATTRS and isinstance(node.value, ast.Name):
                flag("exit-call", node)
        elif isinstance(node, ast.Name) and node.id in _PATCHED_NAMES:
            flag("builtins-patching", node)
        elif isinstance(node, ast.FunctionDef) and node.name in _ALWAYS_TRUE_DUNDERS:
            body = [s for s in node.body if not isinstance(s, ast.Expr)]
            if len(body) == 1 and isinstance(body[0], ast.Return):
                value = body[0].value
                if isinstance(value, ast.Constant) and value.value in (True, False, 0):
                    flag("constant-comparison-dunder", node)
            else:
                flag("comparison-dunder", node)
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id in _PATCHED_MODULES
                ):
                    flag("module-patching", node)
    return [Flag(kind=k, evidence=v) for k, v in found.items()]
