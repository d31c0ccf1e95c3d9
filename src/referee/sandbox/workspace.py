"""Workspaces: the files of one run or of a multi-turn session, with snapshot and restore.

A workspace is a host directory that the sandbox mounts read-write at ``/workspace``. Everything
that crosses into or out of it goes through file descriptors opened with ``O_NOFOLLOW`` at every
path component, so a symlink or FIFO planted by sandboxed code can neither redirect a host write
nor hang or leak a host read.

>>> ws = Workspace.temporary()
>>> ws.write({"a/b.txt": "hi"})
>>> ws.read_all()
{'a/b.txt': b'hi'}
>>> snap = ws.snapshot(); ws.write({"c.txt": "x"}); ws.restore(snap); sorted(ws.read_all())
['a/b.txt']
>>> ws.close()
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from referee.errors import ConfigError, UnsafePathError
from referee.sandbox.paths import safe_relpath

__all__ = ["Snapshot", "Workspace"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Snapshot:
    """An immutable copy of a workspace's regular files and directories."""

    files: tuple[tuple[str, bytes, int], ...]  # (relative path, content, mode)
    dirs: tuple[str, ...]
    links: tuple[tuple[str, str], ...] = ()  # (relative path, link target), kept as plain data

    @property
    def size_bytes(self) -> int:
        return sum(len(c) for _, c, _ in self.files)


