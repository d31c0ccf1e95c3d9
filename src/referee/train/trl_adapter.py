"""referee inside TRL: reward functions backed by the sandboxed verifiers.

TRL calls a reward function once per batch with keyword arguments: ``prompts``, ``completions``,
every dataset column (here ``task_id``), and a few of its own (``log_metric``...). It returns one
float per completion. :func:`reward_function` builds such a function from a verifier and the
tasks, so a TRL user writes::

    from trl import GRPOConfig, GRPOTrainer
    from referee.train.trl_adapter import reward_function, tasks_dataset

    reward = reward_function(FunctionVerifier(), tasks)
    trainer = GRPOTrainer(model, reward_funcs=[reward], train_dataset=tasks_dataset(tasks), ...)

An infrastructure failure of the verifier (the sandbox died) is retried; if it persists the
completion gets ``None`` ("does not apply" in TRL), is counted under ``referee/infra_errors`` and
reported to ``on_verdicts``: it is never a silent zero of the verifier's making.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from referee.envs.answers import answer_for
from referee.errors import ConfigError
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify.dispatch import verify_with_retries
from referee.verify.verdict import Verdict

__all__ = ["OnVerdicts", "reward_function", "tasks_dataset"]


#: Kinds whose completions reach the verifier as TRL gives them.
_AS_IS = (TaskKind.FUNCTION, TaskKind.REPO_PATCH, TaskKind.TEST_WRITING)


class _Verifier(Protocol):
    def verify_many(self, items: Any) -> Iterable[Verdict]: ...


#: Called after each batch with (tasks, completions, verdicts) in TRL's order.
OnVerdicts = Callable[[list[Task], list[str], list[Verdict]], None]


def tasks_dataset(tasks: Sequence[Task], *, prompt: Callable[[Task], Any] | None = None) -> Any:
    """A ``datasets.Dataset`` with ``prompt`` and ``task_id`` columns, refusing held-out tasks.

    The default prompt is the task's ``payload.code_prompt`` (plain completion) where it has
    one (function tasks), else its chat messages (a conversational row: the domains' tasks,
    sql, numeric, shell, toolworld, verilog, have no code prompt); pass
    ``prompt=lambda t: [m.model_dump() for m in t.prompt]`` for a conversational dataset.
    """
    from datasets import Dataset

    heldout = [t.id for t in tasks if t.split != "train"]
    if heldout:
        raise ConfigError(
            f"{len(heldout)} held-out task(s) given for training (first: {heldout[0]}); "
            "train on tasks with split 'train' only and keep the held-out ones for evaluation"
        )
    make = prompt or _default_prompt
    return Dataset.from_list([{"prompt": make(t), "task_id": t.id} for t in tasks])


def _default_prompt(task: Task) -> Any:
    code_prompt = task.payload.get("code_prompt")
    if isinstance(code_prompt, str):
        return code_prompt
    return [m.model_dump() for m in task.prompt]


def _text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    # Conversational: [{"role": "assistant", "content": ...}]
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content") or "")
    return str(completion)


def reward_function(
    verifier: _Verifier,
    tasks: Sequence[Task],
    *,
    retries: int = 2,
    on_verdicts: OnVerdicts | None = None,
    name: str = "referee_reward",
    binary: bool = False,
) -> Callable[..., list[float | None]]:
    """A TRL reward function: the verifier's reward for each completion of its task.

    ``binary``: 1.0 when the verdict passed (every test), else 0.0, instead of the verifier's
    partial credit (the share of tests passed)."""
    by_id = {t.id: t for t in tasks}

    def reward(
        prompts: list[Any], completions: list[Any], task_id: list[str], **kwargs: Any
    ) -> list[float | None]:
        batch = []
        for tid in task_id:
            task = by_id.get(tid)
            if task is None:
                raise ConfigError(f"the reward function does not know task {tid!r}")
            if task.split != "train":
                raise ConfigError(f"task {tid!r} is held out and must never reach training")
            batch.append(task)
        texts = [_text(c) for c in completions]
        # A program's answer is its last language-tagged block, as every other route reads it;
        # a domain's (sql, numeric, shell, toolworld, verilog) is its text without the
        # end-of-turn tokens a decode left, as veRL's route gives it (a raw query or JSON plan
        # followed by <|im_end|> would not parse). Code tasks' verifiers read a plain
        # completion (the continuation of the code prompt) as is; a chat answer (a
        # conversational row's completion) is read as a single-turn episode reads it.
        texts = [
            x if t.kind in _AS_IS and isinstance(c, str) else answer_for(t, x)
            for t, x, c in zip(batch, texts, completions, strict=True)
        ]
        pairs = list(zip(batch, texts, strict=True))
        verdicts = verify_with_retries(verifier.verify_many, pairs, retries=retries)
        infra = sum(v.infra_error is not None for v in verdicts)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            log_metric("referee/infra_errors", float(infra))
            log_metric("referee/pass_rate", sum(v.passed for v in verdicts) / max(1, len(verdicts)))
        if on_verdicts is not None:
            on_verdicts(batch, texts, verdicts)
        return [
            None if v.infra_error else (float(v.passed) if binary else v.reward) for v in verdicts
        ]

    reward.__name__ = name
    return reward
