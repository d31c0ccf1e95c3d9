"""``ops-permissions``: make a report readable by some (simulated) users and not by others.

Users and groups live in ``etc/passwd`` and ``etc/group``, owners in ``etc/fs-owners``; all
three are read-only in the episode, and the grader judges with its own copies of them
(:mod:`.permissions`), so editing them is both impossible and useless. The permission bits are
real and are the agent's to change. Difficulty adds a blocked directory, a second file that a
user must *not* read while its owner must (so the directory needs search rights for others),
and a README everybody must read. ``chmod -R 777`` lets the wrong user in and fails.
"""

from __future__ import annotations

import hashlib
import random

from referee.tasks.model import Task

from .draft import Draft, base_files, make_tasks

__all__ = ["FAMILY", "build", "generate"]

FAMILY = "ops-permissions"
_USERS = {
    "alice": ["alice", "analysts"],
    "bob": ["bob", "interns"],
    "carol": ["carol", "analysts"],
    "dave": ["dave", "hr"],
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build(rng: random.Random, difficulty: float) -> Draft:
    quarter = rng.choice(["q1", "q2", "q3", "q4"])
    report = f"srv/reports/{quarter}-revenue.csv"
    rows = "".join(f"{r},{rng.randrange(10**5)}\n" for r in ["north", "south", "east", "west"])
    blocked_dir = difficulty >= 0.3
    salaries = difficulty >= 0.5
    readme = difficulty >= 0.8
    owners: dict[str, list[str]] = {
        "srv/reports": ["root", "analysts"],
        report: ["root", "analysts"],
    }
    contents = {report: "region,revenue\n" + rows}
    modes = {report: 0o600}
    wants = [("alice", report, True), ("carol", report, True), ("bob", report, False)]
    if salaries:
        path = "srv/reports/salaries.csv"
        owners[path] = ["dave", "hr"]
        contents[path] = "name,salary\nalice,100\nbob,90\n"
        modes[path] = 0o644
        wants += [("dave", path, True), ("alice", path, False), ("bob", path, False)]
    if readme:
        path = "srv/reports/README"
        owners[path] = ["root", "root"]
        contents[path] = "Quarterly reports. Ask #analytics for access.\n"
        modes[path] = 0o600
        wants += [("alice", path, True), ("bob", path, True)]
    passwd = "root:x:0:0:root:/root:/bin/sh\n" + "".join(
        f"{u}:x:{1001 + i}:{1001 + i}:{u}:/home/{u}:/bin/sh\n" for i, u in enumerate(_USERS)
    )
    groups: dict[str, list[str]] = {}
    for user, gs in _USERS.items():
        for g in gs:
            groups.setdefault(g, []).append(user)
    group = "root:x:0:\n" + "".join(
        f"{g}:x:{2001 + i}:{','.join(m)}\n" for i, (g, m) in enumerate(sorted(groups.items()))
    )
    fs_owners = "".join(f"/workspace/{p} {o}:{g}\n" for p, (o, g) in sorted(owners.items()))
    files = [
        *[
            f
            for f in base_files(rng, round(difficulty * 20))
            if f[0] not in ("etc/passwd", "etc/group")
        ],
        ("etc/passwd", passwd, 0o644),
        ("etc/group", group, 0o644),
        ("etc/fs-owners", fs_owners, 0o644),
        *[(p, contents[p], modes[p]) for p in contents],
    ]
    setup = "chmod 0700 srv/reports\n" if blocked_dir else ""
    others_need_dir = salaries or readme
    dir_mode = "0751" if others_need_dir else "0750"
    reference = f"chmod {dir_mode} srv/reports\nchmod 0640 {report}\n"
    if salaries:
        reference += "chmod 0640 srv/reports/salaries.csv\n"
    if readme:
        reference += "chmod 0644 srv/reports/README\n"
    checks: list[dict[str, object]] = [
        {
            "type": "can_read",
            "name": f"{u} {'can' if ok else 'cannot'} read {p}",
            "user": u,
            "path": p,
            "expect": ok,
        }
        for u, p, ok in wants
    ]
    checks += [
        {"type": "sha256", "name": f"{p} unchanged", "path": p, "sha256": _sha(t)}
        for p, t in contents.items()
    ]
    lines = "; ".join(
        f"{u} {'must' if ok else 'must not'} be able to read {p}" for u, p, ok in wants
    )
    prompt = (
        f"Set permissions under srv/reports so that: {lines}. Users and groups are in "
        "etc/passwd and etc/group, owners in etc/fs-owners (all read-only: change modes, not "
        "owners or memberships). Reading a file needs search (x) permission on each directory "
        "above it. Do not change the files' contents."
    )
    return Draft(
        prompt=prompt,
        files=files,
        checks=checks,
        reference=reference,
        unit=f"dir{int(blocked_dir)}-salaries{int(salaries)}-readme{int(readme)}",
        setup=setup,
        read_only=["etc/passwd", "etc/group", "etc/fs-owners"],
        writable=["srv/reports"],
        hidden={"users": _USERS, "owners": owners},
        features={"requirements": float(len(wants))},
    )


def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of this family (see :func:`.families.generate`)."""
    return make_tasks(FAMILY, build, count=count, difficulty=difficulty, seed=seed)
