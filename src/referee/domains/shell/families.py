"""The shell domain's task families: seeded, reproducible operations tasks with a difficulty knob.

=========================  ==================================================================
family                     the operator's job
=========================  ==================================================================
``ops-config-fix``         fix a service's INI config so the grader's start of it answers
``ops-logrotate``          rotate and compress an application's logs by the written policy
``ops-runaway-process``    find and stop the process that fills the disk, and only it
``ops-permissions``        set modes so some (simulated) users can read a file and others not
``ops-idempotent-script``  write a provisioning script whose second run changes nothing
=========================  ==================================================================

``difficulty`` (0..1) sets the number of faults or requirements, the distractor files and the
noise in the logs. Task ``i`` of a call uses seed ``seed + i``; the same (family, difficulty,
seed) always makes the same task. ``provenance.unit`` is the family's *structure* (which faults,
which requirements), so a held-out split keeps structures whole. Every task carries its
reference script (``hidden["reference"]``), which the tests run: gold passes 100%.

>>> tasks = generate("ops-permissions", count=1, difficulty=0.5, seed=3)
>>> tasks[0].kind.value, tasks[0].answer_format
('shell', 'tool-state')
"""

from __future__ import annotations

import random
from collections.abc import Callable

from referee.errors import ConfigError
from referee.tasks.model import Task

from .draft import BASE_COMMANDS, Draft, base_files, intro, make_tasks, to_task

__all__ = ["BASE_COMMANDS", "Draft", "base_files", "generate", "intro", "to_task"]


def _builders() -> dict[str, Callable[[random.Random, float], Draft]]:
    from . import access, config_fix, idempotent, logrotate, runaway

    return {
        "ops-config-fix": config_fix.build,
        "ops-logrotate": logrotate.build,
        "ops-runaway-process": runaway.build,
        "ops-permissions": access.build,
        "ops-idempotent-script": idempotent.build,
    }


def generate(family: str, *, count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of ``family``; ``difficulty`` None spreads them over 0, 0.1, ..., 1."""
    builders = _builders()
    if family not in builders:
        raise ConfigError(f"unknown shell family {family!r}; families: {', '.join(builders)}")
    return make_tasks(family, builders[family], count=count, difficulty=difficulty, seed=seed)
