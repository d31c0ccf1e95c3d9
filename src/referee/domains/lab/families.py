"""The lab families: ``lab-kinetics``, ``lab-population``, ``lab-pharmacology``,
``lab-circuits``.

Task ``i`` of ``generate(count, difficulty, seed)`` draws, from seed ``seed + i``, the hidden
law and parameters (:meth:`~.system.System.draw_truth`), the noise seed of its experiments,
two pilot experiments (their noisy results are in the prompt: the single-turn form's data)
and :data:`HOLDOUT` held-out queries (conditions and times, beyond the experimental ranges as
difficulty rises). The payload holds what the agent is told; ``hidden`` what only the judge
and the laboratory read (:mod:`.laboratory`), with the reference answer: the true model.

>>> task = generate_population(1, 0.0, 7)[0]
>>> task.kind.value, task.payload["budget"], task.payload["laws"] == ["logistic"]
('lab', 8, True)
>>> sorted(task.hidden)
['holdout', 'law', 'noise_seed', 'params', 'reference', 'tolerance']
"""

from __future__ import annotations

import random
from typing import Any

from referee.domains.lab.circuits import CIRCUITS
from referee.domains.lab.kinetics import KINETICS
from referee.domains.lab.pharmacology import PHARMACOLOGY
from referee.domains.lab.population import POPULATION
from referee.domains.lab.submission import model_json
from referee.domains.lab.system import MAX_SAMPLES, Settings, System, Truth
from referee.errors import ConfigError
from referee.tasks.model import Task

__all__ = [
    "HOLDOUT",
    "KIND",
    "PILOT",
    "SYSTEMS",
    "TOLERANCE",
    "generate_circuits",
    "generate_kinetics",
    "generate_pharmacology",
    "generate_population",
    "make_task",
    "pilot_times",
    "system_of",
]

KIND = "lab"
VERSION = "lab-families@1"
#: Held-out queries per task, pilot experiments in the prompt.
HOLDOUT = 6
PILOT = 2
#: A query passes when the model's prediction is within this normalised RMS error.
TOLERANCE = 0.05

SYSTEMS: dict[str, System] = {s.name: s for s in (KINETICS, POPULATION, PHARMACOLOGY, CIRCUITS)}


def system_of(task: Task) -> System:
    """The system a lab task studies (a :class:`ConfigError` for a task that names none)."""
    name = task.payload.get("system")
    if name not in SYSTEMS:
        raise ConfigError(f"task {task.id!r} names no lab system (payload.system = {name!r})")
    return SYSTEMS[str(name)]


def pilot_times(system: System, horizon: float | None = None) -> list[float]:
    """Eight times spread evenly over ``(0, horizon]`` (default: the system's ``t_max``)."""
    end = system.t_max if horizon is None else horizon
    return [round(end * (i + 1) / MAX_SAMPLES, 4) for i in range(MAX_SAMPLES)]


def _window(system: System, truth: Truth, conditions: dict[str, Any], horizon: float) -> float:
    """How long a held-out query samples: until its true course has settled (within 5 % of
    its range of its final value) and half as long again, within ``horizon``. A query whose
    course is over in a millisecond is sampled while it moves, not over a long settled tail
    that any model settling to the same value matches. Settling is found on a geometric grid
    from ``horizon / 10^4``, fine where courses are fast."""
    grid = [horizon * 10 ** (-4 + 4 * i / 299) for i in range(300)]
    values = system.simulate(truth.law, truth.params, conditions, [0.0, *grid])
    final = values[-1]
    span = max(values) - min(values) or 1.0
    settled = grid[0]
    for t, v in zip(grid, values[1:], strict=True):
        if abs(v - final) > 0.05 * span:
            settled = t
    return min(horizon, 1.5 * settled)


def _laws_public(system: System, names: list[str]) -> dict[str, Any]:
    return {
        name: {
            "formula": system.laws[name].formula,
            "params": [
                {"name": p.name, "unit": p.unit, "lo": p.lo, "hi": p.hi, "doc": p.doc}
                for p in system.laws[name].params
            ],
        }
        for name in names
    }


