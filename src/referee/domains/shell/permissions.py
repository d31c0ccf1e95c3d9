"""Simulated users: who may read a file, by the Unix rules, with owners kept as data.

Inside the sandbox one uid is mapped (bubblewrap's user namespace maps only the sandbox user),
so files cannot really belong to ``alice`` or ``bob``: ``chown`` fails there. The permission
tasks therefore keep users, groups and owners as data the grader holds (the system shows the
same facts read-only in ``etc/passwd``, ``etc/group`` and ``etc/fs-owners``), while the
permission **bits** are real: the agent changes them with ``chmod`` and the host reads them
after the episode. Reading a file needs the search (x) bit on every directory above it and the
read (r) bit on the file, from the owner, group or other class the user falls in, as the kernel
decides it (no root override: no simulated user is root).

>>> users = {"alice": ["alice", "staff"], "bob": ["bob"]}
>>> owners = {"d/f": ["root", "staff"]}
>>> modes = {"d": 0o755, "d/f": 0o640}
>>> can_read("alice", "d/f", users=users, owners=owners, modes=modes)
True
>>> can_read("bob", "d/f", users=users, owners=owners, modes=modes)
False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["can_read", "permission_class"]

_SHIFT = {"owner": 6, "group": 3, "other": 0}


def permission_class(user: str, owner: Sequence[str], groups: Sequence[str]) -> str:
    """Which bits apply to ``user`` for a path owned by ``owner`` (``[user, group]``)."""
    if user == owner[0]:
        return "owner"
    if owner[1] in groups:
        return "group"
    return "other"


def can_read(
    user: str,
    path: str,
    *,
    users: Mapping[str, Sequence[str]],
    owners: Mapping[str, Sequence[str]],
    modes: Mapping[str, int | None],
) -> bool:
    """Whether ``user`` may read the file ``path``: x on each directory above it, r on it.

    ``modes`` maps ``path`` and each directory above it (``a``, ``a/b``, ...) to its permission
    bits, or None where the thing is missing or of the wrong kind (then nobody can read it);
    ``owners`` maps paths to ``[user, group]`` (``root:root`` when not listed); ``users`` maps
    each user to its groups.
    """
    groups = list(users.get(user, ()))
    parts = path.split("/")
    for i in range(len(parts)):
        rel = "/".join(parts[: i + 1])
        mode = modes.get(rel)
        if mode is None:
            return False
        shift = _SHIFT[permission_class(user, owners.get(rel, ("root", "root")), groups)]
        needed = 0o4 if i == len(parts) - 1 else 0o1
        if not (mode >> shift) & needed:
            return False
    return True
