"""referee inside rLLM: dataset rows, a reward function, an evaluator and a workflow.

rLLM (``rllm-org/rllm`` 0.3.0.pre, commit ``9beb6e0f676a46d38858991fd79ac5f8e0b16d4c``) is **not
on the package index here**: this module is written against its published signatures, recorded
in ``tests/trainers/fixtures/signatures/rllm.json``, and tested through a recorded-signature
stand-in (``tests/train/standins/rllm_standin.py``), never against the package itself.

* :func:`rllm_row`: a dataset row (``DatasetRegistry.register_dataset(name, rows, split)``):
  ``question``, ``messages``, and the task id as ``ground_truth`` and ``task_id``; never the
  task's hidden tests.
* :class:`RefereeReward`: a ``RewardFunction`` (``__call__(task_info: dict, action: str) ->
  RewardOutput``): the task from the row (:func:`referee.train.lookup.resolve_task`), the action
  judged as referee's single-turn environment reads a text answer.
* :class:`RefereeEvaluator`: an ``Evaluator`` (``evaluate(task, episode) -> EvalOutput``): judges
  the episode's final text (the last trajectory's ``output``, else its last step's ``action``,
  else that step's ``output``), with one ``Signal`` per verdict number.
* ``RefereeWorkflow`` (:func:`workflow_class`): a ``Workflow`` (``async run(task, uid) ->
  Episode``) running a :class:`~referee.train.skyrl.TextEpisode` over referee's ``CodeEnv``: it
  asks ``rollout_engine.get_model_response(messages)`` for the model's turn (its ``text``, else
  ``content``), single-turn or with ``<tool_call>`` tools, and returns an ``Episode`` with one
  ``Trajectory`` whose steps carry the rewards (the verifier's on the last).

Types: when rLLM is installed these return rLLM's own classes (``rllm.rewards.reward_types
.RewardOutput``, ``rllm.eval.types.EvalOutput``/``Signal``, ``rllm.types.Episode``/
``Trajectory``/``Step``) and ``RefereeWorkflow`` subclasses ``rllm.workflows.workflow
.Workflow``; otherwise they return this module's plain dataclasses with the same field names
(:class:`RewardResult`, :class:`EvalResult`, ...), which duck-type for code that reads fields.
The rLLM classes are looked up at each call, so installing rLLM later needs no other change.

Held-out tasks are refused (:class:`~referee.errors.ConfigError`) unless ``allow_heldout=True``
(for evaluation); a task that is not found is a ``ConfigError``, never a reward of 0; an
infrastructure failure of the verifier (after 2 retries) raises.

What a user writes (rLLM's trainer)::

    from referee.train.rllm import RefereeReward, workflow_class
    trainer = AgentTrainer(workflow_class=workflow_class(),
                           workflow_args={"tasks": "/data/tasks.jsonl", "max_turns": 1}, ...)
    # or, for rLLM's reward-function agents: reward_fn=RefereeReward(tasks="/data/tasks.jsonl")
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.tasks.model import Task
from referee.train.lookup import TaskSource, check_split, resolve_task, score_text
from referee.train.skyrl import TextEpisode
from referee.verify.verdict import Verdict

__all__ = [
    "EpisodeResult",
    "EvalResult",
    "RefereeEvaluator",
    "RefereeReward",
    "RewardResult",
    "SignalResult",
    "StepResult",
    "TrajectoryResult",
    "rllm_row",
    "rllm_type",
    "workflow_class",
]


def rllm_row(task: Task, index: int = 0) -> dict[str, Any]:
    """One rLLM dataset row for ``task``: the prompt as ``question`` (and as ``messages``), the
    task id as ``ground_truth``."""
    user = [m.content for m in task.prompt if m.role == "user"]
    return {
        "question": "\n\n".join(user),
        "messages": [m.model_dump() for m in task.prompt],
        "ground_truth": task.id,
        "data_source": f"referee/{task.domain}",
        "task_id": task.id,
        "split": task.split,
        "index": index,
    }


# ---- the plain stand-ins for rLLM's types when rLLM is not installed ---------------------------
@dataclass(kw_only=True)
class RewardResult:
    """``rllm.rewards.reward_types.RewardOutput``'s fields."""

    reward: float
    metadata: dict[str, Any] = field(default_factory=dict)
    is_correct: bool | None = None


