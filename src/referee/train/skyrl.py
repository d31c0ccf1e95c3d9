"""referee inside SkyRL: a ``BaseTextEnv`` registered as ``referee`` (and ``referee-eval``).

Written against ``skyrl-gym`` 0.4.0 and the SkyRL 0.4.0 generator
(``skyrl/train/generators/skyrl_gym_generator.py``), checked by
``tests/trainers/test_skyrl_contract.py`` in the ``skyrl-gym`` venv.

A user's entrypoint registers the environments before the trainer makes any::

    from referee.train.skyrl import register
    register(tasks="/data/tasks.jsonl")      # or set REFEREE_TASKS; before the experiment starts

and trains on rows with ``env_class: referee`` (:func:`skyrl_row`; ``referee export --format
skyrl``): ``environment.env_class=referee``, ``generator.max_turns=N`` (1: single-turn).
Every column but ``prompt`` and ``env_class`` reaches the environment as ``extras``; it finds
the task id in ``reward_spec.ground_truth`` / ``extra_info.task_id``
(:func:`referee.train.lookup.resolve_task`) and the task in the task file.

* **Single-turn** (function tasks, by default): the model's text is the answer, read by
  :func:`referee.envs.answers.text_answer` (the last ```python block, else the text; end-of-turn
  tokens dropped); ``step`` returns the verifier's reward and ``done``.
* **Multi-turn** (repository and domain tasks by default; ``multi_turn=True`` for all):
  referee's :class:`~referee.envs.code.CodeEnv` with its six tools, or for a domain's task
  (sql, numeric, shell, toolworld, verilog) its domain's environment (``make_env(KIND)``).
  ``init`` returns the environment's first messages with the tools offered in the system
  message; the model calls them in its text as
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (the Hermes/Qwen format,
  :mod:`referee.train.text_actions`); their results come back as one user message of
  ``<tool_response>`` blocks. The reward is 0 until the episode ends (``submit``, a final answer,
  or ``generator.max_turns``), then the verifier's reward on the submission (or the workspace).

Held-out tasks: ``referee`` refuses them (:class:`~referee.errors.ConfigError` from the
environment's constructor); ``referee-eval`` (registered alongside, ``allow_heldout=True``) takes
them, and :func:`skyrl_row` names it for held-out tasks, so an evaluation file works unchanged.

Failures: an infrastructure failure of the verifier (after 2 retries) **raises** from ``step``.
SkyRL 0.4.0's ``agent_loop`` has no ``except`` around env calls (only a ``finally`` releasing the
inference session), so the exception propagates out of ``generate`` and stops the training step
with the error, rather than training on a reward that judged nothing. What the model did wrong is
a 0 reward or an observation, never an exception.

Threads: SkyRL runs ``init``/``step``/``close`` in a pool of ``max_env_workers`` (32) threads. All
environments of a process share one :func:`~referee.train.lookup.shared_runtime` (thread-safe) and
one background event loop for the async CodeEnv; a hung candidate is bounded by the verifier's
deadline (``REFEREE_REWARD_DEADLINE_S``), so it holds a pool thread at most that long.

The class is made on first use (``RefereeEnv`` is a lazy module attribute, which
``skyrl_gym``'s ``register(entry_point="referee.train.skyrl:RefereeEnv")`` resolves with
``getattr``), so this module imports without ``skyrl_gym``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from referee.envs.base import ChatMessage, EpisodeLimits
from referee.errors import ConfigError, VerifierError
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.train.lookup import (
    TaskSource,
    check_split,
    resolve_task,
    run_sync,
    score_text,
    task_env,
)
from referee.train.text_actions import observation_text, parse_text_action, tools_prompt
from referee.verify.verdict import Verdict

__all__ = ["ENTRY_POINT", "TextEpisode", "env_class", "register", "skyrl_row"]

ENTRY_POINT = "referee.train.skyrl:RefereeEnv"
_INFRA_RETRIES = 2
#: Kinds answered in one turn by default (no tools): functions and whole programs.
_SINGLE_TURN = (TaskKind.FUNCTION, TaskKind.PROGRAM)


def skyrl_row(task: Task, index: int = 0, *, env_class: str | None = None) -> dict[str, Any]:
    """One SkyRL dataset row for ``task`` (the shape ``referee export --format skyrl`` writes):
    the prompt, ``env_class`` (``referee``; ``referee-eval`` for a held-out task), and the task id
    in ``reward_spec.ground_truth`` and ``extra_info``. Never the task's hidden data."""
    return {
        "data_source": f"referee/{task.domain}",
        "prompt": [m.model_dump() for m in task.prompt],
        "env_class": env_class or ("referee" if task.split == "train" else "referee-eval"),
        "reward_spec": {"method": "rule", "ground_truth": task.id},
        "extra_info": {"index": index, "task_id": task.id, "split": task.split},
    }


