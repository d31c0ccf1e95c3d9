"""A task's users: entries in the system's ``/etc/passwd`` and ``/etc/group`` and their homes.

bubblewrap runs the session unprivileged in a user namespace that maps **one** uid and gid
(1000, the agent's user, named ``sandbox`` unless a task's user takes uid 1000). A task's users
are therefore names, not identities the kernel can act as:

* ``getent passwd alice``, ``id alice``, ``id -nG alice``, ``ls -l`` (for files of uid 1000),
  ``~alice`` and the home directories work, for the agent and for the check alike (the same
  ``/etc/passwd`` and ``/etc/group`` are bound read-only over the sandbox's own);
* every file belongs to uid 1000: ``chown``/``chgrp`` to any other user or group fails with
  ``Invalid argument`` (``EINVAL``: the id is not mapped), and ``su``/``sudo`` are impossible;
* a user given ``uid: 1000`` *is* the agent's user: what the agent creates is that user's, so a
  check ``[ "$(stat -c %U f)" = alice ]`` passes, and ``chown alice f`` succeeds (a no-op).

Homes are ``/workspace/home/NAME`` unless given (a path under ``/workspace``); they are created
before the setup runs. ``$HOME`` is ``/workspace/root`` for everyone (agent, setup, check and
reference): it is the ``sandbox`` user's home in ``/etc/passwd``, and the home of a user that
takes uid 1000 unless that user names another.

>>> users = parse_users([{"name": "alice", "uid": 1000}, {"name": "bob", "groups": ["staff"]}])
>>> print(passwd_text(users), end="")
root:x:0:0:root:/root:/usr/sbin/nologin
alice:x:1000:1000:alice:/workspace/root:/bin/sh
bob:x:1001:1001:bob:/workspace/home/bob:/bin/sh
>>> print(group_text(users), end="")
root:x:0:
alice:x:1000:
bob:x:1001:
staff:x:2000:bob
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.errors import TaskError

__all__ = [
    "AGENT_UID",
    "HOME",
    "Account",
    "accounts_of",
    "as_data",
    "group_text",
    "homes",
    "parse_users",
    "passwd_text",
]

#: The one uid (and gid) the sandbox maps: the agent's user.
AGENT_UID = 1000
#: ``$HOME`` of every command of a shell session (agent, setup, check, reference).
HOME = "/workspace/root"
_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}\Z")
_FIRST_UID, _FIRST_GID = 1001, 2000
_MAX_USERS = 32


@dataclass(frozen=True)
class Account:
    """One user of the system: name, uid (= its own group's gid), extra groups, home."""

    name: str
    uid: int
    groups: tuple[str, ...]
    home: str


def parse_users(value: Any, field: str = "users") -> tuple[Account, ...]:
    """The accounts of a ``users`` list (``[{name, uid?, groups?, home?}]``); a
    :class:`TaskError` naming the field and the entry that is wrong."""

    def bad(what: str) -> TaskError:
        return TaskError(f"{field} {what}")

    if not isinstance(value, list) or len(value) > _MAX_USERS:
        raise bad(f"must be a list of at most {_MAX_USERS} {{name, uid?, groups?, home?}} objects")
    out: list[Account] = []
    taken_names, taken_uids = {"root", "sandbox"}, {0}
    next_uid = _FIRST_UID
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise bad(f"entry {i}: expected an object {{name, uid?, groups?, home?}}")
        unknown = sorted(set(item) - {"name", "uid", "groups", "home"})
        if unknown:
            raise bad(f"entry {i}: unknown key {unknown[0]!r} (keys: name, uid, groups, home)")
        name = item.get("name")
        if not isinstance(name, str) or not _NAME.match(name) or name in taken_names:
            raise bad(
                f"entry {i}: name {name!r} must be a new lower-case user name "
                "(not root or sandbox, each once)"
            )
        uid = item.get("uid")
        if uid is None:
            while next_uid in taken_uids:
                next_uid += 1
            uid = next_uid
        if isinstance(uid, bool) or not isinstance(uid, int) or not 1 <= uid < _FIRST_GID:
            raise bad(f"entry {i} ({name}): uid must be an integer in 1..{_FIRST_GID - 1}")
        if uid in taken_uids:
            raise bad(f"entry {i} ({name}): uid {uid} is taken")
        groups = item.get("groups", [])
        if not isinstance(groups, list) or not all(
            isinstance(g, str) and _NAME.match(g) for g in groups
        ):
            raise bad(f"entry {i} ({name}): groups must be a list of lower-case group names")
        default = HOME if uid == AGENT_UID else f"/workspace/home/{name}"
        home = item.get("home", default)
        if not isinstance(home, str) or not _under_workspace(home):
            raise bad(f"entry {i} ({name}): home must be a path under /workspace, got {home!r}")
        taken_names.add(name)
        taken_uids.add(uid)
        out.append(Account(name, uid, tuple(groups), home.rstrip("/")))
    names = {a.name for a in out}
    clash = sorted({g for a in out for g in a.groups if g in names | {"root", "sandbox"}})
    if clash:
        raise bad(f"group {clash[0]!r} is also a user's name; name the group differently")
    return tuple(out)


def _under_workspace(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return (
        path.startswith("/workspace/")
        and len(parts) > 2
        and all(p not in ("", ".", "..") for p in parts[2:])
    )


def accounts_of(hidden: Mapping[str, Any]) -> tuple[Account, ...]:
    """The accounts a task's ``hidden["accounts"]`` holds (as written by :func:`as_data`)."""
    return tuple(
        Account(str(a["name"]), int(a["uid"]), tuple(a["groups"]), str(a["home"]))
        for a in hidden.get("accounts", ())
    )


def as_data(accounts: Sequence[Account]) -> list[dict[str, Any]]:
    """The accounts as plain data, for a task's ``hidden["accounts"]``."""
    return [
        {"name": a.name, "uid": a.uid, "groups": list(a.groups), "home": a.home} for a in accounts
    ]


def passwd_text(accounts: Sequence[Account]) -> str:
    """The system's ``/etc/passwd``: root, the agent's user (``sandbox`` unless an account
    takes uid 1000), the accounts."""
    lines = ["root:x:0:0:root:/root:/usr/sbin/nologin"]
    if not any(a.uid == AGENT_UID for a in accounts):
        lines.append(f"sandbox:x:{AGENT_UID}:{AGENT_UID}:sandbox:{HOME}:/bin/sh")
    lines += [f"{a.name}:x:{a.uid}:{a.uid}:{a.name}:{a.home}:/bin/sh" for a in accounts]
    return "".join(line + "\n" for line in lines)


def group_text(accounts: Sequence[Account]) -> str:
    """The system's ``/etc/group``: each user's own group (gid = uid), then the extra groups
    (gids from 2000), each listing its members."""
    lines = ["root:x:0:"]
    if not any(a.uid == AGENT_UID for a in accounts):
        lines.append(f"sandbox:x:{AGENT_UID}:")
    lines += [f"{a.name}:x:{a.uid}:" for a in accounts]
    extra: dict[str, list[str]] = {}
    for a in accounts:
        for g in a.groups:
            extra.setdefault(g, []).append(a.name)
    for i, (g, members) in enumerate(extra.items()):
        lines.append(f"{g}:x:{_FIRST_GID + i}:{','.join(members)}")
    return "".join(line + "\n" for line in lines)


def homes(accounts: Sequence[Account]) -> list[str]:
    """The directories to create in the workspace (relative to it): ``$HOME`` and each home."""
    rel = [h.removeprefix("/workspace/") for h in (HOME, *(a.home for a in accounts))]
    return list(dict.fromkeys(rel))