@dataclass
class SignalResult:
    """``rllm.eval.types.Signal``'s fields."""

    name: str
    value: float
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvalResult:
    """``rllm.eval.types.EvalOutput``'s fields."""

    reward: float
    is_correct: bool
    signals: list[Any] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class StepResult:
    """``rllm.types.Step``'s fields that referee fills."""

    input: Any = None
    output: Any = None
    action: Any = None
    reward: float = 0.0
    done: bool = False
    metadata: dict[str, Any] | None = None


@dataclass(kw_only=True)
class TrajectoryResult:
    """``rllm.types.Trajectory``'s fields that referee fills."""

    name: str = "default"
    task: Any = None
    steps: list[Any] = field(default_factory=list)
    reward: float | None = None
    output: Any = None
    signals: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None


@dataclass(kw_only=True)
class EpisodeResult:
    """``rllm.types.Episode``'s fields that referee fills."""

    id: str = ""
    task: Any = None
    is_correct: bool = False
    trajectories: list[Any] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


_RLLM: dict[str, tuple[str, type]] = {
    "RewardOutput": ("rllm.rewards.reward_types", RewardResult),
    "EvalOutput": ("rllm.eval.types", EvalResult),
    "Signal": ("rllm.eval.types", SignalResult),
    "Episode": ("rllm.types", EpisodeResult),
    "Trajectory": ("rllm.types", TrajectoryResult),
    "Step": ("rllm.types", StepResult),
}


def rllm_type(name: str) -> type:
    """rLLM's class ``name`` (``RewardOutput``, ``EvalOutput``, ``Signal``, ``Episode``,
    ``Trajectory``, ``Step``) when rLLM is installed, else referee's plain dataclass for it."""
    module, fallback = _RLLM[name]
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return fallback
    return found if isinstance(found, type) else fallback


def _signals(verdict: Verdict) -> list[Any]:
    signal = rllm_type("Signal")
    return [
        signal(name="passed", value=float(verdict.passed)),
        signal(name="reward", value=float(verdict.reward)),
    ]


class RefereeReward:
    """An rLLM ``RewardFunction``: ``reward_fn(task_info, action) -> RewardOutput``."""

    def __init__(self, tasks: TaskSource = None, *, allow_heldout: bool = False) -> None:
        self.tasks = tasks
        self.allow_heldout = allow_heldout

    def __call__(self, task_info: dict[str, Any], action: str) -> Any:
        task = resolve_task(task_info, self.tasks)
        check_split(task, allow_heldout=self.allow_heldout)
        verdict = score_text(task, action if isinstance(action, str) else str(action or ""))
        return rllm_type("RewardOutput")(
            reward=float(verdict.reward),
            is_correct=bool(verdict.passed),
            metadata={"task_id": task.id},
        )


def final_text(episode: Any) -> str:
    """The episode's final model text: the last trajectory's ``output``, else its last step's
    ``action``, else that step's ``output`` ("" if none is a string)."""
    for traj in reversed(list(getattr(episode, "trajectories", None) or [])):
        steps = list(getattr(traj, "steps", None) or [])
        last = steps[-1] if steps else None
        for value in (
            getattr(traj, "output", None),
            getattr(last, "action", None),
            getattr(last, "output", None),
        ):
            if isinstance(value, str):
                return value
    return ""


class RefereeEvaluator:
    """An rLLM ``Evaluator``: ``evaluate(task, episode) -> EvalOutput`` on the final text."""

    def __init__(self, tasks: TaskSource = None, *, allow_heldout: bool = False) -> None:
        self.tasks = tasks
        self.allow_heldout = allow_heldout

    def evaluate(self, task: Any, episode: Any) -> Any:
        row = task if isinstance(task, Mapping) else {"task_id": str(task)}
        found = resolve_task(row, self.tasks)
        check_split(found, allow_heldout=self.allow_heldout)
        verdict = score_text(found, final_text(episode))
        return rllm_type("EvalOutput")(
            reward=float(verdict.reward),
            is_correct=bool(verdict.passed),
            signals=_signals(verdict),
            metadata={"task_id": found.id},
        )