class Workspace:
    """A directory of files for sandboxed runs.

    ``owner`` is the host uid (and gid) that sandboxed processes run as; files the host writes are
    given to it so that the program may change them, as it could with files it made itself.
    ``on_close`` runs once, at the first :meth:`close` (``Sandbox.workspace`` passes the release of
    the owner's sandbox uid); after it, ``owner`` is ``None``: the closed workspace owns no uid.
    """

    def __init__(
        self,
        root: Path,
        *,
        owner: int | None = None,
        cleanup: bool = False,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.root = Path(root)
        self.owner = owner
        self._cleanup = cleanup
        self._on_close = on_close
        self.root.mkdir(parents=True, exist_ok=True)
        if owner is not None:
            os.chown(self.root, owner, owner)
        os.chmod(self.root, 0o700)

    @classmethod
    def temporary(cls, *, base: Path | None = None, owner: int | None = None) -> Workspace:
        """A fresh empty workspace in a new temporary directory, removed by :meth:`close`."""
        root = Path(tempfile.mkdtemp(prefix="ws-", dir=base))
        return cls(root, owner=owner, cleanup=True)

    # ---- writing -------------------------------------------------------------------------
    def write(self, files: Mapping[str, bytes | str], *, mode: int = 0o644) -> None:
        """Place files (relative path -> content). Parent directories are created."""
        checked = [(safe_relpath(name), content) for name, content in files.items()]
        for parts, content in checked:
            data = content.encode() if isinstance(content, str) else bytes(content)
            with self._dir_fd(parts[:-1], create=True) as dfd:
                self._write_file(dfd, parts[-1], data, mode, "/".join(parts))

    def _write_file(self, dfd: int, name: str, data: bytes, mode: int, shown: str) -> None:
        # Replace whatever is there: a symlink or a FIFO left by the program must not be followed.
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            st = os.lstat(name, dir_fd=dfd)
            if stat.S_ISDIR(st.st_mode):
                raise UnsafePathError(f"cannot write file {shown!r}: a directory is in the way")
            os.unlink(name, dir_fd=dfd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, mode, dir_fd=dfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if self.owner is not None:
                os.fchown(fd, self.owner, self.owner)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _dir_fd(self, parts: tuple[str, ...], *, create: bool) -> Iterator[int]:
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for i, part in enumerate(parts):
                try:
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o755, dir_fd=fd)
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                    if self.owner is not None:
                        os.fchown(nfd, self.owner, self.owner)
                except OSError as e:
                    if e.errno in (errno.ELOOP, errno.ENOTDIR):
                        shown = "/".join(parts[: i + 1])
                        raise UnsafePathError(
                            f"{shown!r} in the workspace is a symlink or not a directory; "
                            "referee never follows links inside a workspace"
                        ) from e
                    raise
                os.close(fd)
                fd = nfd
            yield fd
        finally:
            os.close(fd)

    # ---- reading -------------------------------------------------------------------------
    def read(self, name: str, *, max_bytes: int = 64 << 20) -> bytes:
        """One regular file's content. Symlinks, FIFOs and devices are refused."""
        parts = safe_relpath(name)
        with self._dir_fd(parts[:-1], create=False) as dfd:
            return _read_regular(dfd, parts[-1], max_bytes, name)

    def read_all(self, *, max_files: int = 10_000, max_bytes: int = 64 << 20) -> dict[str, bytes]:
        """Every regular file (relative path -> bytes). Links and special files are skipped."""
        out: dict[str, bytes] = {}
        budget = max_bytes
        for rel, kind, _mode, dfd, name in self._walk():
            if kind != "file":
                continue
            if len(out) >= max_files:
                raise ConfigError(f"workspace has more than {max_files} files; raise max_files")
            data = _read_regular(dfd, name, budget, rel)
            budget -= len(data)
            out[rel] = data
        return out

    def _walk(self) -> Iterator[tuple[str, str, int, int, str]]:
        """Yield (relpath, kind, mode, parent_fd, name) without following any link."""
        root = os.open(self.root, _DIR_FLAGS)
        try:
            yield from self._walk_fd(root, "")
        finally:
            os.close(root)

    def _walk_fd(self, dfd: int, prefix: str) -> Iterator[tuple[str, str, int, int, str]]:
        with os.scandir(dfd) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                yield rel, "dir", stat.S_IMODE(st.st_mode), dfd, entry.name
                try:
                    sub = os.open(entry.name, _DIR_FLAGS, dir_fd=dfd)
                except OSError:
                    continue  # replaced by a link between scandir and open: skip it
                try:
                    yield from self._walk_fd(sub, rel + "/")
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                yield rel, "file", stat.S_IMODE(st.st_mode), dfd, entry.name
            elif stat.S_ISLNK(st.st_mode):
                yield rel, "link", 0, dfd, entry.name
            else:
                yield rel, "other", 0, dfd, entry.name

    # ---- snapshot / restore ---------------------------------------------------------------
    def snapshot(self, *, max_bytes: int = 256 << 20) -> Snapshot:
        """Copy the workspace's files, directories and symlinks into memory.

        Symlinks are recorded as their target strings and never followed; FIFOs, sockets and
        devices are left out.
        """
        files: list[tuple[str, bytes, int]] = []
        dirs: list[str] = []
        links: list[tuple[str, str]] = []
        budget = max_bytes
        for rel, kind, mode, dfd, name in self._walk():
            if kind == "dir":
                dirs.append(rel)
            elif kind == "file":
                data = _read_regular(dfd, name, budget, rel)
                budget -= len(data)
                files.append((rel, data, mode))
            elif kind == "link":
                links.append((rel, os.readlink(name, dir_fd=dfd)))
        return Snapshot(files=tuple(files), dirs=tuple(dirs), links=tuple(links))

    def restore(self, snapshot: Snapshot) -> None:
        """Make the workspace exactly what it was when ``snapshot`` was taken."""
        self.clear()
        for d in snapshot.dirs:
            with self._dir_fd(safe_relpath(d), create=True):
                pass
        for rel, data, mode in snapshot.files:
            self.write({rel: data}, mode=mode)
        for rel, target in snapshot.links:
            parts = safe_relpath(rel)
            with self._dir_fd(parts[:-1], create=True) as dfd:
                os.symlink(target, parts[-1], dir_fd=dfd)
                if self.owner is not None:
                    os.chown(parts[-1], self.owner, self.owner, dir_fd=dfd, follow_symlinks=False)

    def prune(self, match: Callable[[str], bool]) -> list[str]:
        """Remove every file, link or folder (with all it holds) whose path ``match`` accepts;
        return those paths. Links are removed, never followed.

        >>> ws.prune(lambda path: path.endswith(".pyc"))             # doctest: +SKIP
        ['pkg/__pycache__/mod.cpython-311.pyc']
        """
        removed = []
        for rel, kind, _mode, dfd, name in self._walk():
            if not match(rel):
                continue
            if kind == "dir":
                shutil.rmtree(name, dir_fd=dfd)  # the walk then finds it gone and moves on
            else:
                os.unlink(name, dir_fd=dfd)
            removed.append(rel)
        return removed

    def clear(self) -> None:
        """Remove everything inside the workspace (the directory itself stays)."""
        # rmtree with dir_fd support never follows symlinks: a link to /etc is unlinked, not walked.
        for entry in os.scandir(self.root):
            path = os.path.join(self.root, entry.name)
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=False)
            else:
                os.unlink(path)

    def close(self) -> None:
        """Remove the directory (if this workspace made it) and run ``on_close``. Idempotent."""
        if self._cleanup:
            shutil.rmtree(self.root, ignore_errors=True)
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            # What on_close gives back (Sandbox.workspace: the owner's uid) is no longer this
            # workspace's, so a caller that still does ``uids.release(ws.owner)`` by hand
            # cannot free that uid again once another holder has it.
            self.owner = None
            on_close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"


def _read_regular(dfd: int, name: str, max_bytes: int, shown: str) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePathError(f"{shown!r} is a symlink; referee does not follow it") from e
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(f"{shown!r} is not a regular file; it was not read")
        if st.st_size > max_bytes:
            raise ConfigError(
                f"{shown!r} is {st.st_size} bytes, over the {max_bytes}-byte read budget"
            )
        chunks = []
        remaining = max_bytes
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
