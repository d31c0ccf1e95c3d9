"""Held-out splits by source unit, and the check that no unit leaks across them.

Tasks made from the same module (or function) share a *unit* (``Provenance.unit``). The split
is a deterministic function of the unit: a salted hash below ``heldout_fraction`` means held
out. So every task of a unit lands in the same split, on any machine, however many tasks are
made later; a model trained on one module's bugs is never evaluated on another bug of it.

>>> assign_split("toolz:toolz/itertoolz.py", 0.2) == assign_split("toolz:toolz/itertoolz.py", 0.2)
True
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from referee.tasks.model import Split, Task

__all__ = ["SplitReport", "assign_split", "check_split", "unit_of"]


def assign_split(unit: str, heldout_fraction: float, salt: str = "referee-split-v1") -> Split:
    h = int.from_bytes(hashlib.sha256(f"{salt}\0{unit}".encode()).digest()[:8], "big")
    return "heldout" if h / 2**64 < heldout_fraction else "train"


def unit_of(task: Task) -> str:
    """The task's unit; tasks without one are their own unit."""
    return task.provenance.unit or f"task:{task.id}"


@dataclass
class SplitReport:
    counts: Counter[str] = field(default_factory=Counter)
    units: Counter[str] = field(default_factory=Counter)
    leaks: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.leaks


def check_split(tasks: Iterable[Task]) -> SplitReport:
    """Counts per split, and every unit whose tasks sit in both splits (a leak)."""
    report = SplitReport()
    by_unit: dict[str, dict[str, list[str]]] = {}
    for t in tasks:
        report.counts[t.split] += 1
        by_unit.setdefault(unit_of(t), {}).setdefault(t.split, []).append(t.id)
    for unit, splits in by_unit.items():
        for s in splits:
            report.units[s] += 1
        if len(splits) > 1:
            report.leaks[unit] = splits
    return report
