"""The import source ``shell-rows``: operations tasks written as JSONL rows.

One row a task::

    {"id": "ops/disk-1", "prompt": "...", "setup": "mkdir -p var/log; ...",
     "check": "test -f var/log/app.log.1.gz", "reference": "mv ...; gzip ...",
     "manifest": {"read_only": ["etc/passwd"], "writable": ["var/log"], "commands": ["ls"]}}

``setup`` is a shell script that builds the system in an empty /workspace (it may start
services in the background); ``check`` is the grader's shell script, run after the episode in a
fresh sandbox over the final files with every process of the agent dead: exit status 0 means
solved; ``reference`` is a solution script; ``manifest`` is optional (:mod:`.manifest`).
``referee tasks import shell-rows FILE`` validates every row in the sandbox before it writes
anything: the reference must pass and an empty answer must fail. A bad row is a
:class:`~referee.errors.TaskError` naming the file, the row and the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.tasks.imports.rows import Row, iter_rows
from referee.tasks.model import Provenance, Task

__all__ = ["load_rows", "row_task"]

_MANIFEST_KEYS = {"read_only", "writable", "commands", "signal"}


def row_task(row: Row, split: str = "train") -> Task:
    """The task of one row, its fields checked (not yet run)."""
    task_id = row.get("id", str)
    prompt = row.get("prompt", str)
    setup = row.get("setup", str, "")
    check = row.get("check", str)
    reference = row.get("reference", str)
    manifest: dict[str, Any] = row.get("manifest", dict, {})
    for key, value in manifest.items():
        if key not in _MANIFEST_KEYS:
            raise row.error("manifest", f"unknown key {key!r}; keys: {sorted(_MANIFEST_KEYS)}")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise row.error("manifest", f"{key!r} must be a list of strings")
    if not check.strip():
        raise row.error("check", "is empty; a check script must decide the task")
    from .draft import intro

    return Task.create(
        name=f"shell-rows/{task_id}",
        prompt=f"{intro()}\n\n{prompt}",
        domain="shell",
        kind="shell",
        answer_format="tool-state",
        split=split,
        payload={"family": "shell-rows", "files": [], "manifest": manifest},
        hidden={
            "setup": setup,
            "checks": [{"type": "script", "name": "check script", "source": check}],
            "reference": reference,
        },
        provenance=Provenance(source="shell-rows", unit=f"shell-rows:{task_id}"),
    )


def load_rows(split: str, path: str | Path) -> Iterator[Task]:
    """Tasks of a ``shell-rows`` file, each validated in the sandbox (reference passes, an
    empty answer fails); the first bad row stops the import with an error naming it."""
    from .verifier import ShellVerifier

    rows = list(iter_rows(str(path)))
    tasks = [(row, row_task(row, split)) for row in rows]  # every row's fields, before any run
    with ShellVerifier() as verifier:
        for row, task in tasks:
            gold = verifier.verify(task, task.hidden["reference"])
            if gold.infra_error:
                raise row.error("setup", f"the system could not be built: {gold.infra_error}")
            if not gold.passed:
                detail = "; ".join(f"{t.name}: {t.detail}" for t in gold.tests)
                raise row.error("reference", f"does not pass its check ({detail})")
            if verifier.verify(task, "").passed:
                raise row.error("check", "passes on an empty answer; it decides nothing")
            yield task
