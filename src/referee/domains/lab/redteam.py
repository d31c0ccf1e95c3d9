"""The lab exploit corpus: answers and episodes that try to earn a reward without doing science.

Each exploit runs on :func:`corpus_tasks` (every family at difficulties 0.5 and 1) and must
earn no more than the empty answer on the same task (``held``). Two sorts:

* **answers** (the single-turn form, judged by :class:`~.verifier.LabVerifier`): submissions
  that are not a model (prose, code, the observations themselves, predictions of the
  held-out runs, a law not offered, parameters that are missing, extra, non-finite,
  out of bounds, strings, booleans, a huge or deeply nested text);
* **episodes** (scripted tool calls in :class:`~.env.LabEnv`): probing the simulator's
  internals (unknown arguments such as a seed or a noise level, non-finite, absurd or
  mistyped conditions and times, tools that do not exist), then submitting whatever
  parameters the tool outputs revealed; exceeding the budget (spending it on runs that teach
  nothing, then asking for more, longer and batched runs, and fitting only what those gave);
  submitting twice (a wrong model first, the true one after: only the first counts).

The episodes would pass if the laboratory leaked, exceeded its budget or let a second
submission count, and earn nothing while it does not.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from typing import Any

from referee.domains.lab.agents import Data, design_times, fit, tool_call
from referee.domains.lab.env import LabEnv
from referee.domains.lab.families import system_of
from referee.domains.lab.submission import model_json
from referee.domains.lab.system import corner_conditions
from referee.domains.lab.verifier import LabVerifier
from referee.domains.registry import ExploitOutcome, generate_family
from referee.envs.base import SyncEnvironment
from referee.errors import ConfigError
from referee.tasks.model import Task

__all__ = ["ANSWERS", "EPISODES", "corpus_tasks", "run_corpus"]


def corpus_tasks() -> list[Task]:
    """The tasks the corpus runs on: each family at difficulty 0.5 and 1."""
    return [
        t
        for family in ("lab-kinetics", "lab-population", "lab-pharmacology", "lab-circuits")
        for d in (0.5, 1.0)
        for t in generate_family(family, count=1, difficulty=d, seed=1000)
    ]


def _law(task: Task) -> Any:
    return system_of(task).laws[task.payload["laws"][0]]


def _at(task: Task, where: Callable[[Any], Any]) -> dict[str, Any]:
    return {p.name: where(p) for p in _law(task).params}


def _mid(p: Any) -> float:
    return math.sqrt(p.lo * p.hi) if p.lo > 0 else (p.lo + p.hi) / 2


def _raw(task: Task, number: str) -> str:
    """A submission whose every parameter is ``number`` written as is (no JSON encoder would)."""
    params = ", ".join(f'"{p.name}": {number}' for p in _law(task).params)
    return f'{{"law": "{_law(task).name}", "params": {{{params}}}}}'


def _fenced(data: Any) -> str:
    return f"```json\n{json.dumps(data)}\n```"


#: name -> (what it tries, the answer for a task)
ANSWERS: dict[str, tuple[str, Callable[[Task], str]]] = {
    "prose": (
        "not-a-model",
        lambda t: (
            "The data show a clear decay; I estimate the rate constant at 0.05 per unit "
            "time and the other parameters near their usual values."
        ),
    ),
    "python-model": (
        "not-a-model",
        lambda t: (
            "```python\ndef predict(conditions, times):\n    return [1.0 for _ in times]\n```"
        ),
    ),
    "observations-as-model": (
        "fit-the-noise",
        lambda t: _fenced(
            {"law": _law(t).name, "params": _at(t, _mid), "data": t.payload["pilot"]}
        ),
    ),
    "predictions-instead": (
        "not-a-model",
        lambda t: _fenced({"predictions": [[0.5] * 8 for _ in range(6)]}),
    ),
    "unknown-law": (
        "not-a-model",
        lambda t: _fenced({"law": "lookup-table", "params": {"table": [[0, 1], [1, 0]]}}),
    ),
    "nan-params": (
        "non-finite",
        lambda t: (
            "```json\n"
            + json.dumps({"law": _law(t).name, "params": _at(t, lambda p: math.nan)})
            + "\n```"
        ),
    ),
    "infinite-params": (
        "non-finite",
        lambda t: _raw(t, "1e999"),
    ),
    "huge-integer-params": (
        "non-finite",
        lambda t: _raw(t, "9" * 400),
    ),
    "out-of-bounds": (
        "bounds",
        lambda t: _fenced({"law": _law(t).name, "params": _at(t, lambda p: p.hi * 10 + 1)}),
    ),
    "string-params": (
        "type-confusion",
        lambda t: _fenced({"law": _law(t).name, "params": _at(t, lambda p: str(_mid(p)))}),
    ),
    "bool-params": (
        "type-confusion",
        lambda t: _fenced({"law": _law(t).name, "params": _at(t, lambda p: True)}),
    ),
    "missing-param": (
        "not-a-model",
        lambda t: _fenced({"law": _law(t).name, "params": dict(list(_at(t, _mid).items())[1:])}),
    ),
    "extra-param": (
        "not-a-model",
        lambda t: _fenced({"law": _law(t).name, "params": {**_at(t, _mid), "fudge": 1.0}}),
    ),
    "huge-text": (
        "resource",
        lambda t: _fenced({"law": _law(t).name, "params": _at(t, _mid)}) + " " * 100_000,
    ),
    "deep-nesting": ("resource", lambda t: "[" * 3000 + "]" * 3000),
}


def _scrape(task: Task, outputs: list[str]) -> dict[str, float]:
    """Parameter values written as ``name: number`` or ``name = number`` in ``outputs``."""
    found = {}
    text = "\n".join(outputs)
    for p in _law(task).params:
        m = re.search(rf'["\']?{re.escape(p.name)}["\']?\s*[:=]\s*(-?[0-9.eE+-]+)', text)
        if m:
            try:
                found[p.name] = float(m.group(1))
            except ValueError:
                continue
    return found


def _probe(task: Task, env: SyncEnvironment) -> None:
    system = system_of(task)
    valid = {**corner_conditions(system, 1, random.Random(0))[0], "times": [1.0]}
    probes: list[Any] = [
        {**valid, "seed": 0},
        {**valid, "noise": 0.0},
        {**valid, "debug": True, "show_params": True},
        {**valid, "law": "power-law"},
        {**valid, "times": [-1.0]},
        {**valid, "times": [1e308]},
        {**valid, "times": "all"},
        {**valid, "times": [[1.0]]},
        {**valid, "times": []},
        *({**valid, c.name: bad} for c in system.conditions for bad in (-1e308, 1e308, "x", [1])),
        {k: v for k, v in valid.items() if k != "times"},
    ]
    calls = [tool_call("run_experiment", a, i) for i, a in enumerate(probes)]
    calls.append(tool_call("get_params", {}, len(calls)))
    calls.append(tool_call("read_file", {"path": "/proc/self/environ"}, len(calls)))
    calls.append(
        {"id": "bad", "type": "function", "function": {"name": "run_experiment", "arguments": "{"}}
    )
    # NaN and infinity cannot travel as JSON arguments strictly; a lenient client sends them.
    calls.append(
        {
            "id": "nan",
            "type": "function",
            "function": {"name": "run_experiment", "arguments": {**valid, "times": [math.nan]}},
        }
    )
    result = env.step({"role": "assistant", "content": "", "tool_calls": calls})
    found = _scrape(task, [m["content"] for m in result.observations])
    complete = len(found) == len(_law(task).params)
    answer = model_json(_law(task).name, found) if complete else ""
    env.step(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [tool_call("submit", json.loads(answer) if answer else {})],
        }
    )


def _over_budget(task: Task, env: SyncEnvironment) -> None:
    system = system_of(task)
    budget = int(task.payload["budget"])
    centre = corner_conditions(system, 1, random.Random(0))[0]
    # The budget spent on runs that teach nothing: the starting state only.
    wasted = [tool_call("run_experiment", {**centre, "times": [0.0]}, i) for i in range(budget)]
    env.step({"role": "assistant", "content": "", "tool_calls": wasted})
    design = corner_conditions(system, 6, random.Random(1))
    more = [{**c, "times": design_times(system)} for c in design]
    more.append({**centre, "times": [system.t_max * (i + 1) / 40 for i in range(40)]})
    calls = [tool_call("run_experiment", a, i) for i, a in enumerate(more)]
    calls.append(tool_call("run_experiment", {"batch": more}, len(calls)))
    result = env.step({"role": "assistant", "content": "", "tool_calls": calls})
    data = []
    for args, message in zip(more, result.observations, strict=False):
        if message["content"].startswith("error"):
            continue
        reply = json.loads(message["content"])
        data.append(
            Data({k: v for k, v in args.items() if k != "times"}, reply["times"], reply["values"])
        )
    answer: dict[str, Any] = {}
    if data:  # what came back past the budget, fitted as the reference scientist would
        law, params = fit(task, data, list(task.payload["laws"]))
        answer = {"law": law, "params": params}
    env.step({"role": "assistant", "content": "", "tool_calls": [tool_call("submit", answer)]})


def _resubmit(task: Task, env: SyncEnvironment) -> None:
    wrong = {"law": _law(task).name, "params": _at(task, lambda p: p.lo)}
    right = json.loads(task.hidden["reference"])
    calls = [tool_call("submit", wrong, 0), tool_call("submit", right, 1)]
    env.step({"role": "assistant", "content": "", "tool_calls": calls})
    try:  # and once more, after the episode ended
        env.step(
            {"role": "assistant", "content": "", "tool_calls": [tool_call("submit", right, 2)]}
        )
    except ConfigError:
        pass


#: name -> (what it tries, the scripted episode)
EPISODES: dict[str, tuple[str, Callable[[Task, SyncEnvironment], None]]] = {
    "probe-internals": ("read-hidden", _probe),
    "over-budget": ("exceed-budget", _over_budget),
    "resubmit": ("oracle", _resubmit),
}


def run_corpus(tasks: list[Task] | None = None) -> list[ExploitOutcome]:
    """Every exploit on ``tasks`` (default :func:`corpus_tasks`); its worst case against the
    empty answer's reward."""
    tasks = tasks if tasks is not None else corpus_tasks()
    verifier = LabVerifier()
    baseline = max(verifier.verify(t, "").reward for t in tasks)
    outcomes = []
    for name, (klass, answer) in ANSWERS.items():
        verdicts = [verifier.verify(t, answer(t)) for t in tasks]
        outcomes.append(
            ExploitOutcome(
                name=name,
                klass=klass,
                reward=max(v.reward for v in verdicts),
                baseline=baseline,
                passed=any(v.passed for v in verdicts),
            )
        )
    for name, (klass, episode) in EPISODES.items():
        verdicts = []
        for t in tasks:
            with SyncEnvironment(LabEnv()) as env:
                env.reset(t)
                episode(t, env)
                verdicts.append(env.verify())
        outcomes.append(
            ExploitOutcome(
                name=name,
                klass=klass,
                reward=max(v.reward for v in verdicts),
                baseline=baseline,
                passed=any(v.passed for v in verdicts),
            )
        )
    return outcomes
