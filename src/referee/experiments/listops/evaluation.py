"""Held-out evaluation of a local model on function tasks: generate, verify in the sandbox, score.

The model continues each task's ``payload.code_prompt`` (the signature and docstring); the
completion is judged by :class:`~referee.verify.FunctionVerifier` in the sandbox, like any
other solution. ``pass@1`` is greedy (one deterministic answer per task, so two checkpoints
compare task by task); with ``samples > 1`` the completions are sampled and pass@k is the
unbiased estimator over them.

>>> result = evaluate(model, tokenizer, heldout, verifier)      # doctest: +SKIP
>>> result.pass_at_1, len(result.passed)                          # doctest: +SKIP
(0.62, 256)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from referee.experiments.listops.demonstrator import Demonstrator
from referee.rollout.evaluate import EvalResult
from referee.rollout.pass_at_k import mean_pass_at_k
from referee.tasks.model import Task
from referee.verify.function import FunctionVerifier

__all__ = ["evaluate", "generate_completions", "imitation_ceiling"]


def generate_completions(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 96,
    temperature: float = 0.0,
    num_return_sequences: int = 1,
    batch_size: int = 64,
    seed: int = 0,
) -> list[list[str]]:
    """For each prompt, ``num_return_sequences`` completions (special tokens removed)."""
    import torch

    out: list[list[str]] = []
    was_training = model.training
    model.eval()
    torch.manual_seed(seed)
    try:
        for i in range(0, len(prompts), batch_size):
            chunk = list(prompts[i : i + batch_size])
            enc = tokenizer(chunk, return_tensors="pt", padding=True).to(model.device)
            with torch.no_grad():
                gen = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    do_sample=temperature > 0,
                    temperature=temperature if temperature > 0 else None,
                    top_p=None,
                    top_k=None,
                    num_return_sequences=num_return_sequences,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=tokenizer.eos_token_id,
                )
            texts = tokenizer.batch_decode(
                gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
            )
            for j in range(len(chunk)):
                out.append(texts[j * num_return_sequences : (j + 1) * num_return_sequences])
    finally:
        model.train(was_training)
    return out


def evaluate(
    model: Any,
    tokenizer: Any,
    tasks: Sequence[Task],
    verifier: FunctionVerifier,
    *,
    samples: int = 0,
    ks: Sequence[int] = (1, 4, 8),
    temperature: float = 1.0,
    max_new_tokens: int = 96,
    seed: int = 0,
    prompt: Callable[[Task], str] | None = None,
) -> EvalResult:
    """Greedy pass@1 on ``tasks`` and, with ``samples``, sampled pass@k for each k in ``ks``.

    ``prompt`` makes the model's input from a task (default: ``payload.code_prompt``)."""
    make = prompt or (lambda t: str(t.payload["code_prompt"]))
    prompts = [make(t) for t in tasks]
    greedy = [
        c[0] for c in generate_completions(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
    ]
    verdicts = verifier.verify_many(list(zip(tasks, greedy, strict=True)))
    infra_errors = sum(v.infra_error is not None for v in verdicts)
    pass_k: dict[int, float] = {}
    if samples:
        sampled = generate_completions(
            model,
            tokenizer,
            prompts,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            num_return_sequences=samples,
            seed=seed,
        )
        pairs = [(t, c) for t, cs in zip(tasks, sampled, strict=True) for c in cs]
        flat = verifier.verify_many(pairs)
        infra_errors += sum(v.infra_error is not None for v in flat)
        outcomes = [
            [v.passed for v in flat[i * samples : (i + 1) * samples]] for i in range(len(tasks))
        ]
        for k in ks:
            if k <= samples:
                pass_k[k] = mean_pass_at_k(outcomes, k)
    return EvalResult(
        task_ids=[t.id for t in tasks],
        passed=[v.passed for v in verdicts],
        rewards=[v.reward for v in verdicts],
        pass_at_k=pass_k,
        infra_errors=infra_errors,
        completions=greedy,
    )


def imitation_ceiling(
    demo: Demonstrator, heldout: Sequence[Task], dev: Sequence[Task], verifier: FunctionVerifier
) -> dict[str, float]:
    """What perfect imitation reaches: the pass rate of the demonstrator's majority answer
    (greedy decoding of a perfect imitator) and of one of its draws (sampling at T 1)."""

    def rate(tasks: Sequence[Task], solve: Callable[[Task], str]) -> float:
        if not tasks:
            return 0.0
        verdicts = verifier.verify_many([(t, solve(t)) for t in tasks])
        return round(sum(bool(v.passed) for v in verdicts) / len(verdicts), 4)

    return {
        "heldout_mode": rate(heldout, demo.mode),
        "dev_mode": rate(dev, demo.mode),
        "heldout_draw": rate(heldout, lambda t: demo.solve(t, draw=10**6)),
    }