class _PlainWorkflow:
    """rLLM's ``Workflow.__init__`` signature, for when rLLM is not installed."""

    def __init__(
        self,
        rollout_engine: Any,
        executor: Any = None,
        timeout: float = 1e6,
        gamma: float = 0.0,
        reward_bonus_coeff: float = 0.0,
        store: Any = None,
        **kwargs: Any,
    ) -> None:
        self.rollout_engine = rollout_engine
        self.executor = executor
        self.timeout = timeout


def _model_text(output: Any) -> str:
    for name in ("text", "content"):
        value = getattr(output, name, None)
        if isinstance(value, str):
            return value
    if isinstance(output, str):
        return output
    raise TypeError(f"the rollout engine's reply has no text: {type(output).__name__}")


class _RefereeWorkflowMixin:
    rollout_engine: Any

    def _referee_init(
        self,
        tasks: TaskSource,
        multi_turn: bool | None,
        allow_heldout: bool,
        max_turns: int,
    ) -> None:
        self.referee_tasks = tasks
        self.multi_turn = multi_turn
        self.allow_heldout = allow_heldout
        self.max_turns = max_turns

    async def run(self, task: dict[str, Any], uid: str, **kwargs: Any) -> Any:
        row = {**task, "max_turns": self.max_turns}
        episode = TextEpisode(
            row,
            tasks=self.referee_tasks,
            multi_turn=self.multi_turn,
            allow_heldout=self.allow_heldout,
        )
        step_type, traj_type, ep_type = (rllm_type(n) for n in ("Step", "Trajectory", "Episode"))
        prompt = [m.model_dump() for m in episode.task.prompt]
        messages, _ = await asyncio.to_thread(episode.init, prompt)
        messages = list(messages)
        steps: list[Any] = []
        text = ""
        try:
            done = False
            while not done:
                text = _model_text(await self.rollout_engine.get_model_response(list(messages)))
                obs, reward, done, meta = await asyncio.to_thread(episode.step, text)
                steps.append(
                    step_type(
                        input=list(messages),
                        output=text,
                        action=text,
                        reward=float(reward),
                        done=done,
                        metadata=dict(meta),
                    )
                )
                messages += [{"role": "assistant", "content": text}, *obs]
        finally:
            await asyncio.to_thread(episode.close)
        trajectory = traj_type(
            name="referee",
            task=task,
            steps=steps,
            reward=episode.reward,
            output=text,
            metadata={"task_id": episode.task.id},
        )
        return ep_type(
            id=uid,
            task=task,
            is_correct=episode.passed,
            trajectories=[trajectory],
            metrics=episode.metrics(),
            metadata={"task_id": episode.task.id},
        )


_class_lock = threading.Lock()
_workflow_classes: dict[type, type] = {}


def workflow_class() -> type:
    """``RefereeWorkflow``: a subclass of rLLM's ``Workflow`` when rLLM is installed (else of a
    plain class with its constructor). Options come as keyword arguments (rLLM's
    ``workflow_args``): ``tasks``, ``multi_turn``, ``allow_heldout``, ``max_turns`` (default 1)."""
    try:
        base: type = importlib.import_module("rllm.workflows.workflow").Workflow
    except (ImportError, AttributeError):
        base = _PlainWorkflow
    with _class_lock:
        made = _workflow_classes.get(base)
        if made is not None:
            return made

        class RefereeWorkflow(_RefereeWorkflowMixin, base):  # type: ignore[misc]
            """referee's environment as an rLLM workflow (:mod:`referee.train.rllm`)."""

            def __init__(
                self,
                rollout_engine: Any,
                executor: Any = None,
                *,
                tasks: TaskSource = None,
                multi_turn: bool | None = None,
                allow_heldout: bool = False,
                max_turns: int = 1,
                **kwargs: Any,
            ) -> None:
                super().__init__(rollout_engine, executor, **kwargs)
                self.rollout_engine = rollout_engine
                self._referee_init(tasks, multi_turn, allow_heldout, max_turns)

        RefereeWorkflow.__module__ = __name__
        _workflow_classes[base] = RefereeWorkflow
        return RefereeWorkflow


def __getattr__(name: str) -> Any:
    if name == "RefereeWorkflow":
        return workflow_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