class TextEpisode:
    """The trainer-neutral part of the environment: one episode on one task, driven by the
    model's raw text. ``extras`` is SkyRL's (the row's columns, and ``max_turns``)."""

    def __init__(
        self,
        extras: Mapping[str, Any],
        *,
        tasks: TaskSource = None,
        multi_turn: bool | None = None,
        allow_heldout: bool = False,
        step_timeout_s: float = 30.0,
        episode_timeout_s: float = 600.0,
    ) -> None:
        self.task = resolve_task(extras, tasks)
        check_split(self.task, allow_heldout=allow_heldout)
        self.max_turns = max(1, int(extras.get("max_turns", 1)))
        self.multi_turn = self.task.kind not in _SINGLE_TURN if multi_turn is None else multi_turn
        self.limits = EpisodeLimits(
            max_turns=self.max_turns,
            step_timeout_s=step_timeout_s,
            episode_timeout_s=episode_timeout_s,
        )
        self.turns = 0
        self.done = False
        self.reward = 0.0
        self.passed = False
        self._env: Any = None  # the task's environment (lookup.task_env), multi-turn only

    def init(self, prompt: list[ChatMessage]) -> tuple[list[ChatMessage], dict[str, Any]]:
        meta = {"task_id": self.task.id, "multi_turn": self.multi_turn}
        if not self.multi_turn:
            return prompt, meta
        # CodeEnv for a code task; a domain's task (sql, shell, toolworld, ...) in its domain's
        # environment, registered under its kind's name (CodeEnv refuses it).
        self._env = task_env(self.task, limits=self.limits, single_turn=False)
        messages = run_sync(self._env.reset(self.task))
        offer = tools_prompt(self._env.tools())
        if messages and messages[0].get("role") == "system":
            first = dict(messages[0])
            first["content"] = f"{first.get('content') or ''}\n\n{offer}".lstrip()
            messages = [first, *messages[1:]]
        else:
            messages = [{"role": "system", "content": offer}, *messages]
        return messages, meta

    def step(self, text: str) -> tuple[list[ChatMessage], float, bool, dict[str, Any]]:
        """(observations, reward, done, metadata) after the model's ``text``."""
        if self.done:
            raise ConfigError("the episode is over; SkyRL makes a new environment per episode")
        self.turns += 1
        if not self.multi_turn:
            verdict = score_text(self.task, text, retries=_INFRA_RETRIES)
            return self._finish(verdict.reward, verdict.passed, "answered")
        if self._env is None:
            raise ConfigError("init(prompt) must come before step(action)")
        result = run_sync(self._env.step(parse_text_action(text)))
        if not result.done:
            obs = [{"role": "user", "content": observation_text(result.observations)}]
            return obs, 0.0, False, {"task_id": self.task.id, **result.metrics}
        verdict = run_sync(self._env.verify())
        for _ in range(_INFRA_RETRIES):
            if not verdict.infra_error:
                break
            verdict = run_sync(self._env.verify())
        if verdict.infra_error:
            raise VerifierError(
                f"verifying task {self.task.id!r} failed {_INFRA_RETRIES + 1} times for a reason "
                f"other than the answer: {verdict.infra_error}"
            )
        return self._finish(verdict.reward, verdict.passed, result.reason)

    def finish(self, verdict: Verdict) -> tuple[list[ChatMessage], float, bool, dict[str, Any]]:
        """End a single-turn episode with a verdict judged elsewhere (a batch on a Ray pool);
        what :meth:`step` returns."""
        if self.done or self.multi_turn:
            raise ConfigError("finish(verdict) ends a single-turn episode that is still open")
        self.turns += 1
        return self._finish(verdict.reward, verdict.passed, "answered")

    def _finish(
        self, reward: float, passed: bool, reason: str
    ) -> tuple[list[ChatMessage], float, bool, dict[str, Any]]:
        self.done, self.reward, self.passed = True, float(reward), passed
        meta = {"task_id": self.task.id, "passed": passed, "reason": reason}
        return [], self.reward, True, meta

    def metrics(self) -> dict[str, float]:
        return {"passed": float(self.passed), "turns": float(self.turns)}

    def close(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            run_sync(env.close())


def _options(env_config: Any) -> dict[str, Any]:
    """The options in SkyRL's ``env_config`` (``{}`` for a custom env class, or a DictConfig)."""
    if env_config is None:
        return {}
    if hasattr(env_config, "items"):
        return {str(k): v for k, v in env_config.items()}
    return {}


_class_lock = threading.Lock()
_env_class: type | None = None


def env_class() -> type:
    """The ``BaseTextEnv`` subclass (made once; needs ``skyrl_gym``)."""
    global _env_class
    with _class_lock:
        if _env_class is not None:
            return _env_class
        from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

        class RefereeEnv(BaseTextEnv):  # type: ignore[misc]
            """referee's tasks and verifiers as a SkyRL environment (:mod:`referee.train.skyrl`).

            Options (``register(..., **options)`` or ``environment.skyrl_gym.<env_class>``):
            ``tasks``, ``multi_turn``, ``allow_heldout``, ``step_timeout_s``,
            ``episode_timeout_s``.
            """

            def __init__(
                self,
                env_config: Any = None,
                extras: dict[str, Any] | None = None,
                **options: Any,
            ) -> None:
                super().__init__()
                self.episode = TextEpisode(extras or {}, **{**_options(env_config), **options})
                self.max_turns = self.episode.max_turns

            def init(self, prompt: list[ChatMessage]) -> tuple[list[ChatMessage], dict[str, Any]]:
                return self.episode.init(prompt)

            def step(self, action: str) -> Any:
                self.turns += 1
                obs, reward, done, meta = self.episode.step(action)
                return BaseTextEnvStepOutput(
                    observations=obs, reward=reward, done=done, metadata=meta
                )

            def get_metrics(self) -> dict[str, Any]:
                return dict(self.episode.metrics())

            def close(self) -> None:
                self.episode.close()

        RefereeEnv.__module__ = __name__
        _env_class = RefereeEnv
        return RefereeEnv


def __getattr__(name: str) -> Any:
    if name == "RefereeEnv":
        return env_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(
    tasks: str | os.PathLike[str] | None = None,
    *,
    env_id: str = "referee",
    eval_id: str | None = "referee-eval",
    replace: bool = False,
    **options: Any,
) -> None:
    """Register the environment with ``skyrl_gym`` as ``env_id`` (held-out tasks refused) and
    ``eval_id`` (held-out tasks allowed). ``tasks``: the task file (default ``REFEREE_TASKS``);
    ``options`` go to every environment (``multi_turn``, ``step_timeout_s``, ...)."""
    from skyrl_gym.envs.registration import deregister, registry
    from skyrl_gym.envs.registration import register as skyrl_register

    path = None if tasks is None else os.fspath(tasks)
    ids = [(env_id, False)] + ([(eval_id, True)] if eval_id else [])
    for name, allow in ids:
        if name in registry:
            if not replace:
                raise ConfigError(f"a SkyRL environment {name!r} is registered already")
            deregister(name)
        kwargs = {**options, "tasks": path, "allow_heldout": allow}
        skyrl_register(id=name, entry_point=ENTRY_POINT, kwargs=kwargs)
