"""``ops-runaway-process``: the disk fills up; find the process responsible and stop only it.

The setup starts 2 to 5 small services (``srv/<name>/run.py``, real processes that live between
the commands of an episode); one of them appends to a spool file without end (up to a cap, then
it idles, still alive and holding the file). Difficulty adds services and a big old backup file
that is *not* growing (deleting it is wrong). The host records each service's process (host pid
and start time) after the setup; the checks read their fates at the end of the episode, before
everything is killed: the runaway must be dead, every other service alive, its spool file gone
or emptied, the backup intact. Killing everything, deleting the file while the writer lives, or
starting a look-alike service all fail.
"""

from __future__ import annotations

import hashlib
import random

from referee.tasks.model import Task

from .draft import Draft, base_files, make_tasks

__all__ = ["FAMILY", "build", "generate"]

FAMILY = "ops-runaway-process"
_NAMES = [
    "indexer",
    "thumbnailer",
    "metrics-agent",
    "cachewarm",
    "report-builder",
    "mailer",
    "sessions-gc",
]

_HEARTBEAT = """import sys, time
# writes its heartbeat, a few bytes, twice a second
while True:
    with open(sys.argv[1], "w") as f:
        f.write(time.strftime("%H:%M:%S") + " ok\\n")
    time.sleep(0.5)
"""

_WRITER = """import sys, time
# appends work records to its spool
cap = int(sys.argv[2])
chunk = (b"record " * 9362)[:65536]
with open(sys.argv[1], "ab") as f:
    while True:
        if f.tell() < cap:
            f.write(chunk)
            f.flush()
        time.sleep(0.05)
"""

_BACKUP_BYTES = 3_000_000


def build(rng: random.Random, difficulty: float) -> Draft:
    count = 2 + round(difficulty * 3)
    names = rng.sample(_NAMES, count)
    hog = names[0]
    rng.shuffle(names)
    spool = f"var/spool/{hog}/queue.dat"
    files = [*base_files(rng, round(difficulty * 30))]
    setup, boot = "", ""
    for name in names:
        program = _WRITER if name == hog else _HEARTBEAT
        files.append((f"srv/{name}/run.py", program, 0o755))
        files.append((f"var/spool/{name}/.keep", "", 0o644))
        target = spool if name == hog else f"var/run/{name}.heartbeat"
        extra = " 24000000" if name == hog else ""
        boot += (
            f"setsid python3 -u srv/{name}/run.py {target}{extra} </dev/null >/dev/null 2>&1 &\n"
        )
    files.append(("var/run/.keep", "", 0o644))
    checks: list[dict[str, object]] = [
        {
            "type": "process",
            "name": "the runaway writer is stopped",
            "marker": f"srv/{hog}/run.py",
            "alive": False,
        },
        {"type": "max_size", "name": "its spool file is gone or empty", "path": spool, "bytes": 0},
    ]
    for name in names:
        if name != hog:
            checks.append(
                {
                    "type": "process",
                    "name": f"{name} still runs",
                    "marker": f"srv/{name}/run.py",
                    "alive": True,
                }
            )
    if difficulty >= 0.5:
        backup = "var/backups/db-2026-11-30.dump"
        files.append(("var/backups/.keep", "", 0o644))
        setup += f"head -c {_BACKUP_BYTES} /dev/zero | tr '\\0' 'x' > {backup}\n"
        checks.append(
            {
                "type": "sha256",
                "name": "the old backup is kept",
                "path": backup,
                "sha256": hashlib.sha256(b"x" * _BACKUP_BYTES).hexdigest(),
            }
        )
    boot += "sleep 0.4\n"
    prompt = (
        "The disk is filling up fast. Find the process responsible and stop it. Only it: the "
        "other services (srv/*/run.py) must keep running. Then remove the file it has been "
        "filling, and leave every other file in place."
    )
    reference = f"kill $(pgrep -f '^python3 -u srv/{hog}/run.py')\nsleep 0.3\nrm -f {spool}\n"
    return Draft(
        prompt=prompt,
        files=files,
        checks=checks,
        reference=reference,
        unit=f"services{count}-backup{int(difficulty >= 0.5)}",
        setup=setup,
        boot=boot,
        track=[f"srv/{name}/run.py" for name in names],
        read_only=[*(f"srv/{n}/run.py" for n in names), "etc/passwd", "etc/group"],
        writable=["var/spool", "var/run"],
        signal=[f"srv/{n}/run.py" for n in names],
        features={"services": float(count)},
    )


def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of this family (see :func:`.families.generate`)."""
    return make_tasks(FAMILY, build, count=count, difficulty=difficulty, seed=seed)
