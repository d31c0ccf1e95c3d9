"""The guard's shortcut: ``scan`` walks a source's tree only where a name it looks for can be in
it, and must flag exactly what the full walk (``scan_all``) flags."""

from __future__ import annotations

import itertools

import pytest

from referee.tasks.humaneval import load_problems
from referee.verify.guard import scan, scan_all
from referee.verify.redteam import EXPLOITS

# Every name the walk compares with, each in the places it looks for it.
_NAMES = [
    "exit", "quit", "_exit", "abort", "kill", "killpg", "setattr", "delattr", "__import__",
    "eval", "exec", "compile", "open", "SystemExit", "KeyboardInterrupt", "SkipTest", "inspect",
    "gc", "ctypes", "atexit", "signal", "builtins", "importlib", "subprocess", "unittest",
    "pytest", "_pytest", "traceback", "sys", "_getframe", "f_back", "f_locals", "f_globals",
    "settrace", "setprofile", "excepthook", "modules", "__subclasses__", "get_referrers",
    "get_objects", "__builtins__", "__loader__", "__eq__", "__ne__", "__bool__", "__hash__",
    "__lt__", "__le__", "__gt__", "__ge__", "__contains__", "os", "math", "json", "random",
    "time",
]  # fmt: skip
_PLACES = [
    "{n}(1)\n",
    "{n}('a')\n",
    "x.{n}('a')\n",
    "import {n}\n",
    "import {n}.sub as s\n",
    "from {n} import y\n",
    "from {n}.sub import y\n",
    "from x import {n}\n",
    "y = x.{n}\n",
    "y = {n}.exit\n",
    "raise {n}\n",
    "raise {n}()\n",
    "raise x.{n}(1)\n",
    "{n}.x = 1\n",
    "{n}.x += 1\n",
    "({n}).x = 1\n",
    "y = {n}\n",
    "class C:\n    def {n}(self, o):\n        return True\n",
    "class C:\n    def {n}(self, o):\n        return self is o\n",
    "class C:\n    def {n}(self, o):\n        y = 1\n        return y\n",
    "def f(x):\n    return [{n} for {n} in x if 1if {n} else 0]\n",
    "y = f'{{{n}()}}'\n",
    "y = 0x1f or {n}(1)\n",
    "y = 1e5 and {n}\n",
    "y = 1_0 or {n}\n",
    "y = '{n}'\n",  # in a string only: nothing to flag, the shortcut may still walk
    "# {n}\ny = 1\n",
    "y = x{n} + {n}x\n",  # a longer name holding it: nothing to flag
]


def _sources() -> list[str]:
    out = [place.format(n=n) for n, place in itertools.product(_NAMES, _PLACES)]
    out += [p.prompt + p.canonical_solution for p in load_problems()]
    out += [e.template.replace("{entry}", "f") for e in EXPLOITS]
    return out


def test_the_shortcut_flags_exactly_what_the_full_walk_flags() -> None:
    sources = _sources()
    assert len(sources) > 1500
    mismatched = [s for s in sources if scan(s) != scan_all(s)]
    assert mismatched == []
    # The corpus does exercise every flag, not only clean code.
    kinds = {f.kind for s in sources for f in scan_all(s)}
    assert kinds == _KINDS


_KINDS = {
    "does-not-parse", "exit-call", "attribute-patching", "dynamic-code", "file-access",
    "frame-inspection", "object-graph-inspection", "native-memory-access", "exit-hook",
    "signal-handling", "builtins-patching", "import-machinery", "process-spawning",
    "test-framework-access", "module-table-access", "tracing", "constant-comparison-dunder",
    "comparison-dunder", "module-patching",
}  # fmt: skip


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (
            "\uff45\uff58\uff49\uff54(0)\n",
            "exit-call",
        ),  # the parser folds full-width letters into `exit`
        ("import \uff4f\uff53\n\uff4f\uff53.x = 1\n", "module-patching"),
        ("y = 0x1f or exit(1)\n", "exit-call"),
        ("def f(x):\n    return 1if x else quit()\n", "exit-call"),
    ],
)
def test_names_the_shortcut_cannot_see_as_text_are_still_flagged(code: str, kind: str) -> None:
    assert kind in {f.kind for f in scan(code)}


def test_clean_code_and_code_that_does_not_parse() -> None:
    assert scan("def f(xs):\n    return sorted(set(xs))[:3]\n") == []
    assert [f.kind for f in scan("def f(:\n")] == ["does-not-parse"]
    assert [f.kind for f in scan("x = 1\0\n")] == [f.kind for f in scan_all("x = 1\0\n")]
