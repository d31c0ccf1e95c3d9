"""Held-out splits by source unit, and the check that no unit leaks across them.

Tasks made from the same module (or function) share a *unit* (``Provenance.unit``). The split
is a deterministic function of the unit: a salted hash below ``heldout_fraction`` means held
out. So every task of a unit lands in the same split, on any machine, however many tasks are
made later; a model trained on one module's bugs is never evaluated on another bug of it.

:func:`split_tasks` (``referee tasks split FILE --heldout 0.2 --by module --out FILE``, and the
``--heldout`` options of ``tasks import`` and ``tasks generate``) assigns the splits of tasks
made without one, grouped by one of :data:`SPLIT_BY` (see :func:`unit_by`).

>>> assign_split("toolz:toolz/itertoolz.py", 0.2) == assign_split("toolz:toolz/itertoolz.py", 0.2)
True
>>> from referee.tasks.procedural import generate
>>> tasks = [generate("list-ops", difficulty=0.5, seed=s) for s in range(20)]
>>> sorted({t.split for t in split_tasks(tasks, 0.2, by="structure")})
['heldout', 'train']
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from referee.errors import ConfigError
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Split, Task

__all__ = [
    "SPLIT_BY",
    "SplitReport",
    "assign_split",
    "check_split",
    "check_split_options",
    "split_tasks",
    "unit_by",
    "unit_of",
]

#: What :func:`split_tasks` groups tasks by (``--by``); see :func:`unit_by`.
SPLIT_BY = ("module", "function", "structure")
_SALT = "referee-split-v1"


def _score(unit: str, salt: str = _SALT) -> float:
    h = int.from_bytes(hashlib.sha256(f"{salt}\0{unit}".encode()).digest()[:8], "big")
    return h / 2**64


def assign_split(unit: str, heldout_fraction: float, salt: str = _SALT) -> Split:
    """``heldout`` when the unit's salted hash falls below ``heldout_fraction``."""
    return "heldout" if _score(unit, salt) < heldout_fraction else "train"


def unit_of(task: Task) -> str:
    """The task's unit; tasks without one are their own unit."""
    return task.provenance.unit or f"task:{task.id}"


def unit_by(task: Task, by: str) -> str:
    """The unit ``task`` belongs to when splitting ``by`` (one of :data:`SPLIT_BY`).

    * ``module``: a repository task's module (``repo:path.py``); a function task (HumanEval,
      a procedural family) is a module of its own;
    * ``function``: a repository task's function (``repo:path.py::name``); a function task is
      its own function;
    * ``structure``: the unit the task's generator recorded (a ``list-ops`` task's composition
      of steps; for synthesized tasks, the module or function ``synth --split-by`` named).

    A task without the information is a unit of its own.
    """
    check_split_options(0.0, by)
    own = f"task:{task.id}"
    recorded = task.provenance.unit
    if by == "structure":
        return recorded or own
    if task.kind not in (TaskKind.REPO_PATCH, TaskKind.TEST_WRITING) or not recorded:
        return own
    module = recorded.partition("::")[0]
    if by == "module":
        return module
    if "::" in recorded:
        return recorded
    functions = task.hidden.get("functions") or [task.hidden.get("function")]
    key = functions[0] if isinstance(functions, list) and functions else None
    if not isinstance(key, str) or "::" not in key:
        return module
    return f"{module.partition(':')[0]}:{key}"


def check_split_options(heldout_fraction: float, by: str) -> None:
    """Raise :class:`ConfigError` for a share outside [0, 1] or an unknown ``by``."""
    if by not in SPLIT_BY:
        raise ConfigError(f"--by must be {', '.join(SPLIT_BY[:-1])} or {SPLIT_BY[-1]}, got {by!r}")
    if not 0.0 <= heldout_fraction <= 1.0:
        raise ConfigError(f"--heldout must be a share in [0, 1], got {heldout_fraction}")


def split_tasks(tasks: Iterable[Task], heldout_fraction: float, *, by: str) -> list[Task]:
    """``tasks`` with their splits assigned by unit (:func:`unit_by`, :func:`assign_split`).

    Every task of a unit lands in the same split. With a share strictly between 0 and 1 and at
    least two units, both splits get at least one unit (the unit hashed lowest is held out, the
    highest trains), so a small file still makes a pool that ``referee train`` accepts.
    """
    check_split_options(heldout_fraction, by)
    tasks = list(tasks)
    units = {t.id: unit_by(t, by) for t in tasks}
    distinct = set(units.values())
    held = {u for u in distinct if assign_split(u, heldout_fraction) == "heldout"}
    if 0.0 < heldout_fraction < 1.0 and len(distinct) >= 2:
        ranked = sorted(distinct, key=_score)
        if not held:
            held = {ranked[0]}
        elif held == distinct:
            held.discard(ranked[-1])
    return [
        t.model_copy(update={"split": "heldout" if units[t.id] in held else "train"}) for t in tasks
    ]


@dataclass
class SplitReport:
    counts: Counter[str] = field(default_factory=Counter)
    units: Counter[str] = field(default_factory=Counter)
    leaks: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.leaks


def check_split(tasks: Iterable[Task], by: str | None = None) -> SplitReport:
    """Counts per split, and every unit whose tasks sit in both splits (a leak): units as
    recorded (:func:`unit_of`), or ``by`` one of :data:`SPLIT_BY` (:func:`unit_by`)."""
    report = SplitReport()
    by_unit: dict[str, dict[str, list[str]]] = {}
    for t in tasks:
        report.counts[t.split] += 1
        unit = unit_of(t) if by is None else unit_by(t, by)
        by_unit.setdefault(unit, {}).setdefault(t.split, []).append(t.id)
    for unit, splits in by_unit.items():
        for s in splits:
            report.units[s] += 1
        if len(splits) > 1:
            report.leaks[unit] = splits
    return report