def _prompt(system: System, settings: Settings, payload: dict[str, Any]) -> str:
    laws = payload["laws"]
    law_lines = []
    for name in payload["laws"]:
        law = system.laws[name]
        law_lines.append(f"- {name}: {law.formula}")
        law_lines += [f"    {p.describe()}" for p in law.params]
    which = (
        f"The system follows the law {laws[0]}; its parameters are unknown."
        if len(laws) == 1
        else "The system follows ONE of these laws (which one is unknown), with unknown parameters."
    )
    pilot = "\n".join(
        f"- {p['conditions']}: times {p['times']} -> {system.observable.split(',')[0]} "
        f"{p['values']}"
        for p in payload["pilot"]
    )
    conditions = "\n".join(f"- {c.describe()}" for c in system.conditions)
    example_law = system.laws[laws[0]]
    example = model_json(example_law.name, {p.name: p.lo for p in example_law.params})
    return (
        f"You are running a laboratory study. {system.story}\n\n"
        f"{which}\n" + "\n".join(law_lines) + "\n\n"
        f"An experiment sets these conditions:\n{conditions}\n"
        f"and measures {system.observable} at up to {MAX_SAMPLES} times between 0 and "
        f"{system.t_max:g} {system.time_unit}. Measurements are noisy: about "
        f"{settings.noise:.0%} relative noise plus an absolute noise of about "
        f"{system.floor:g}. Each experiment is a fresh run with fresh noise.\n\n"
        f"Two pilot experiments were run already:\n{pilot}\n\n"
        f"You may run {settings.budget} more experiments with the run_experiment tool (one "
        f"call per experiment; calls past the budget are refused). Then submit your model "
        f"with the submit tool, or as a final message with one ```json block, e.g.\n"
        f"{example}\n(the law's name and every one of its parameters, within their bounds). "
        f"Your model is judged on its predictions of {system.observable.split(',')[0]} for "
        f"held-out experiments you do not see"
        + (
            ", some of them outside the experimental ranges (larger, longer, further)."
            if settings.reach > 0
            else "."
        )
        + " Each is sampled at 8 evenly spaced times over the part of its run where "
        f"{system.observable.split(',')[0]} still changes; a prediction counts when its RMS "
        f"error over them is within {TOLERANCE:.0%} of that experiment's largest true value."
    )


def make_task(system: System, difficulty: float, seed: int) -> Task:
    """One task of ``system`` at ``difficulty`` (0..1) from ``seed``."""
    settings = Settings.at(difficulty)
    rng = random.Random(f"lab:{system.name}:{seed}:{round(settings.difficulty * 1000)}")
    truth = system.draw_truth(rng, settings)
    noise_seed = f"{rng.getrandbits(64):016x}"
    times = pilot_times(system)
    pilot = []
    for j in range(PILOT):
        conditions = {
            c.name: rng.choice(c.choices) if c.choices else round(rng.uniform(c.lo, c.hi), 2)
            for c in system.conditions
        }
        true = system.simulate(truth.law, truth.params, conditions, times)
        values = system.noisy(true, settings.noise, random.Random(f"{noise_seed}:pilot:{j}"))
        pilot.append({"conditions": conditions, "times": times, "values": values})
    holdout = []
    for _ in range(HOLDOUT):
        conditions = system.extrapolate(rng, settings.reach)
        window = _window(system, truth, conditions, system.horizon(settings.reach))
        holdout.append({"conditions": conditions, "times": pilot_times(system, window)})
    offered = system.law_names(settings)
    payload: dict[str, Any] = {
        "system": system.name,
        "laws": offered,
        "law_details": _laws_public(system, offered),
        "conditions": [c.describe() for c in system.conditions],
        "t_max": system.t_max,
        "time_unit": system.time_unit,
        "budget": settings.budget,
        "max_samples": MAX_SAMPLES,
        "noise": settings.noise,
        "floor": system.floor,
        "pilot": pilot,
        "tolerance": TOLERANCE,
    }
    d = round(settings.difficulty * 100)
    return Task.create(
        name=f"lab/{system.name}-d{d}-s{seed}-v1",
        prompt=_prompt(system, settings, payload),
        domain="lab",
        kind=KIND,
        answer_format="text",
        payload=payload,
        hidden={
            "law": truth.law,
            "params": truth.params,
            "noise_seed": noise_seed,
            "holdout": holdout,
            "tolerance": TOLERANCE,
            "reference": model_json(truth.law, truth.params),
        },
        difficulty={
            "estimate": settings.difficulty,
            "features": {
                "budget": float(settings.budget),
                "noise": settings.noise,
                "reach": settings.reach,
                "laws": float(len(offered)),
            },
        },
        provenance={
            "source": f"lab-{system.name}",
            "generator": VERSION,
            "seed": seed,
            "unit": f"lab-{system.name}",
        },
    )


def _generator(system: System) -> Any:
    def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
        return [
            make_task(system, difficulty if difficulty is not None else (i % 11) / 10, seed + i)
            for i in range(count)
        ]

    generate.__doc__ = f"``count`` lab-{system.name} tasks (difficulty None: 0, 0.1, ..., 1)."
    return generate


generate_kinetics = _generator(KINETICS)
generate_population = _generator(POPULATION)
generate_pharmacology = _generator(PHARMACOLOGY)
generate_circuits = _generator(CIRCUITS)
