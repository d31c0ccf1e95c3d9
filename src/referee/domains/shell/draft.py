"""What every shell family builds on: a :class:`Draft` (what a builder makes), the system's
common files and commands, and the loop that turns a builder into seeded tasks
(:func:`make_tasks`). The families (:mod:`.config_fix`, :mod:`.logrotate`, ...) import it; the
family table (:mod:`.families`) imports them."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.tasks.model import Difficulty, Provenance, Task

from .session import SystemFile

__all__ = ["BASE_COMMANDS", "Draft", "base_files", "intro", "make_tasks", "to_task"]

_VERSION = "1"


@dataclass
class Draft:
    """What a family builder makes before it becomes a :class:`Task`."""

    prompt: str
    files: list[SystemFile]
    checks: list[dict[str, Any]]
    reference: str
    unit: str
    setup: str = ""
    boot: str = ""
    track: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)
    writable: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    signal: list[str] = field(default_factory=list)
    hidden: dict[str, Any] = field(default_factory=dict)
    features: dict[str, float] = field(default_factory=dict)


#: Commands the multi-turn environment's ``run`` tool allows on every task (the programs of a
#: pipeline are each checked; no shells or interpreters that would run arbitrary code).
BASE_COMMANDS = [
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "find",
    "du",
    "df",
    "stat",
    "file",
    "ps",
    "pgrep",
    "sleep",
    "echo",
    "printf",
    "test",
    "[",
    "true",
    "false",
    "mkdir",
    "chmod",
    "touch",
    "mv",
    "cp",
    "rm",
    "ln",
    "gzip",
    "gunzip",
    "zcat",
    "sed",
    "awk",
    "diff",
    "cmp",
    "sha256sum",
    "truncate",
    "id",
    "readlink",
    "basename",
    "dirname",
    "date",
    "tee",
]


def intro() -> str:
    """The first paragraph of every prompt: where the system is and how work is judged."""
    return (
        "You are the operator of a small Linux system. Its root file system is mounted at "
        "/workspace (so its /etc is /workspace/etc); every command runs in /workspace, so "
        "relative paths such as etc/app/app.ini work. Everything runs as one sandbox user: "
        "owners and groups are simulated (etc/passwd, etc/group, etc/fs-owners) and cannot be "
        "changed, but permission bits are real. Only the final state of the system is judged "
        "(files, modes, running processes, the services' answers), by checks you cannot see; "
        "nothing you say about it counts."
    )


def base_files(rng: random.Random, noise: int) -> list[SystemFile]:
    """The files every system has: users, a hostname, a syslog with ``noise`` lines."""
    lines = [
        f"Dec  1 0{i % 10}:{rng.randrange(60):02d}:{rng.randrange(60):02d} host "
        f"{rng.choice(['cron', 'kernel', 'sshd', 'systemd'])}[{rng.randrange(100, 999)}]: "
        f"{rng.choice(['session opened', 'eth0 link up', 'Started job', 'Accepted key'])}"
        for i in range(noise)
    ]
    return [
        ("etc/hostname", "ops-box\n", 0o644),
        ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n", 0o644),
        ("etc/group", "root:x:0:\n", 0o644),
        ("root/.profile", "cd /workspace\n", 0o644),
        ("var/log/syslog", "".join(line + "\n" for line in lines), 0o640),
    ]


def to_task(family: str, draft: Draft, difficulty: float, seed: int) -> Task:
    """The :class:`Task` of a draft."""
    manifest = {
        "read_only": sorted(set(draft.read_only)),
        "writable": sorted(set(draft.writable)),
        "commands": sorted(set(BASE_COMMANDS) | set(draft.commands)),
        "signal": sorted(set(draft.signal)),
    }
    hidden = {
        "setup": draft.setup,
        "boot": draft.boot,
        "track": draft.track,
        "checks": draft.checks,
        "reference": draft.reference,
        "timeout_s": 30.0,
        **draft.hidden,
    }
    return Task.create(
        name=f"shell/{family}-d{round(difficulty * 100)}-s{seed}-v{_VERSION}",
        prompt=f"{intro()}\n\n{draft.prompt}",
        domain="shell",
        kind="shell",
        answer_format="tool-state",
        payload={"family": family, "files": [list(f) for f in draft.files], "manifest": manifest},
        hidden=hidden,
        difficulty=Difficulty(estimate=round(difficulty, 3), features=draft.features),
        provenance=Provenance(
            source="referee.domains.shell",
            generator=family,
            seed=seed,
            versions={"family": _VERSION},
            unit=f"shell:{family}:{draft.unit}",
        ),
    )


def make_tasks(
    family: str,
    build: Callable[[random.Random, float], Draft],
    *,
    count: int,
    difficulty: float | None,
    seed: int,
) -> list[Task]:
    """``count`` tasks of ``family``, each drafted by ``build``; ``difficulty`` None spreads
    them over 0, 0.1, ..., 1."""
    tasks = []
    for i in range(count):
        d = difficulty if difficulty is not None else (i % 11) / 10
        rng = random.Random(f"{family}:{seed + i}:{d}")
        tasks.append(to_task(family, build(rng, d), d, seed + i))
    return tasks
