"""referee inside AReaL: a reward function and a rollout workflow.

Written against ``areal`` 1.0.4 (``areal/api/reward_api.py``, ``areal/api/workflow_api.py``,
``areal/workflow/rlvr.py``), checked by ``tests/trainers/test_areal_contract.py`` in the ``areal``
venv. Nothing here imports AReaL.

**Reward** (single-turn, AReaL's ``RLVRWorkflow``)::

    from areal.workflow.rlvr import RLVRWorkflow
    workflow = RLVRWorkflow(reward_fn="referee.train.areal.reward_fn", gconfig=..., tokenizer=...)

:func:`reward_fn` has AReaL's signature ``(prompt, completions, prompt_ids, completion_ids,
**row) -> float``; it is a module-level function, so it pickles into ``AsyncRewardWrapper``'s
process pool. The row (every dataset column, :func:`areal_row`) names the task by ``task_id``;
the task file comes from ``REFEREE_TASKS`` (set it in the trainer's environment: the pool's
workers inherit it). The completion is decoded without ``skip_special_tokens``, so its EOS text
(``<|im_end|>``) is stripped by :func:`referee.envs.answers.text_answer` before judging.

Deadlines: ``AsyncRewardWrapper`` gives up after ``timeout_seconds`` (15 s by default), retries,
and then returns 0 — but the timed-out call keeps running in its worker (AReaL#1426). referee's
verifier bounds the whole run of a candidate by ``REFEREE_REWARD_DEADLINE_S`` (10 s by default;
keep it below AReaL's timeout), so a hung candidate earns 0 from referee and frees its worker.
An infrastructure failure (after 2 retries) raises: AReaL retries it and then re-raises it into
the workflow, so it is never a silent 0. A held-out task raises :class:`ConfigError`;
:func:`eval_reward_fn` is the same function for evaluation, which accepts held-out tasks.

**Workflow** (multi-turn or single-turn, through AReaL's OpenAI-compatible proxy)::

    trainer.train(workflow="referee.train.areal.RefereeWorkflow",
                  workflow_kwargs={"tasks": "/data/tasks.jsonl"})

:class:`RefereeWorkflow` has the ``async run(data, **extra_kwargs) -> float`` AReaL calls with
``base_url`` and ``api_key`` of its proxy (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` when run
without them). It runs one referee episode through :class:`~referee.policy.OpenAIPolicy` and
referee's rollout runner, in the environment the task's kind calls for
(:func:`referee.train.lookup.task_env`): :class:`~referee.envs.code.CodeEnv` for a code task
(tools for repository tasks or ``multi_turn=True``), the domain's environment
(``make_env(task.kind.value)``: sql, dataframe, numeric, shell, toolworld, verilog, with its own
tools; a tool world's are read after its reset) for a domain's task; it returns the verifier's
reward. Tools travel as OpenAI ``tools``, so
the proxy's inference server must parse tool calls (vLLM/SGLang with a tool parser). AReaL's
``http_client`` is not used: the policy opens its own client to ``base_url``.
"""

from __future__ import annotations

import os
from typing import Any

from referee.envs.base import EpisodeLimits
from referee.errors import ConfigError, PolicyError, VerifierError
from referee.tasks.model import Task
from referee.train.lookup import (
    TaskSource,
    check_split,
    resolve_task,
    score_text,
    shared_runtime,
    task_env,
)

__all__ = ["RefereeWorkflow", "areal_row", "eval_reward_fn", "reward_fn"]


def areal_row(task: Task, index: int = 0) -> dict[str, Any]:
    """One AReaL dataset row: the chat ``messages`` RLVRWorkflow renders, and the task id."""
    return {
        "messages": [m.model_dump() for m in task.prompt],
        "task_id": task.id,
        "split": task.split,
        "query_id": f"{task.id}#{index}",
    }


def _reward(completions: str, row: dict[str, Any], *, allow_heldout: bool) -> float:
    task = resolve_task(row)
    check_split(task, allow_heldout=allow_heldout)
    return float(score_text(task, completions).reward)


def reward_fn(
    prompt: str, completions: str, prompt_ids: list[int], completion_ids: list[int], **row: Any
) -> float:
    """AReaL's reward: referee's verifier on the completion (see the module docstring)."""
    return _reward(completions, row, allow_heldout=False)


def eval_reward_fn(
    prompt: str, completions: str, prompt_ids: list[int], completion_ids: list[int], **row: Any
) -> float:
    """:func:`reward_fn` for evaluation: held-out tasks are judged too."""
    return _reward(completions, row, allow_heldout=True)


class RefereeWorkflow:
    """One referee episode per ``run`` through AReaL's proxy (see the module docstring).

    ``tasks``: the task file (default ``REFEREE_TASKS``); ``model``: the name sent to the proxy
    (AReaL's examples use ``"default"``); ``multi_turn``: None picks per task kind (tools for
    repository and domain tasks; a domain's environment offers its tools either way, and takes
    ``multi_turn`` only where it has a single-turn mode: shell); ``max_turns``,
    ``step_timeout_s``, ``episode_timeout_s``: the episode's limits; ``allow_heldout``: for an
    evaluation workflow.
    """

    def __init__(
        self,
        tasks: TaskSource = None,
        *,
        model: str = "default",
        multi_turn: bool | None = None,
        max_turns: int = 8,
        step_timeout_s: float = 30.0,
        episode_timeout_s: float = 600.0,
        allow_heldout: bool = False,
        max_infra_retries: int = 2,
    ) -> None:
        self.tasks = tasks
        self.model = model
        self.multi_turn = multi_turn
        self.limits = EpisodeLimits(
            max_turns=max_turns, step_timeout_s=step_timeout_s, episode_timeout_s=episode_timeout_s
        )
        self.allow_heldout = allow_heldout
        self.max_infra_retries = max_infra_retries

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        from referee.policy.openai_compat import OpenAIPolicy
        from referee.rollout.runner import RolloutRunner

        task = resolve_task(data, self.tasks)
        check_split(task, allow_heldout=self.allow_heldout)
        base_url = extra_kwargs.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ConfigError("no base_url from AReaL and no OPENAI_BASE_URL")
        api_key = extra_kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
        policy = OpenAIPolicy(
            str(base_url),
            self.model,
            api_key=api_key,
            logprobs=False,
            return_token_ids=False,
            max_retries=1,
        )
        runtime = shared_runtime()
        single = None if self.multi_turn is None else not self.multi_turn
        runner = RolloutRunner(
            lambda: task_env(task, runtime=runtime, single_turn=single, limits=self.limits),
            policy,
            limits=self.limits,
            max_infra_retries=self.max_infra_retries,
            log_faults=False,
        )
        try:
            traj = await runner.rollout(task)
        finally:
            await policy.aclose()
        if traj.error is not None and traj.error.kind == "infra":
            cls = PolicyError if traj.error.where == "policy" else VerifierError
            raise cls(
                f"episode on task {task.id!r} failed at {traj.error.where} after "
                f"{traj.attempts} attempt(s): {traj.error.message}"
            )
        return float(traj.reward or 0.0)
