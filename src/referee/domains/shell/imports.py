"""The import source ``shell-rows``: operations tasks written as JSONL rows.

One row a task::

    {"id": "ops/disk-1", "prompt": "...", "setup": "mkdir -p var/log; ...",
     "check": "test -f var/log/app.log.1.gz", "reference": "mv ...; gzip ...",
     "manifest": {"read_only": ["etc/passwd"], "writable": ["var/log"], "commands": ["ls"]}}

``setup`` is a shell script that builds the system in an empty /workspace (it may start
services in the background); ``check`` is the grader's shell script, run after the episode in a
fresh session over the final files with every process of the agent dead: exit status 0 means
solved; ``reference`` is a solution script; ``manifest`` is optional (:mod:`.manifest`).

Optional fields:

* ``time_limit_s`` (1..300, default 30): the agent's script (single-turn), each of its
  commands (multi-turn) and the reference; ``check_time_limit_s`` (1..120, default 15): the
  check; ``setup_time_limit_s`` (1..300, default 30): the setup;
* ``users``: ``[{"name", "uid"?, "groups"?, "home"?}]``, the system's users
  (:mod:`.accounts`: in ``/etc/passwd`` and ``/etc/group``, homes made; ``chown`` to them is
  impossible, one uid is mapped);
* ``processes``: ``[{"pattern", "running"}]``, whether a process whose command line matches the
  regex ``pattern`` is still running when the episode ends, read before every process is
  killed (the ``running`` check of :mod:`.checks`).

``$HOME`` is ``/workspace/root`` (it exists) for the setup, the agent, the reference and the
check alike; the working directory is ``/workspace``.

``referee tasks import shell-rows FILE`` validates every row in the sandbox before it writes
anything: the reference must pass within ``time_limit_s`` and an empty answer must fail. A bad
row is a :class:`~referee.tasks.imports.rows.RowError` naming the file, the row and the field,
in one line; with ``on_bad_row`` (``--skip-bad``) it is reported and the row skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from referee.domains.kit import check_reference_and_empty
from referee.errors import TaskError
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Provenance, Task

from .accounts import as_data, parse_users

__all__ = ["load_rows", "row_task", "validated_tasks"]

_MANIFEST_KEYS = {"read_only", "writable", "commands", "signal"}
#: field -> (lowest, highest, default) seconds.
_LIMITS = {
    "time_limit_s": (1.0, 300.0, 30.0),
    "check_time_limit_s": (1.0, 120.0, 15.0),
    "setup_time_limit_s": (1.0, 300.0, 30.0),
}
_MAX_PROCESS_CHECKS = 16
_GRADER_FAILED = re.compile(r"its (setup|boot) (.*)$")


def _limit(row: Row, name: str) -> float:
    lo, hi, default = _LIMITS[name]
    value = row.get(name, (int, float), default)
    if isinstance(value, bool) or not lo <= value <= hi:
        raise row.error(name, f"must be a number of seconds in {lo:g}..{hi:g}, got {value!r}")
    return float(value)


def _process_checks(row: Row) -> list[dict[str, Any]]:
    items = row.get("processes", list, [])
    if len(items) > _MAX_PROCESS_CHECKS:
        raise row.error("processes", f"at most {_MAX_PROCESS_CHECKS} entries")
    checks = []
    for i, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or set(item) != {"pattern", "running"}
            or not isinstance(item["pattern"], str)
            or not item["pattern"]
            or not isinstance(item["running"], bool)
        ):
            raise row.error(
                "processes", f'entry {i}: expected {{"pattern": REGEX, "running": true|false}}'
            )
        try:
            re.compile(item["pattern"])
        except re.error as e:
            raise row.error("processes", f"entry {i}: pattern is not a regex ({e})") from None
        state = "running" if item["running"] else "not running"
        checks.append(
            {
                "type": "running",
                "name": f"process {item['pattern']!r} {state}",
                "pattern": item["pattern"],
                "expect": item["running"],
            }
        )
    return checks


def row_task(
    row: Row,
    split: str = "train",
    *,
    source: str = "shell-rows",
    versions: dict[str, str] | None = None,
) -> Task:
    """The task of one row, its fields checked (not yet run); ``source`` names it and its
    provenance (an import of a benchmark's rows: ``agentbench-os``)."""
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
    limits = {name: _limit(row, name) for name in _LIMITS}
    try:
        accounts = parse_users(row.get("users", list, []))
    except TaskError as e:
        raise row.error("users", str(e).removeprefix("users ")) from None
    processes = _process_checks(row)
    from .draft import intro

    return Task.create(
        name=f"{source}/{task_id}",
        prompt=f"{intro()}\n\n{prompt}",
        domain="shell",
        kind="shell",
        answer_format="tool-state",
        split=split,
        payload={"family": source, "files": [], "manifest": manifest},
        hidden={
            "setup": setup,
            "checks": [
                {
                    "type": "script",
                    "name": "check script",
                    "source": check,
                    "timeout_s": limits["check_time_limit_s"],
                },
                *processes,
            ],
            "reference": reference,
            "timeout_s": limits["time_limit_s"],
            "command_timeout_s": limits["time_limit_s"],
            "setup_timeout_s": limits["setup_time_limit_s"],
            "accounts": as_data(accounts),
        },
        provenance=Provenance(
            source=source, unit=f"{source}:{task_id}", versions=dict(versions or {})
        ),
    )


def load_rows(split: str, path: str | Path, on_bad_row: OnBadRow | None = None) -> Iterator[Task]:
    """Tasks of a ``shell-rows`` file, each validated in the sandbox (reference passes within
    its time limit, an empty answer fails); the first bad row stops the import with a one-line
    error naming it, or, with ``on_bad_row``, is handed to it and skipped."""
    yield from validated_tasks(iter_rows(str(path), on_bad_row), split, on_bad_row)


def validated_tasks(
    rows: Iterable[Row],
    split: str,
    on_bad_row: OnBadRow | None = None,
    *,
    source: str = "shell-rows",
    versions: dict[str, str] | None = None,
) -> Iterator[Task]:
    """The tasks of ``rows`` (every row's fields checked before any run), each validated in
    the sandbox as :func:`load_rows` does; a bad row raises, or goes to ``on_bad_row``."""
    from .verifier import ShellVerifier

    tasks = []
    for row in rows:
        with skipping(on_bad_row):
            tasks.append((row, row_task(row, split, source=source, versions=versions)))
    with ShellVerifier() as verifier:
        for row, task in tasks:
            with skipping(on_bad_row):
                _validate(verifier, row, task)
                yield task


def _validate(verifier: Any, row: Row, task: Task) -> None:
    gold = verifier.verify(task, task.hidden["reference"])
    if gold.infra_error:
        failed = _GRADER_FAILED.search(gold.infra_error)
        if failed:
            raise row.error(failed[1], failed[2])
        raise row.error("setup", f"the system could not be built: {gold.infra_error}")
    if gold.timings.get("answer_timed_out"):
        limit = task.hidden["timeout_s"]
        raise row.error(
            "reference",
            f"timed out after {limit:g} s (time_limit_s): raise time_limit_s (at most "
            f"{_LIMITS['time_limit_s'][1]:g}) or make the reference faster",
        )
    check_reference_and_empty(
        row,
        verifier.verify,
        task,
        gold=gold,
        reference_fails="does not pass its check",
        empty_field="check",
        empty_passes="passes on an empty answer; it decides nothing",
    )
