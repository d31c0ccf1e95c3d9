"""The diff of a workspace against its starting state, as ``git apply`` takes it.

A repository episode ends with the files the model left in its workspace; the pytest verifier
takes a unified diff. :func:`files_diff` writes one, with git's headers for created and deleted
files, so that ``git apply`` (which the verifier runs) recreates exactly the model's state.

Byte-compiled files and tool caches (``__pycache__``, ``.pytest_cache``) are left out: running
code in the workspace makes them, and they are nobody's answer. Files that are not UTF-8 text
cannot go into a text diff; they are left out too and named in the second return value.

>>> patch, skipped = files_diff({"a.py": b"x = 1\\n"}, {"a.py": b"x = 2\\n", "b.py": b"y\\n"})
>>> print(patch, end="")
diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -1 +1 @@
-x = 1
+x = 2
diff --git a/b.py b/b.py
new file mode 100644
--- /dev/null
+++ b/b.py
@@ -0,0 +1 @@
+y
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

__all__ = ["files_diff", "is_noise"]

_NOISE_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}


def is_noise(path: str) -> bool:
    """A file that running code leaves behind (caches, byte code), not part of an answer."""
    parts = path.split("/")
    return any(p in _NOISE_DIRS for p in parts[:-1]) or path.endswith((".pyc", ".pyo"))


def _text(data: bytes | str) -> str | None:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _hunks(path: str, old: str | None, new: str | None) -> str:
    a = [] if old is None else old.splitlines(keepends=True)
    b = [] if new is None else new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        a,
        b,
        "/dev/null" if old is None else f"a/{path}",
        "/dev/null" if new is None else f"b/{path}",
    )
    out = []
    for ln in lines:
        # difflib leaves a last line without newline as it is; git marks it.
        out.append(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n")
    return "".join(out)


def files_diff(
    before: Mapping[str, bytes | str], after: Mapping[str, bytes | str]
) -> tuple[str, list[str]]:
    """A unified diff from ``before`` to ``after`` (path -> content) and the paths left out."""
    chunks: list[str] = []
    skipped: list[str] = []
    for path in sorted(set(before) | set(after)):
        if is_noise(path):
            continue
        old_raw, new_raw = before.get(path), after.get(path)
        if old_raw == new_raw:
            continue
        old = None if old_raw is None else _text(old_raw)
        new = None if new_raw is None else _text(new_raw)
        if (old_raw is not None and old is None) or (new_raw is not None and new is None):
            skipped.append(path)
            continue
        if old == new:
            continue
        # An empty file created or deleted has no hunk at all: git needs only the header.
        body = _hunks(path, old, new)
        head = f"diff --git a/{path} b/{path}\n"
        if old is None:
            head += "new file mode 100644\n"
        elif new is None:
            head += "deleted file mode 100644\n"
        chunks.append(head + body)
    return "".join(chunks), skipped
