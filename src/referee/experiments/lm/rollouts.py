"""Single-turn chat episodes for TRL's GRPO: each task's own prompt messages (TRL applies the
model's chat template), one answer per completion, judged by the task's verifier.

The answer is read from the completion as every route reads raw model text
(:func:`~referee.envs.answers.answer_for`), so any task kind trains: function and program
tasks, repository patches, and the domains' queries, plans and designs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from referee.experiments.listops.grpo import StepRecord
from referee.tasks.model import Task

__all__ = ["ChatRollouts", "chat_prompt"]


class ChatRollouts:
    """The :class:`~referee.experiments.listops.grpo.Rollouts` of a chat model's single-turn
    episodes; rewards are pass/fail (what held-out pass@1 measures)."""

    def __init__(self, pool: Sequence[Task], verifiers: Any, tokenizer: Any) -> None:
        self.pool = list(pool)
        self.verifiers = verifiers
        self.tokenizer = tokenizer
        self.answers_ran: list[float] = []  # per step: the share of answers that reached a test

    def dataset(self) -> Any:
        from referee.train.trl_adapter import tasks_dataset

        return tasks_dataset(self.pool, prompt=lambda t: [m.model_dump() for m in t.prompt])

    def reward_function(self, record: StepRecord) -> Callable[..., list[float | None]]:
        from referee.rollout.batched import answer_ran
        from referee.train.trl_adapter import reward_function

        def on_verdicts(batch: list[Task], texts: list[str], verdicts: list[Any]) -> None:
            def count(text: str) -> int:
                return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

            prompts = [chat_prompt(self.tokenizer, t) for t in batch]
            self.answers_ran.append(sum(answer_ran(v) for v in verdicts) / max(1, len(verdicts)))
            record.log_verdicts(
                batch, prompts, texts, verdicts, prompt_tokens=[count(p) for p in prompts],
                completion_tokens=[count(c) for c in texts], binary=True,
            )  # fmt: skip

        return reward_function(self.verifiers, self.pool, on_verdicts=on_verdicts, binary=True)

    def trainer_options(self) -> dict[str, Any]:
        return {}

    def grpo_options(self) -> dict[str, Any]:
        return {}

    def finish(self) -> dict[str, Any]:
        return {}


def chat_prompt(tokenizer: Any, task: Task) -> str:
    """The text a chat model continues for ``task``: its prompt messages through the model's
    chat template, with the assistant's turn opened (what TRL generates from)."""
    text = tokenizer.apply_chat_template(
        [m.model_dump() for m in task.prompt], add_generation_prompt=True, tokenize=False
    )
    return str(text)
