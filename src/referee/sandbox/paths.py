"""File names that cross the sandbox boundary, checked before anything touches the disk.

Names come from users and from models. A name is accepted only if it is relative, normalised,
free of ``..``, NUL bytes and empty components; the file system walk in :mod:`.workspace` then
refuses symlinks on the way, so that a link planted by a previous run cannot redirect a write.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from referee.errors import UnsafePathError

__all__ = ["safe_relpath"]

_MAX_DEPTH = 32


def safe_relpath(name: str) -> tuple[str, ...]:
    """Split ``name`` into path components, refusing anything that could leave the workspace.

    >>> safe_relpath("src/pkg/mod.py")
    ('src', 'pkg', 'mod.py')
    >>> safe_relpath("../etc/passwd")
    Traceback (most recent call last):
    ...
    referee.errors.UnsafePathError: file name '../etc/passwd' contains '..'; ...
    """
    if not isinstance(name, str) or not name:
        raise UnsafePathError(f"file name {name!r} is empty; give a path relative to the workspace")
    if "\x00" in name:
        raise UnsafePathError(f"file name {name!r} contains a NUL byte; remove it")
    if name.startswith("/"):
        raise UnsafePathError(
            f"file name {name!r} is absolute; give a path relative to the workspace, "
            f"e.g. {name.lstrip('/')!r}"
        )
    raw_parts = name.split("/")
    if ".." in raw_parts:
        raise UnsafePathError(
            f"file name {name!r} contains '..'; paths must stay inside the workspace"
        )
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if not parts:
        raise UnsafePathError(f"file name {name!r} names the workspace itself, not a file in it")
    if len(parts) > _MAX_DEPTH:
        raise UnsafePathError(f"file name {name!r} is nested deeper than {_MAX_DEPTH} levels")
    return parts
