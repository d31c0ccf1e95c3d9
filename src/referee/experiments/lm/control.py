"""The control: rejection-sampling fine-tuning (RFT) for the wall time GRPO took.

Why this control: it sees exactly what GRPO sees (the same tasks, the same sampler budget, the
same verifier's verdicts on the model's own samples) and differs only in the update: it
imitates the passing samples and ignores the failing ones, where GRPO weighs every sample by
its advantage within its group. A GRPO win over RFT is therefore a win of the RL update, not
of the verifier's information. (SFT on reference solutions would test something else, whether
the reward helps at all next to gold answers, and is not available for every task kind.)

Each round draws ``prompts`` training tasks, samples ``group_size`` answers per task at the
run's temperature, judges them, and takes one AdamW step of the
completion-only loss on the distinct passing answers of the round (none pass: no step). It
stops after the round that reaches the wall budget, as GRPO does.

The tasks are drawn as GRPO draws them: by a :class:`~referee.tasks.curriculum.Curriculum` of
the same configuration, started from the same calibrated pass rates and updated with the
control's own verdicts, when GRPO's sampler is the curriculum (else uniformly, seeded). A
control drawing uniformly from a calibrated pool where most tasks never pass would imitate
almost nothing, and GRPO's win over it would be the curriculum's, not the update's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.experiments.lm.config import LMConfig
from referee.tasks.curriculum import Curriculum, Group
from referee.tasks.model import Task

__all__ = ["ControlResult", "rejection_sampling_fine_tune"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class ControlResult:
    """What the control did."""

    rounds: int
    steps: int  # optimiser steps (rounds with at least one passing answer)
    samples: int
    passing: int
    wall_s: float
    pass_rate_per_round: tuple[float, ...]


def rejection_sampling_fine_tune(
    model: Any, tokenizer: Any, train: Sequence[Task], cfg: LMConfig, *, wall_s: float,
    verifiers: Any, log: Log, curriculum: Curriculum | None = None,
) -> ControlResult:  # fmt: skip
    """Train ``model`` (already made trainable) by RFT on ``train`` for ``wall_s`` seconds.

    ``curriculum``: draws each round's tasks (its pool is ``train``'s ids) and is updated with
    every round's verdicts; without one, the tasks are drawn uniformly."""
    import torch

    from referee.policy.base import Sampling
    from referee.policy.local import TransformersPolicy
    from referee.rollout.batched import judge_batched

    rng = random.Random(cfg.seed + 1)
    by_id = {t.id: t for t in train}
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    policy = TransformersPolicy(model, tokenizer, num_threads=None)
    rounds = steps = samples = passing = 0
    rates: list[float] = []
    t0 = time.perf_counter()
    try:
        while time.perf_counter() - t0 < wall_s:
            n = min(cfg.prompts, len(train))
            if curriculum is None:
                chosen = rng.sample(list(train), n)
            else:
                eligible = len(curriculum.eligible())
                if not eligible:
                    log("control: every training task is retired; the pool is solved")
                    break
                chosen = [by_id[i] for i in curriculum.sample(min(n, eligible))]
            sampling = Sampling(
                temperature=cfg.temperature, max_tokens=cfg.max_tokens, seed=rng.randrange(2**31)
            )
            # One padded batch of every answer of the round, as GRPO generates its step's.
            repeated = [t for t in chosen for _ in range(cfg.group_size)]
            judged = judge_batched(
                policy, repeated, sampling, batch=len(repeated), verifiers=verifiers
            )
            answers = [row[0] for row in judged]
            rounds += 1
            samples += len(answers)
            good = {(j.task_id, j.text): t for t, j in zip(repeated, answers, strict=True)
                    if j.passed}  # fmt: skip
            passing += len(good)
            rates.append(sum(j.passed for j in answers) / len(answers))
            if curriculum is not None:
                for k, task in enumerate(chosen):
                    group = answers[k * cfg.group_size : (k + 1) * cfg.group_size]
                    rewards = [None if j.infra_error else j.passed for j in group]
                    curriculum.update(Group(task.id, rewards))
            if good:
                model.train(True)
                optimiser.zero_grad()
                rows = [(t, text) for (_, text), t in good.items()]
                loss = _completion_loss(model, tokenizer, rows)
                loss.backward()
                optimiser.step()
                model.train(False)
                steps += 1
            log(
                f"control round {rounds}: {len(good)} distinct passing answers of "
                f"{len(answers)} ({time.perf_counter() - t0:.0f}s of {wall_s:.0f}s)"
            )
    finally:
        policy.close()
    return ControlResult(
        rounds=rounds, steps=steps, samples=samples, passing=passing,
        wall_s=round(time.perf_counter() - t0, 2), pass_rate_per_round=tuple(rates),
    )  # fmt: skip


def _completion_loss(model: Any, tokenizer: Any, rows: list[tuple[Task, str]]) -> Any:
    """The mean token loss of each answer given its task's chat prompt (prompt tokens masked),
    as TRL's SFT computes a completion-only loss."""
    import torch

    from referee.experiments.lm.rollouts import chat_prompt

    ids, labels = [], []
    for task, text in rows:
        p = tokenizer(chat_prompt(tokenizer, task), add_special_tokens=False)["input_ids"]
        c = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        ids.append(p + c)
        labels.append([-100] * len(p) + c)
    width = max(len(x) for x in ids)
    pad = tokenizer.pad_token_id
    device = next(model.parameters()).device
    input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids], device=device)
    label_ids = torch.tensor([y + [-100] * (width - len(y)) for y in labels], device=device)
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids], device=device)
    return model(input_ids=input_ids, attention_mask=mask, labels=label_ids).loss
