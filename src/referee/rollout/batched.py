"""Single-turn answers of a local model in padded batches, judged for any task kind.

A local model (:class:`~referee.policy.local.TransformersPolicy`) generates one request at a
time; asked one task after another it runs at ~12 tokens/s on two CPU cores, where a padded
batch of 16 runs at ~100. This module is the batched route: each task's own prompt messages
(what the ``code-single`` episode sends too), generated in fixed chunks of ``batch`` tasks in
the tasks' order, each answer read as every route reads raw model text
(:func:`~referee.envs.answers.answer_for`: a function task's code block, a program's tagged
block, a query, a plan...) and judged by the task's own verifier
(:class:`~referee.verify.dispatch.VerifierSet`). It serves every task kind, not only code.

A policy without ``generate_batch`` (an OpenAI-compatible server, a scripted policy) answers
the same conversations one request each, a few at a time; a request that fails (the server is
down, it ran past ``sampling.timeout_s``) is that answer's infrastructure error, never a
verdict of 0.

The chunks are fixed (tasks ``0..batch-1``, then ``batch..2*batch-1``, ...) so a greedy run is
reproducible: the same tasks, batch size and model give the same padded batches and the same
answers, whoever calls (``referee eval``, ``referee train``'s held-out evaluations,
``referee tasks calibrate``).

>>> from referee.policy import Sampling                                 # doctest: +SKIP
>>> judged = judge_batched(policy, tasks, Sampling(temperature=0.0))    # doctest: +SKIP
>>> sum(row[0].passed for row in judged) / len(tasks)                   # doctest: +SKIP
0.25

"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.envs.answers import answer_for
from referee.policy.base import Generation, Sampling
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["Judged", "Progress", "answer_ran", "generate_batched", "judge_batched"]

#: Called after each chunk with (answers done, answers in all).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Judged:
    """One answer and its verdict."""

    task_id: str
    text: str  # what the model wrote
    passed: bool
    reward: float  # the verifier's partial credit
    #: the answer reached a test at all (it parsed, loaded and ran: every test's status is
    #: passed or failed, not missing or error): the "format" share of a pass rate
    ran: bool
    infra_error: str | None
    completion_tokens: int
    sample: int = 0  # which sample of the task (0 for greedy)


def answer_ran(verdict: Verdict) -> bool:
    """Whether an answer got as far as being compared: some test passed or failed (an answer
    that does not parse, load or run leaves every test missing or in error)."""
    return any(t.status in ("passed", "failed") for t in verdict.tests)


def generate_batched(
    policy: Any, tasks: Sequence[Task], sampling: Sampling, *, samples: int = 1, batch: int = 16,
    progress: Progress | None = None,
) -> list[list[Generation]]:  # fmt: skip
    """``samples`` generations per task (``[task][sample]``), in fixed chunks of ``batch``
    conversations. Sample ``s`` of a chunk is seeded ``sampling.seed + s`` (when seeded), so a
    seeded run is reproducible too. ``policy`` with ``generate_batch`` (a local model) answers a
    chunk in one padded batch; any other policy answers each conversation with ``generate``."""
    if batch < 1 or samples < 1:
        raise ValueError("batch and samples must be at least 1")
    conversations = [[m.model_dump() for m in t.prompt] for t in tasks]
    out: list[list[Generation]] = [[] for _ in tasks]
    total, done = len(tasks) * samples, 0

    async def run() -> None:
        nonlocal done
        gate = asyncio.Semaphore(_CONCURRENT)  # for a policy without generate_batch
        for start in range(0, len(tasks), batch):
            chunk = conversations[start : start + batch]
            for s in range(samples):
                seeded = sampling
                if sampling.seed is not None:
                    seeded = Sampling(**{**sampling.__dict__, "seed": sampling.seed + s})
                if hasattr(policy, "generate_batch"):
                    gens = await policy.generate_batch(chunk, seeded)
                else:
                    gens = await asyncio.gather(*(_one(policy, c, seeded, gate) for c in chunk))
                for i, g in enumerate(gens):
                    out[start + i].append(g)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)

    async def run_and_close() -> None:
        try:
            await run()
        finally:  # a client opened on this loop is closed on it (a later call opens another)
            aclose = getattr(policy, "aclose", None)
            if callable(aclose) and not hasattr(policy, "generate_batch"):
                await aclose()

    asyncio.run(run_and_close())
    return out


#: Requests in flight at once to a policy without ``generate_batch``.
_CONCURRENT = 8


async def _one(
    policy: Any, conversation: list[dict[str, Any]], sampling: Sampling, gate: asyncio.Semaphore
) -> Generation:
    """One answer of a policy without ``generate_batch``; a failed request is a
    :class:`Generation` carrying the fault in ``extra["policy_error"]``."""
    from referee.errors import RefereeError

    async with gate:
        try:
            return await asyncio.wait_for(
                policy.generate(conversation, sampling=sampling), sampling.timeout_s
            )
        except TimeoutError:
            why = f"the policy gave no answer in {sampling.timeout_s:g} s"
        except RefereeError as e:
            why = str(e)
    return Generation(
        message={"role": "assistant", "content": ""},
        finish_reason="error",
        extra={"policy_error": why},
    )


def judge_batched(
    policy: Any, tasks: Sequence[Task], sampling: Sampling, *, samples: int = 1, batch: int = 16,
    verifiers: Any = None, progress: Progress | None = None,
) -> list[list[Judged]]:  # fmt: skip
    """Generate (:func:`generate_batched`) and judge every answer: ``[task][sample]``.

    ``verifiers``: a :class:`~referee.verify.dispatch.VerifierSet` to judge with (one is made
    and closed here when None)."""
    gens = generate_batched(
        policy, tasks, sampling, samples=samples, batch=batch, progress=progress
    )
    owned = verifiers is None
    if owned:
        from referee.verify.dispatch import VerifierSet

        verifiers = VerifierSet()
    try:
        pairs: list[tuple[Task, str]] = []
        for task, per_task in zip(tasks, gens, strict=True):
            for g in per_task:
                if "policy_error" not in g.extra:  # no answer to judge
                    pairs.append((task, answer_for(task, _text(g))))
        verdicts = list(verifiers.verify_many(pairs)) if pairs else []
    finally:
        if owned:
            verifiers.close()
    judged: list[list[Judged]] = []
    k = 0
    for task, per_task in zip(tasks, gens, strict=True):
        row = []
        for s, g in enumerate(per_task):
            if "policy_error" in g.extra:
                row.append(
                    Judged(
                        task_id=task.id, text="", passed=False, reward=0.0, ran=False,
                        infra_error=f"policy: {g.extra['policy_error']}", completion_tokens=0,
                        sample=s,
                    )
                )  # fmt: skip
                continue
            v = verdicts[k]
            k += 1
            row.append(
                Judged(
                    task_id=task.id,
                    text=_text(g),
                    passed=bool(v.passed),
                    reward=float(v.reward or 0.0),
                    ran=answer_ran(v),
                    infra_error=v.infra_error,
                    completion_tokens=g.completion_tokens,
                    sample=s,
                )
            )
        judged.append(row)
    return judged


def _text(g: Generation) -> str:
    content = g.message.get("content")
    return content if isinstance(content, str) else ""
