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
ends at the round boundary nearest GRPO's wall time (:func:`another_round`: one round at
least), so that its time is GRPO's to within half a round either way. (Stopping after the round
that reaches the budget, as GRPO's budget stops GRPO, gave the control GRPO's overshoot *and*
its own: 731 s against GRPO's 675 s in bench/RESULTS.md §51.)

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

__all__ = ["ControlResult", "another_round", "rejection_sampling_fine_tune"]

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


def another_round(elapsed_s: float, round_s: Sequence[float], wall_s: float) -> bool:
    """Whether the control starts another round after ``round_s`` (the rounds' durations so
    far) with ``elapsed_s`` spent of ``wall_s``: the first round always; then only while the
    round, at the mean length so far, would end nearer ``wall_s`` than stopping now does.

    >>> another_round(0.0, [], 0.0)
    True
    >>> another_round(620.0, [60.0] * 10, 675.0), another_round(650.0, [60.0] * 10, 675.0)
    (True, False)
    """
    if not round_s:
        return True
    return elapsed_s + sum(round_s) / len(round_s) / 2 < wall_s


def rejection_sampling_fine_tune(
    model: Any, tokenizer: Any, train: Sequence[Task], cfg: LMConfig, *, wall_s: float,
    verifiers: Any, log: Log, curriculum: Curriculum | None = None, episodes: Any = None,
) -> ControlResult:  # fmt: skip
    """Train ``model`` (already made trainable) by RFT on ``train`` for ``wall_s`` seconds.

    ``curriculum``: draws each round's tasks (its pool is ``train``'s ids) and is updated with
    every round's verdicts; without one, the tasks are drawn uniformly. ``episodes`` (a
    :class:`~referee.experiments.lm.multi_turn.ToolEpisodes`): multi-turn, each answer a tool
    episode sampled as GRPO's are, imitated on the model's own turns only (tool results are
    context, as in GRPO's loss)."""
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
    round_s: list[float] = []
    t0 = time.perf_counter()
    try:
        while another_round(time.perf_counter() - t0, round_s, wall_s):
            started = time.perf_counter()
            n = min(cfg.prompts, len(train))
            if curriculum is None:
                chosen = rng.sample(list(train), n)
            else:
                eligible = len(curriculum.eligible())
                if not eligible:
                    log("control: every training task is retired; the pool is solved")
                    break
                chosen = [by_id[i] for i in curriculum.sample(min(n, eligible))]
            seed = rng.randrange(2**31)
            # One padded batch of every answer of the round, as GRPO generates its step's.
            repeated = [t for t in chosen for _ in range(cfg.group_size)]
            good: dict[Any, Any]  # distinct passing answers: (task, text) or an episode
            if episodes is None:
                sampling = Sampling(
                    temperature=cfg.temperature, max_tokens=cfg.max_tokens, seed=seed
                )
                judged = judge_batched(
                    policy, repeated, sampling, batch=len(repeated), verifiers=verifiers
                )
                answers = [row[0] for row in judged]
                results = [(j.passed, j.infra_error is not None) for j in answers]
                good = {(j.task_id, j.text): (t, j.text)
                        for t, j in zip(repeated, answers, strict=True) if j.passed}  # fmt: skip
            else:
                eps = episodes.sample(model, tokenizer, repeated, cfg, seed=seed)
                results = [(e.passed, e.verdict is None or bool(e.verdict.infra_error))
                           for e in eps]  # fmt: skip
                good = {tuple(e.ids): e for e in eps if e.passed}
            rounds += 1
            samples += len(results)
            passing += len(good)
            rates.append(sum(ok for ok, _ in results) / len(results))
            if curriculum is not None:
                for k, task in enumerate(chosen):
                    group = results[k * cfg.group_size : (k + 1) * cfg.group_size]
                    curriculum.update(Group(task.id, [None if bad else ok for ok, bad in group]))
            if good:
                model.train(True)
                optimiser.zero_grad()
                if episodes is None:
                    loss = _completion_loss(model, tokenizer, list(good.values()))
                else:
                    loss = _episode_loss(model, tokenizer, list(good.values()))
                loss.backward()
                optimiser.step()
                model.train(False)
                steps += 1
            round_s.append(time.perf_counter() - started)
            log(
                f"control round {rounds}: {len(good)} distinct passing answers of "
                f"{len(results)} ({time.perf_counter() - t0:.0f}s of {wall_s:.0f}s)"
            )
    finally:
        policy.close()
    return ControlResult(
        rounds=rounds, steps=steps, samples=samples, passing=passing,
        wall_s=round(time.perf_counter() - t0, 2), pass_rate_per_round=tuple(rates),
    )  # fmt: skip


def _episode_loss(model: Any, tokenizer: Any, episodes: list[Any]) -> Any:
    """The mean loss over the model's own tokens of each episode (its prompt and the tool
    results appended between its turns masked, by the episode's ``model_mask``)."""
    import torch

    ids = [list(e.ids) for e in episodes]
    labels = []
    for e in episodes:
        after = zip(e.ids[e.prompt_len :], e.model_mask, strict=True)
        labels.append([-100] * e.prompt_len + [tok if keep else -100 for tok, keep in after])
    return _padded_loss(model, tokenizer, ids, labels, torch)


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
    return _padded_loss(model, tokenizer, ids, labels, torch)


def _padded_loss(
    model: Any, tokenizer: Any, ids: list[list[int]], labels: list[list[int]], torch: Any
) -> Any:
    """The model's loss on right-padded rows (padding masked and never a label)."""
    width = max(len(x) for x in ids)
    pad = tokenizer.pad_token_id
    device = next(model.parameters()).device
    input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids], device=device)
    label_ids = torch.tensor([y + [-100] * (width - len(y)) for y in labels], device=device)
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids], device=device)
    return model(input_ids=input_ids, attention_mask=mask, labels=label_ids).loss
