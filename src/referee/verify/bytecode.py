"""Bytecode of a repository's own files, compiled once on the host and reused by every run.

A pytest run of a repository task spends most of its time before any test runs: pytest
rewrites the asserts of every test module it collects (parse, walk and rewrite the syntax
tree, compile) and Python compiles every module the tests import. The workspace is new for each
verification, so nothing written there by one run survives to the next. On toolz 1.2.0 the
rewriting alone was about two thirds of a verification (RESULTS.md §24).

This module makes those ``.pyc`` files on the host, from the task's own files, and the
verifier writes them next to the sources before the run:

* a test module gets pytest's own cached form (``__pycache__/<name>.<tag>-pytest-<version>.pyc``),
  made by pytest's own rewriter (``rewrite_asserts``; the grader's runner switches off every
  configuration that could change its output), so it equals what pytest would have written;
* any other module gets a standard ``__pycache__/<name>.<tag>.pyc``.

The pycs are kept in memory for the process and, by the pytest verifier, on disk
(:data:`DISK`), so a later ``referee verify`` of the same repository on this host does not
compile it again. Both are *checked-hash* pycs (PEP 552): the loader hashes the source it finds
and uses the bytecode only if the hash matches. A module the candidate's patch changed has
another hash, so it is compiled from its source as before; nothing depends on file times.

Only files whose content is the task's own are compiled here (the snapshot, the pristine tests),
never the candidate's: compiling runs no code, but untrusted source is only ever handled inside
the sandbox. The pycs are written after the patch is applied, over anything the patch put at
those paths, so a candidate cannot ship bytecode for a file it may not change.

>>> cache = BytecodeCache()
>>> test = "def test_x():\\n    assert 1\\n"
>>> files = cache.pycs({"pkg/mod.py": "X = 1\\n", "tests/test_mod.py": test})
>>> sorted(files)  # doctest: +ELLIPSIS
['pkg/__pycache__/mod.cpython-3....pyc', 'tests/__pycache__/test_mod.cpython-3...-pytest-....pyc']
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import importlib.util
import marshal
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DISK", "WORKSPACE", "BytecodeCache", "is_test_module"]

#: Where the sandbox sees the workspace: compiled code names its files by these paths.
WORKSPACE = "/workspace"
# A checked-hash pyc (PEP 552): bit 0 says hash-based, bit 1 says "always check the hash".
_CHECKED_HASH = (3).to_bytes(4, "little")


def is_test_module(path: str) -> bool:
    """Whether pytest rewrites ``path`` with its default ``python_files`` (and conftests).

    The grader's runner uses pytest's defaults (``-c /dev/null``): ``test_*.py``, ``*_test.py``
    and ``conftest.py``. A pyc made for a file pytest does not rewrite is never read."""
    name = path.rsplit("/", 1)[-1]
    return name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    )


#: Where compiled pycs persist between processes, so that a one-shot ``referee verify`` does not
#: compile a repository again. Only this host's own compiles are written there; no sandbox sees it.
DISK = Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "referee" / "bytecode"


class BytecodeCache:
    """Compiled pycs of repository files, by path and content; thread-safe, bounded.

    ``max_bytes`` bounds the pycs kept in memory (the least recently used go first).
    ``directory``, where given, keeps every compiled pyc on disk too (one file per path, content,
    interpreter and pytest version) and is read before compiling: a file there whose header does
    not carry the source's hash is ignored and replaced."""

    def __init__(self, *, max_bytes: int = 256 << 20, directory: Path | None = None) -> None:
        self.max_bytes = max_bytes
        self.directory = directory
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, bytes], tuple[str, bytes]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def pycs(self, files: Mapping[str, bytes | str]) -> dict[str, bytes]:
        """The pyc files (workspace path -> bytes) for the ``.py`` files among ``files``.

        A file that does not compile (a syntax error, a null byte) gets none: its run reports
        the error as Python would."""
        out: dict[str, bytes] = {}
        for path, data in files.items():
            if not path.endswith(".py"):
                continue
            source = data.encode() if isinstance(data, str) else data
            made = self._get(path, source)
            if made is not None:
                out[made[0]] = made[1]
        return out

    def _get(self, path: str, source: bytes) -> tuple[str, bytes] | None:
        key = (path, hashlib.sha256(source).digest())
        # One lock over lookup and compile: concurrent verifications of one repository would
        # otherwise each compile the same files (compiling holds the GIL: no parallelism lost).
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
            made = self._read_disk(path, source, key[1])
            if made is None:
                try:
                    made = _compile_pyc(path, source)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    return None
                self._write_disk(path, key[1], made)
            self._entries[key] = made
            self._bytes += len(made[1])
            while self._bytes > self.max_bytes and self._entries:
                _, (_, old) = self._entries.popitem(last=False)
                self._bytes -= len(old)
        return made

    def _disk_file(self, path: str, digest: bytes) -> Path | None:
        if self.directory is None:
            return None
        version = _pytest_version() if is_test_module(path) else ""
        name = hashlib.sha256(
            b"\0".join([importlib.util.MAGIC_NUMBER, version.encode(), path.encode(), digest])
        ).hexdigest()
        return self.directory / name[:2] / f"{name}.pyc"

    def _read_disk(self, path: str, source: bytes, digest: bytes) -> tuple[str, bytes] | None:
        file = self._disk_file(path, digest)
        try:
            data = file.read_bytes() if file is not None else b""
        except OSError:
            return None
        where, sep, pyc = data.partition(b"\0")
        header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH + importlib.util.source_hash(source)
        if not sep or pyc[:16] != header:
            return None  # absent, torn, or another file's: compile it
        return where.decode(), pyc

    def _write_disk(self, path: str, digest: bytes, made: tuple[str, bytes]) -> None:
        file = self._disk_file(path, digest)
        if file is None:
            return
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            # Whole or not at all: another process may be reading the same name.
            with tempfile.NamedTemporaryFile(dir=file.parent, delete=False) as f:
                f.write(made[0].encode() + b"\0" + made[1])
            os.replace(f.name, file)
        except OSError:
            pass  # a cache that cannot be written only costs a compile next time


@functools.cache
def _pytest_version() -> str:
    return importlib.metadata.version("pytest")


def _compile_pyc(path: str, source: bytes) -> tuple[str, bytes]:
    """One file's pyc: where it goes in the workspace and its bytes."""
    folder, _, name = path.rpartition("/")
    cache_dir = f"{folder}/__pycache__" if folder else "__pycache__"
    filename = f"{WORKSPACE}/{path}"
    tag = sys.implementation.cache_tag
    if is_test_module(path):
        # pytest's rewriter, as its import hook runs it (_pytest/assertion/rewrite.py,
        # _rewrite_test): parse, rewrite the asserts, compile without inheriting our flags.
        from _pytest.assertion.rewrite import PYC_TAIL, rewrite_asserts

        tree = ast.parse(source, filename=filename)
        rewrite_asserts(tree, source, filename, None)
        code = compile(tree, filename, "exec", dont_inherit=True, optimize=0)
        pyc_name = name[:-3] + PYC_TAIL
    else:
        # What importlib's SourceLoader compiles. optimize=0 whatever this interpreter's -O: the
        # sandbox's runs never strip asserts.
        code = compile(source, filename, "exec", dont_inherit=True, optimize=0)
        pyc_name = f"{name[:-3]}.{tag}.pyc"
    header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH + importlib.util.source_hash(source)
    return f"{cache_dir}/{pyc_name}", header + marshal.dumps(code)
