"""``ops-idempotent-script``: write a provisioning script that brings the system to a stated
state, and whose second run changes nothing.

The answer is a file, ``usr/local/sbin/provision.sh``. The check copies it onto a fresh copy of
the *original* system, runs it (``sh usr/local/sbin/provision.sh`` in /workspace), reads the
state of the required paths on the host, runs it again and reads again: both must equal the
stated state. What the agent did to its own system meanwhile does not count. Requirements come
from a pool (a directory with a mode, a line present exactly once, a symlink, a file's exact
content and mode, a cron line that may already be there); difficulty draws more of them and
plants the traps (a commented copy of the line, an old symlink, the cron line already present).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from referee.tasks.model import Task

from .draft import Draft, base_files, make_tasks

__all__ = ["FAMILY", "SCRIPT", "build", "generate"]

FAMILY = "ops-idempotent-script"
SCRIPT = "usr/local/sbin/provision.sh"
_KINDS = ["dir", "line", "link", "file", "cron"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build(rng: random.Random, difficulty: float) -> Draft:
    kinds = sorted(rng.sample(_KINDS, 2 + round(difficulty * 3)))
    traps = difficulty >= 0.5
    files = [*base_files(rng, round(difficulty * 20)), ("usr/local/sbin/.keep", "", 0o644)]
    setup, reference = "", ""
    wants: list[str] = []
    expect: dict[str, list[Any]] = {}
    if "dir" in kinds:
        name = rng.choice(["uploads", "exports", "cache"])
        path = f"srv/data/{name}"
        files.append(("srv/data/.keep", "", 0o644))
        wants.append(f"the directory {path} exists with mode 0750")
        reference += f"mkdir -p {path}\nchmod 0750 {path}\n"
        expect[path] = ["dir", 0o750]
    if "line" in kinds:
        line = "include /workspace/etc/app/extra.conf"
        original = "# app settings\nlisten = 8080\n" + (f"# {line}\n" if traps else "")
        files += [("etc/app/main.conf", original, 0o644), ("etc/app/extra.conf", "x = 1\n", 0o644)]
        wants.append(
            f"etc/app/main.conf contains the line `{line}` exactly once (append it "
            "at the end if it is missing; keep the other lines)"
        )
        reference += f"grep -qxF '{line}' etc/app/main.conf || echo '{line}' >> etc/app/main.conf\n"
        expect["etc/app/main.conf"] = ["file", 0o644, _sha(original + line + "\n")]
    if "link" in kinds:
        version = f"v{rng.randrange(3, 9)}"
        for v in ("v1", "v2", version):
            files.append((f"srv/releases/{v}/VERSION", v + "\n", 0o644))
        if traps:
            setup += "ln -s releases/v1 srv/current\n"
        wants.append(f"srv/current is a symlink to releases/{version} (relative, as written)")
        reference += f"ln -sfn releases/{version} srv/current\n"
        expect["srv/current"] = ["link", f"releases/{version}"]
    if "file" in kinds:
        workers = rng.randrange(2, 9)
        text = f"MODE=production\nWORKERS={workers}\n"
        files.append(("etc/app/.keep", "", 0o644))
        wants.append(
            f"etc/app/env holds exactly `MODE=production` and `WORKERS={workers}` "
            "(two lines) with mode 0600"
        )
        reference += f"printf 'MODE=production\\nWORKERS={workers}\\n' > etc/app/env\n"
        reference += "chmod 0600 etc/app/env\n"
        expect["etc/app/env"] = ["file", 0o600, _sha(text)]
    if "cron" in kinds:
        line = "30 2 * * * root /usr/local/sbin/backup.sh"
        original = "SHELL=/bin/sh\n" + (line + "\n" if traps else "")
        files.append(("etc/cron.d/backup", original, 0o644))
        wants.append(f"etc/cron.d/backup contains the line `{line}` exactly once")
        reference += f"grep -qxF '{line}' etc/cron.d/backup || echo '{line}' >> etc/cron.d/backup\n"
        expect["etc/cron.d/backup"] = [
            "file",
            0o644,
            _sha(original + ("" if traps else line + "\n")),
        ]
    full_reference = (
        f"mkdir -p usr/local/sbin\ncat > {SCRIPT} <<'EOF'\n#!/bin/sh\nset -e\ncd /workspace\n"
        f"{reference}EOF\nchmod 0755 {SCRIPT}\n"
    )
    prompt = (
        f"Write the provisioning script /workspace/{SCRIPT}. It will be run as `sh {SCRIPT}` "
        "from /workspace on a fresh copy of this system, and then run again; after each run "
        "the system must be in this state: " + "; ".join(wants) + ". The second run must "
        "change nothing. Only the script is judged, not the state you leave here."
    )
    return Draft(
        prompt=prompt,
        files=files,
        checks=[
            {
                "type": "idempotent",
                "name": "the script's state, twice",
                "script": SCRIPT,
                "expect": expect,
            }
        ],
        reference=full_reference,
        unit="+".join(kinds) + ("-traps" if traps else ""),
        setup=setup,
        read_only=["etc/passwd", "etc/group"],
        writable=["usr/local/sbin", "etc/app", "srv", "etc/cron.d"],
        features={"requirements": float(len(kinds)), "traps": float(traps)},
    )


def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of this family (see :func:`.families.generate`)."""
    return make_tasks(FAMILY, build, count=count, difficulty=difficulty, seed=seed)
