"""``LabEnv``: the multi-turn laboratory: run experiments within the budget, then submit.

Tools (their schemas are the task's: ``run_experiment`` takes the system's conditions):

* ``run_experiment(<conditions>, times)``: one noisy experiment (:class:`~.laboratory.
  Laboratory`); past the budget, or with bad arguments, refused at no cost;
* ``submit(law, params)``: the model; final (the episode ends, valid or not), and it says
  nothing of how good the model is.

A message without a tool call ends the episode too, its text read as the submission (a
```` ```json ```` block), as a single-turn answer is. ``single_turn=True`` offers no tools:
the first message is the answer, judged on the pilot data the prompt gives. Each episode
starts a fresh laboratory (budget, noise stream) on the task.

>>> import asyncio
>>> from referee.domains.lab.families import generate_population
>>> task = generate_population(1, 0.0, 0)[0]
>>> env = LabEnv()
>>> _ = asyncio.run(env.reset(task))
>>> [t["function"]["name"] for t in env.tools()]
['run_experiment', 'submit']
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from referee.domains.lab.families import system_of
from referee.domains.lab.laboratory import Laboratory, Observation
from referee.domains.lab.system import MAX_SAMPLES
from referee.domains.lab.verifier import LabVerifier
from referee.envs.answers import message_text
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.budget import Budget, BudgetState
from referee.envs.tools import function_tool, parse_tool_calls, tool_message
from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["LabEnv", "LabSnapshot", "lab_tools"]


@dataclass(frozen=True)
class LabSnapshot:
    """What :meth:`LabEnv.snapshot` captures."""

    task: Task
    observations: tuple[Observation, ...]
    refused: int
    answer: str | None
    budget: BudgetState
    done: bool
    reason: str


def lab_tools(task: Task) -> list[dict[str, Any]]:
    """The tool schemas of ``task``: its ``run_experiment`` and ``submit``."""
    system = system_of(task)
    props: dict[str, dict[str, Any]] = {}
    for c in system.conditions:
        if c.choices:
            props[c.name] = {"type": "string", "enum": list(c.choices), "description": c.doc}
        else:
            props[c.name] = {
                "type": "number",
                "description": f"{c.doc} ({c.unit}, {c.lo:g} to {c.hi:g})",
            }
    props["times"] = {
        "type": "array",
        "items": {"type": "number"},
        "description": f"when to measure: 1 to {MAX_SAMPLES} times, 0 to {system.t_max:g} "
        f"{system.time_unit}",
    }
    laws = list(task.payload["laws"])
    return [
        function_tool(
            "run_experiment",
            f"Run one experiment (budget {task.payload['budget']} in all) and measure "
            f"{system.observable} at the given times.",
            props,
        ),
        function_tool(
            "submit",
            "Submit your model, once: the law and a value for each of its parameters. Final.",
            {
                "law": {"type": "string", "enum": laws, "description": "the law"},
                "params": {
                    "type": "object",
                    "description": "each parameter of the law by name, a number within bounds",
                },
            },
        ),
    ]


class LabEnv(Environment):
    """See the module docstring."""

    name = "lab"

    def __init__(self, *, limits: EpisodeLimits | None = None, single_turn: bool = False) -> None:
        self.limits = limits or EpisodeLimits(max_turns=16)
        self.budget = Budget(self.limits)
        self.single_turn = single_turn
        self._verifier = LabVerifier()
        self._task: Task | None = None
        self._lab: Laboratory | None = None
        self._answer: str | None = None
        self._done = False
        self._reason = ""

    async def reset(self, task: Task) -> list[ChatMessage]:
        system_of(task)  # a task of another domain is refused here, not at the first step
        self._task, self._lab = task, Laboratory(task)
        self._answer, self._done, self._reason = None, False, ""
        self.budget.start()
        return [m.model_dump() for m in task.prompt]

    def tools(self) -> list[dict[str, Any]]:
        if self.single_turn or self._task is None:
            return []
        return lab_tools(self._task)

    @property
    def done(self) -> bool:
        return self._done

    @property
    def reason(self) -> str:
        return self._reason

    @property
    def laboratory(self) -> Laboratory:
        """This episode's laboratory (its observations and refusals)."""
        if self._lab is None:
            raise ConfigError("no episode is running; call reset(task) first")
        return self._lab

    def _submit(self, arguments: dict[str, Any]) -> str:
        self._answer = json.dumps(arguments)
        self._done, self._reason = True, "submitted"
        return "submitted; the episode is over"

    async def step(self, message: ChatMessage) -> StepResult:
        lab = self.laboratory
        if self._done:
            raise ConfigError(
                f"the episode is over ({self._reason}); call reset(task) to start another"
            )
        t0 = time.perf_counter()
        self.budget.charge(message)
        calls = [] if self.single_turn else parse_tool_calls(message)
        schemas = {t["function"]["name"]: t for t in self.tools()}
        observations: list[ChatMessage] = []
        ran = refused = 0
        for call in calls:
            if self._done:
                content = "error: the model is submitted already; the episode is over"
            elif call.error:
                content = f"error: {call.error}"
            elif call.name not in schemas:
                content = f"error: unknown tool {call.name[:40]!r} (tools: run_experiment, submit)"
            elif call.name == "submit":
                # Final whatever it holds: a second try would turn the judge into an oracle.
                content = self._submit(call.arguments)
            else:
                # The laboratory checks run_experiment's arguments itself, and says why.
                ok, content = lab.run(call.arguments)
                ran += ok
                refused += not ok
                content = content if ok else f"error: {content}"
            observations.append(tool_message(call, content))
        if not calls:
            self._answer = message_text(message)
            self._done, self._reason = True, "answered"
        elif not self._done and (limit := self.budget.exceeded()):
            self._done, self._reason = True, limit
        return StepResult(
            observations=observations,
            done=self._done,
            reason=self._reason,
            metrics={
                "tool_calls": float(len(calls)),
                "experiments": float(ran),
                "refused": float(refused),
                "budget_left": float(lab.budget_left),
                "env_s": time.perf_counter() - t0,
                "turn": float(self.budget.turns),
            },
        )

    async def verify(self) -> Verdict:
        if self._task is None:
            raise ConfigError("no episode is running; call reset(task) first")
        return self._verifier.verify(self._task, self._answer or "")

    async def snapshot(self) -> LabSnapshot:
        """The whole episode: its task, experiments, refusals, answer and counters."""
        lab = self.laboratory
        assert self._task is not None
        return LabSnapshot(
            self._task,
            tuple(lab.observations),
            lab.refused,
            self._answer,
            self.budget.state(),
            self._done,
            self._reason,
        )

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, LabSnapshot):
            raise ConfigError("LabEnv.restore takes what LabEnv.snapshot returned")
        await self.reset(snapshot.task)
        lab = self.laboratory
        # The k-th experiment's noise follows from k: the restored episode goes on as it would.
        lab.observations, lab.refused = list(snapshot.observations), snapshot.refused
        self._answer, self._done, self._reason = snapshot.answer, snapshot.done, snapshot.reason
        self.budget.restore(snapshot.budget)

    async def close(self) -> None:
        """Nothing to release: the laboratory lives in this process."""
