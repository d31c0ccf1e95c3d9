"""``ops-config-fix``: a service does not start because of its config; make it start.

The system has the service (``srv/app/server.py``, the grader's :data:`.service.SERVER_SOURCE`,
and ``srv/app/start.sh``), its config ``etc/app/app.ini`` with 1 to 4 faults (difficulty), its
token, and a log of the failed start. Distractors (difficulty): an old token, an example config
for another service, noise in the log. The check starts the grader's own copy of the server with
the config left behind, after every process of the episode is dead, and asks it ``PING``: the
answer names the service, its workers and a hash of the token it read, so a config that starts
but says the wrong thing fails too.
"""

from __future__ import annotations

import hashlib
import random

from referee.tasks.model import Task

from .draft import Draft, base_files, make_tasks
from .service import SERVER_SOURCE, expected_answer

__all__ = ["FAMILY", "build", "generate"]

FAMILY = "ops-config-fix"
_NAMES = ["billing", "catalog", "ledger", "search", "invoices", "notify", "orders"]
_FAULTS = ["key-typo", "bad-workers", "token-path", "token-mode", "socket-dir", "no-section"]
_WORDS = {2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}


def _ini(name: str, socket: str, workers: str, token: str, *, typo: bool, section: bool) -> str:
    key = "wokers" if typo else "workers"
    auth = "[auth]\n" if section else ""
    return (
        f"# {name} service configuration\n[server]\nname = {name}\nsocket = {socket}\n"
        f"{key} = {workers}\n\n{auth}token_file = {token}\n"
    )


def build(rng: random.Random, difficulty: float) -> Draft:
    name = rng.choice(_NAMES)
    workers = rng.choice(sorted(_WORDS))
    token = f"{name}-{rng.randrange(16**8):08x}"
    n_faults = 1 + round(difficulty * 3)
    faults = sorted(rng.sample(_FAULTS, n_faults))
    good_socket = f"/workspace/run/app/{name}.sock"
    socket = f"/workspace/var/run/{name}/{name}.sock" if "socket-dir" in faults else good_socket
    token_path = (
        "/workspace/etc/app/tokens" if "token-path" in faults else "/workspace/etc/app/token"
    )
    broken = _ini(
        name,
        socket,
        _WORDS[workers] if "bad-workers" in faults else str(workers),
        token_path,
        typo="key-typo" in faults,
        section="no-section" not in faults,
    )
    fixed = _ini(
        name, good_socket, str(workers), "/workspace/etc/app/token", typo=False, section=True
    )
    noise = round(difficulty * 40)
    log = "".join(
        f"2026-12-01T0{i % 10}:00:{i % 60:02d} info: health probe ok\n" for i in range(noise)
    )
    files = [
        *base_files(rng, noise),
        ("srv/app/server.py", SERVER_SOURCE, 0o755),
        (
            "srv/app/start.sh",
            "#!/bin/sh\n# starts the app service with its config\n"
            "exec python3 /workspace/srv/app/server.py --config /workspace/etc/app/app.ini\n",
            0o755,
        ),
        ("etc/app/app.ini", broken, 0o644),
        ("etc/app/token", token + "\n", 0o644 if "token-mode" in faults else 0o600),
        ("run/app/.keep", "", 0o644),
        ("var/log/app/server.log", log, 0o640),
    ]
    if difficulty >= 0.3:
        old = f"{name}-{rng.randrange(16**8):08x}"
        files.append(("etc/app/token.old", old + "\n", 0o600))
    if difficulty >= 0.6:
        other = rng.choice([n for n in _NAMES if n != name])
        example = _ini(
            other,
            f"/workspace/run/app/{other}.sock",
            "2",
            "/workspace/etc/app/token",
            typo=False,
            section=True,
        )
        files.append(("etc/app/app.ini.example", example, 0o644))
    expect = expected_answer(name, workers, token)
    prompt = (
        f"The `{name}` service does not start: `sh srv/app/start.sh` fails (see "
        "var/log/app/server.log). Fix its configuration, etc/app/app.ini, so that it starts "
        f"as `{name}` with {workers} workers, reads its token from /workspace/etc/app/token "
        f"(keep the token as it is) and listens on the unix socket {good_socket}. Do not "
        "change the service's program (srv/app/). The grader starts the service itself after "
        "you are done; you need not leave it running."
    )
    reference = (
        f"cat > etc/app/app.ini <<'EOF'\n{fixed}EOF\nchmod 600 etc/app/token\n"
        "sh srv/app/start.sh >> var/log/app/server.log 2>&1 &\nsleep 0.5\n"
    )
    checks = [
        {
            "type": "service",
            "name": "service answers PING",
            "config": "etc/app/app.ini",
            "socket": good_socket,
            "expect": expect,
        },
        {
            "type": "sha256",
            "name": "token unchanged",
            "path": "etc/app/token",
            "sha256": hashlib.sha256((token + "\n").encode()).hexdigest(),
        },
    ]
    return Draft(
        prompt=prompt,
        files=files,
        checks=checks,
        reference=reference,
        unit="+".join(faults),
        setup="sh srv/app/start.sh >> var/log/app/server.log 2>&1 || true\n",
        read_only=["srv/app/server.py", "srv/app/start.sh", "etc/passwd", "etc/group"],
        writable=["etc/app", "run/app", "var/log/app"],
        commands=["sh srv/app/start.sh"],
        signal=["srv/app/server.py"],
        features={"faults": float(n_faults), "noise_lines": float(noise)},
    )


def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of this family (see :func:`.families.generate`)."""
    return make_tasks(FAMILY, build, count=count, difficulty=difficulty, seed=seed)
