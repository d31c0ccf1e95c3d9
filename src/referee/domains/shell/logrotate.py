"""``ops-logrotate``: rotate an application's logs once, by hand, by the written policy.

``logrotate`` is not installed; ``etc/logrotate.d/app`` states the policy (``rotate K``,
``compress``, ``delaycompress``, ``create 0640``). The system has ``app.log`` and 1..K rotated
files (the setup gzips all but ``app.log.1``). Difficulty raises K, the number of rotations
already there (at K the oldest must go), the noise in the logs, and adds distractors beside
it (``worker.log`` and its rotation, another service's log) that must not be touched. Checks
compare the *decompressed* content of each ``.gz`` (gzip headers carry names and times), the
new log's emptiness and mode, the deleted oldest, and the distractors' bytes.
"""

from __future__ import annotations

import hashlib
import random

from referee.tasks.model import Task

from .draft import Draft, base_files, make_tasks

__all__ = ["FAMILY", "build", "generate"]

FAMILY = "ops-logrotate"
_DIR = "var/log/app"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _log(rng: random.Random, day: int, lines: int) -> str:
    levels = ["INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"]
    return "".join(
        f"2026-11-{day:02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00 "
        f"{rng.choice(levels)} req={rng.randrange(10**6)} path=/api/{rng.choice(['a', 'b', 'c'])}\n"
        for _ in range(lines)
    )


def build(rng: random.Random, difficulty: float) -> Draft:
    keep = 3 + round(difficulty * 2)
    existing = min(keep, 1 + round(difficulty * keep) + rng.randrange(2))
    lines = 5 + round(difficulty * 60)
    # contents[0] is app.log, contents[i] is app.log.i
    contents = [_log(rng, 30 - i, lines) for i in range(existing + 1)]
    files = [*base_files(rng, round(difficulty * 30))]
    files.append((f"{_DIR}/app.log", contents[0], 0o640))
    for i in range(1, existing + 1):
        files.append((f"{_DIR}/app.log.{i}", contents[i], 0o640))
    policy = (
        f"/workspace/{_DIR}/app.log {{\n    rotate {keep}\n    compress\n    delaycompress\n"
        "    create 0640\n    missingok\n}\n"
    )
    files.append(("etc/logrotate.d/app", policy, 0o644))
    distractors = []
    if difficulty >= 0.3:
        distractors += [
            (f"{_DIR}/worker.log", _log(rng, 30, lines)),
            (f"{_DIR}/worker.log.1", _log(rng, 29, lines)),
        ]
    if difficulty >= 0.6:
        distractors += [
            ("var/log/nginx/access.log", _log(rng, 30, lines)),
            (f"{_DIR}/app.log.bak", _log(rng, 12, lines)),
        ]
    files += [(path, text, 0o640) for path, text in distractors]
    setup = "".join(f"gzip -n {_DIR}/app.log.{i}\n" for i in range(2, existing + 1))
    checks: list[dict[str, object]] = [
        {
            "type": "sha256",
            "name": "new app.log is empty",
            "path": f"{_DIR}/app.log",
            "sha256": _sha(""),
        },
        {
            "type": "mode",
            "name": "new app.log has mode 0640",
            "path": f"{_DIR}/app.log",
            "mode": 0o640,
        },
        {
            "type": "sha256",
            "name": "app.log.1 is the old app.log",
            "path": f"{_DIR}/app.log.1",
            "sha256": _sha(contents[0]),
        },
        {"type": "absent", "path": f"{_DIR}/app.log.2"},
        {"type": "absent", "path": f"{_DIR}/app.log.1.gz"},
        {
            "type": "absent",
            "name": "nothing kept beyond the policy",
            "path": f"{_DIR}/app.log.{keep + 1}.gz",
        },
    ]
    for i in range(1, min(existing, keep - 1) + 1):
        checks.append(
            {
                "type": "gzip_sha256",
                "name": f"app.log.{i + 1}.gz is the old .{i}",
                "path": f"{_DIR}/app.log.{i + 1}.gz",
                "sha256": _sha(contents[i]),
            }
        )
    for path, text in distractors:
        checks.append(
            {"type": "sha256", "name": f"{path} untouched", "path": path, "sha256": _sha(text)}
        )
    reference = f"cd {_DIR}\nrm -f app.log.{keep}.gz\n"
    for i in range(keep - 1, 1, -1):
        reference += f"if [ -f app.log.{i}.gz ]; then mv app.log.{i}.gz app.log.{i + 1}.gz; fi\n"
    reference += (
        "if [ -f app.log.1 ]; then gzip -n app.log.1 && mv app.log.1.gz app.log.2.gz; fi\n"
        "mv app.log app.log.1\n: > app.log\nchmod 0640 app.log\n"
    )
    prompt = (
        f"Rotate /workspace/{_DIR}/app.log once, by hand, following its policy in "
        "etc/logrotate.d/app (logrotate itself is not installed). As logrotate would: app.log "
        "becomes app.log.1; the previous app.log.1 is compressed (gzip) to app.log.2.gz; each "
        "app.log.N.gz becomes app.log.N+1.gz; no more rotated files are kept than the policy's "
        "`rotate` count (the oldest is deleted); a new, empty app.log with mode 0640 is "
        "created. Leave every other file as it is."
    )
    return Draft(
        prompt=prompt,
        files=files,
        checks=checks,
        reference=reference,
        unit=f"keep{keep}-have{existing}-distract{len(distractors)}",
        setup=setup,
        read_only=["etc/logrotate.d/app", "etc/passwd", "etc/group"],
        writable=[_DIR],
        features={
            "keep": float(keep),
            "existing": float(existing),
            "distractors": float(len(distractors)),
        },
    )


def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of this family (see :func:`.families.generate`)."""
    return make_tasks(FAMILY, build, count=count, difficulty=difficulty, seed=seed)
