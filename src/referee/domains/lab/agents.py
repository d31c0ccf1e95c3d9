"""Scripted agents for the laboratory: the reference scientist and the baselines it beats.

They play the ``lab`` environment through its tools, as a model would, and serve the tests
and ``bench/lab_domain.py``:

* ``gold``: spends the whole budget on a design that spans the experimental box (its corners
  first, :func:`~.system.corner_conditions`; eight sample times spread geometrically from
  the system's ``design_start`` to the end of the run), fits every candidate law to all its
  data and the pilot's by weighted least squares (scipy, several starts, parameters on a log
  scale where positive), keeps the law with the lowest Bayesian information criterion, and
  submits it;
* ``naive``: one experiment at the centre of the box, then the first law offered (the
  simplest) fitted to that and the pilot data;
* ``pilot``: no experiment; every law fitted to the pilot data (what a single-turn answer
  can know);
* ``prior``: no experiment; the first law at the geometric centre of its public bounds.

Fitting needs numpy and scipy (``pip install 'referee[numeric]'``); the judge does not.

>>> from referee.domains.lab.families import generate_population       # doctest: +SKIP
>>> play(generate_population(1, 0.0, 0)[0], "gold").passed             # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

from referee.domains.lab.env import LabEnv
from referee.domains.lab.families import system_of
from referee.domains.lab.submission import model_json
from referee.domains.lab.system import MAX_SAMPLES, System, corner_conditions
from referee.envs.base import SyncEnvironment
from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["AGENTS", "Data", "design_times", "fit", "play", "tool_call"]

#: The scripted agents by name.
AGENTS = ("gold", "naive", "pilot", "prior")


@dataclass(frozen=True)
class Data:
    """One experiment's results, as the agent read them."""

    conditions: dict[str, Any]
    times: list[float]
    values: list[float]


def design_times(system: System) -> list[float]:
    """Eight times spread geometrically from ``t_max * design_start`` to ``t_max``: fast and
    slow phases both sampled."""
    start = system.design_start
    return [
        round(system.t_max * start ** ((MAX_SAMPLES - 1 - i) / (MAX_SAMPLES - 1)), 5)
        for i in range(MAX_SAMPLES)
    ]


def _centre(system: System) -> dict[str, Any]:
    return {c.name: c.choices[-1] if c.choices else (c.lo + c.hi) / 2 for c in system.conditions}


def fit(
    task: Task, data: list[Data], laws: list[str], *, starts: int = 6, seed: int = 0
) -> tuple[str, dict[str, float]]:
    """The best of ``laws`` fitted to ``data`` (weighted least squares, the lowest BIC)."""
    import numpy as np
    from scipy.optimize import least_squares  # type: ignore[import-untyped]

    system = system_of(task)
    noise, floor = float(task.payload["noise"]), system.floor
    observed = np.array([v for d in data for v in d.values])
    sigma = np.sqrt((noise * observed) ** 2 + floor**2)  # the noise model of System.noisy
    rng = random.Random(seed)
    best: tuple[float, str, dict[str, float]] | None = None
    for law_name in laws:
        params = system.laws[law_name].params
        logs = [p.lo > 0 for p in params]
        lo = np.array([math.log(p.lo) if lg else p.lo for p, lg in zip(params, logs, strict=True)])
        hi = np.array([math.log(p.hi) if lg else p.hi for p, lg in zip(params, logs, strict=True)])

        def unpack(x: Any, params: Any = params, logs: list[bool] = logs) -> dict[str, float]:
            return {
                p.name: float(math.exp(v) if lg else v)
                for p, v, lg in zip(params, x, logs, strict=True)
            }

        def residuals(x: Any, law_name: str = law_name, unpack: Any = unpack) -> Any:
            values = unpack(x)
            predicted = [
                y for d in data for y in system.simulate(law_name, values, d.conditions, d.times)
            ]
            r = (np.array(predicted) - observed) / sigma
            return np.where(np.isfinite(r), r, 1e6)

        for _ in range(starts):
            x0 = np.array([rng.uniform(a, b) for a, b in zip(lo, hi, strict=True)])
            try:
                result = least_squares(residuals, x0, bounds=(lo, hi), max_nfev=200)
            except ValueError:
                continue
            chi2 = float(np.sum(result.fun**2))
            bic = chi2 + len(params) * math.log(len(observed))
            if best is None or bic < best[0]:
                best = (bic, law_name, unpack(result.x))
    if best is None:
        raise ConfigError("no law could be fitted")
    return best[1], best[2]


def tool_call(name: str, arguments: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """One tool call as a chat API writes it in an assistant message."""
    return {
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _pilot(task: Task) -> list[Data]:
    return [Data(p["conditions"], p["times"], p["values"]) for p in task.payload["pilot"]]


def _experiments(task: Task, agent: str) -> list[dict[str, Any]]:
    system = system_of(task)
    if agent == "gold":
        budget = int(task.payload["budget"])
        designs = corner_conditions(system, budget, random.Random(task.id))
        return [{**c, "times": design_times(system)} for c in designs]
    if agent == "naive":
        return [{**_centre(system), "times": design_times(system)}]
    return []


def _answer(task: Task, agent: str, data: list[Data]) -> str:
    system = system_of(task)
    laws = list(task.payload["laws"])
    if agent == "prior":
        law = system.laws[laws[0]]
        return model_json(
            law.name,
            {p.name: math.sqrt(p.lo * p.hi) if p.lo > 0 else (p.lo + p.hi) / 2 for p in law.params},
        )
    chosen, params = fit(task, data, laws if agent in ("gold", "pilot") else laws[:1])
    return model_json(chosen, params)


def play(task: Task, agent: str, env: LabEnv | None = None) -> Verdict:
    """One episode of the scripted ``agent`` on ``task`` in the ``lab`` environment (a fresh
    one unless ``env`` is given): its verdict."""
    if agent not in AGENTS:
        raise ConfigError(f"unknown lab agent {agent!r}; choose one of {', '.join(AGENTS)}")
    with SyncEnvironment(env or LabEnv()) as sync:
        sync.reset(task)
        data = _pilot(task)
        runs = _experiments(task, agent)
        if runs:
            calls = [tool_call("run_experiment", r, i) for i, r in enumerate(runs)]
            result = sync.step({"role": "assistant", "content": "", "tool_calls": calls})
            for run, message in zip(runs, result.observations, strict=True):
                reply = json.loads(message["content"])
                conditions = {k: v for k, v in run.items() if k != "times"}
                data.append(Data(conditions, reply["times"], reply["values"]))
        answer = json.loads(_answer(task, agent, data))
        sync.step({"role": "assistant", "content": "", "tool_calls": [tool_call("submit", answer)]})
        return sync.verify()
