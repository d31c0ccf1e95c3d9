"""The numeric task families: seeded, reproducible, with a difficulty knob.

``num-ode``, ``num-linear``, ``num-root``, ``num-optimize``, ``num-quadrature``, ``num-fit``
and ``num-simulate`` each draw, for task ``i``, seed ``seed + i``: the structure (when the
family has several, :data:`~referee.domains.numeric.problems.PROBLEMS`), one visible and
:data:`HIDDEN_SETS` hidden parameter sets at the task's difficulty, and record the reference's
outputs in the sandbox. ``provenance.unit`` is ``family/structure``, so a held-out split
(``--by structure``) keeps a structure whole.

>>> from referee.domains import generate_family                       # doctest: +SKIP
>>> [t.id for t in generate_family("num-root", count=2, seed=0)]      # doctest: +SKIP
['numeric/num-root-kepler-s0-v1', 'numeric/num-root-contraction-system-s1-v1']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from referee.domains.numeric import FAMILIES
from referee.domains.numeric.compare import Tolerance
from referee.domains.numeric.problem import Problem
from referee.domains.numeric.problems import problems_of
from referee.domains.numeric.sandbox import numeric_sandbox
from referee.domains.numeric.spec import (
    DEFAULT_MEMORY_MB,
    DEFAULT_SIGNATURE,
    numeric_prompt,
    record_outputs,
)
from referee.errors import ConfigError
from referee.sandbox import Sandbox
from referee.tasks.model import Task

__all__ = ["HIDDEN_SETS", "generate", "make_task"]

#: Hidden parameter sets per task (the visible one is extra).
HIDDEN_SETS = 4
VERSION = "numeric-families@2"  # 2: num-simulate gained n-body


def make_task(
    problem: Problem, *, difficulty: float, seed: int, sandbox: Sandbox | None = None
) -> Task:
    """One task of ``problem`` at ``difficulty`` from ``seed`` (references recorded in
    ``sandbox``, or in a numeric sandbox made for the call)."""
    rng = np.random.default_rng([seed, round(difficulty * 1000)])
    visible = problem.make_params(rng, difficulty, True)
    hidden = [problem.make_params(rng, difficulty, False) for _ in range(HIDDEN_SETS)]
    rtol, atol = problem.tolerance(difficulty)
    tolerance = Tolerance(rtol, atol)
    own = sandbox is None
    box = sandbox or numeric_sandbox(python_workers=1)
    try:
        outputs = record_outputs(
            box,
            problem.reference,
            "solve",
            [visible, *hidden],
            time_limit_s=problem.time_limit_s,
            memory_mb=DEFAULT_MEMORY_MB,
            where=f"{problem.unit} (seed {seed})",
        )
    finally:
        if own:
            box.close()
    invariants = [dict(s) for s in problem.invariants]
    payload: dict[str, Any] = {
        "entry_point": "solve",
        "signature": DEFAULT_SIGNATURE,
        "visible": {"params": visible, "expected": outputs[0]},
        "tolerance": dict(tolerance),
        "invariants": invariants,
        "time_limit_s": problem.time_limit_s,
        "memory_mb": DEFAULT_MEMORY_MB,
        "family": problem.family,
        "structure": problem.structure,
    }
    prompt = numeric_prompt(
        problem.statement,
        DEFAULT_SIGNATURE,
        visible,
        outputs[0],
        tolerance,
        invariants,
        problem.time_limit_s,
    )
    return Task.create(
        name=f"numeric/{problem.family}-{problem.structure}-d{round(difficulty * 100)}-s{seed}-v1",
        prompt=prompt,
        domain="numeric",
        kind="numeric",
        answer_format="code",
        payload=payload,
        hidden={"reference": problem.reference, "params": hidden, "expected": outputs[1:]},
        difficulty={
            "estimate": difficulty,
            "features": {"difficulty": difficulty, **problem.features(difficulty)},
        },
        provenance={
            "source": "numeric-families",
            "generator": VERSION,
            "seed": seed,
            "unit": problem.unit,
        },
    )


def generate(family: str, count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of ``family``; ``difficulty`` None spreads them over 0, 0.1, ..., 1.
    Task ``i`` uses seed ``seed + i`` and the structure ``(seed + i) % structures``."""
    problems = problems_of(family)
    if not problems:
        raise ConfigError(f"unknown numeric family {family!r}; families: {', '.join(FAMILIES)}")
    tasks = []
    with numeric_sandbox(python_workers=1) as box:
        for i in range(count):
            s = seed + i
            d = difficulty if difficulty is not None else round((i % 11) / 10, 1)
            tasks.append(make_task(problems[s % len(problems)], difficulty=d, seed=s, sandbox=box))
    return tasks
