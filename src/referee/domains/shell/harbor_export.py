"""``referee tasks export --format harbor --out DIR``: shell tasks as Harbor task directories.

Each task becomes ``DIR/<id with / as __>/`` in Harbor's layout (:mod:`.harbor_format`), so any
Harbor runner (Terminal-Bench's, TRL's, SkyRL's...) can run it in a container:

* ``environment/Dockerfile``: ``debian:bookworm-slim``, working directory ``/workspace`` (where
  referee's tasks live, so no path changes), the task's setup run once at build time from
  ``environment/setup.sh`` with ``HOME=/workspace/root`` as in referee;
* ``tests/test.sh``: runs ``tests/check.sh`` (the task's check script) in ``/workspace`` and
  writes 1 or 0 to ``/logs/verifier/reward.txt``;
* ``solution/solve.sh``: runs ``solution/reference.sh``, the task's reference;
* ``task.toml``: schema 1.4, the agent's and the check's time limits, referee's id in
  ``[metadata]``; ``instruction.md``: the prompt.

Only tasks judged by check scripts alone, with no simulated users, can be written: a task with
another kind of check (a file's mode, a running process, a service's answer) or with users is
left out and counted, as is a task of another kind. A setup that starts a service leaves it
running in referee's sandbox but not in an image built from it (a build runs no services).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.tasks.model import Task

__all__ = ["HarborExport", "export_harbor", "harbor_files"]

_DOCKERFILE = """\
FROM debian:bookworm-slim
# referee's shell tasks live in /workspace, with HOME=/workspace/root (docs/domains/shell.md).
RUN mkdir -p /workspace/root
WORKDIR /workspace
COPY setup.sh /tmp/referee-setup.sh
RUN HOME=/workspace/root bash /tmp/referee-setup.sh && rm -f /tmp/referee-setup.sh
"""
_TEST_SH = """\
#!/bin/bash
# The task's check (tests/check.sh) decides; Harbor reads the reward.
mkdir -p /logs/verifier
cd /workspace
if HOME=/workspace/root bash /tests/check.sh; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
_SOLVE_SH = """\
#!/bin/bash
cd /workspace
HOME=/workspace/root bash /solution/reference.sh
"""


@dataclass
class HarborExport:
    """What an export wrote: how many directories, and the tasks left out by reason."""

    written: int = 0
    left_out: dict[str, int] = field(default_factory=dict)


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def harbor_files(task: Task) -> dict[str, str]:
    """The files of ``task``'s Harbor directory (relative path -> text); a
    :class:`ConfigError` saying why when it has no Harbor form."""
    if task.kind.value != "shell":
        raise ConfigError(f"{task.id}: a {task.kind.value} task, not a shell task")
    hidden: dict[str, Any] = task.hidden
    if hidden.get("accounts"):
        raise ConfigError(f"{task.id}: it simulates users, which a Harbor image would need made")
    checks = hidden.get("checks") or []
    kinds = {str(c.get("type")) for c in checks}
    if not checks or kinds != {"script"}:
        raise ConfigError(
            f"{task.id}: checks of type {', '.join(sorted(kinds - {'script'})) or 'none'} have "
            "no Harbor form (only check scripts do)"
        )
    check = "\n".join(f"( {c['source']}\n) || exit 1" for c in checks)
    prompt = "\n\n".join(m.content for m in task.prompt if m.role in ("system", "user"))
    toml = "\n".join([
        'schema_version = "1.4"',
        "",
        "[metadata]",
        f"referee_id = {_toml_str(task.id)}",
        f"referee_content_hash = {_toml_str(task.content_hash)}",
        "",
        "[verifier]",
        f"timeout_sec = {float(max(c.get('timeout_s', 15.0) for c in checks))}",
        "",
        "[agent]",
        f"timeout_sec = {float(hidden.get('timeout_s', 30.0))}",
        "",
        "[environment]",
        f"build_timeout_sec = {float(hidden.get('setup_timeout_s', 30.0))}",
        "",
    ])  # fmt: skip
    return {
        "task.toml": toml,
        "instruction.md": prompt + "\n",
        "environment/Dockerfile": _DOCKERFILE,
        "environment/setup.sh": str(hidden.get("setup", "")) + "\n",
        "tests/test.sh": _TEST_SH,
        "tests/check.sh": check + "\n",
        "solution/solve.sh": _SOLVE_SH,
        "solution/reference.sh": str(hidden.get("reference", "")) + "\n",
    }


def export_harbor(tasks: list[Task], out: str | Path, *, split: str = "train") -> HarborExport:
    """Write the shell tasks of ``split`` as Harbor directories under ``out`` (made if missing;
    an existing task directory is refused, never overwritten). Canary tasks are never written."""
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a directory")
    done = HarborExport()
    left: Counter[str] = Counter()
    planned: dict[Path, dict[str, str]] = {}
    for task in tasks:
        if task.split != split:
            left[split_reason(task.split)] += 1
            continue
        if task.hidden.get("canary"):
            left["canary"] += 1
            continue
        try:
            files = harbor_files(task)
        except ConfigError as e:
            left["no Harbor form" if task.kind.value == "shell" else "not shell"] += 1
            del e
            continue
        target = root / task.id.replace("/", "__")
        if target.exists():
            raise ConfigError(f"{target}: exists; export into an empty folder")
        planned[target] = files
    for target, files in planned.items():
        for rel, text in files.items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if rel.endswith(".sh"):
                path.chmod(0o755)
        done.written += 1
    done.left_out = dict(left)
    return done


def split_reason(split: str) -> str:
    """The reason a task of ``split`` is left out of an export of the other split."""
    return "heldout" if split == "heldout" else "train"
