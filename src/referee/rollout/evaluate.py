"""``referee eval``: any policy on tasks of any kind with a verifier.

A policy spec (:func:`referee.policy.policy_from_spec`) names the policy. Each task is one
single-turn episode (the task's prompt, the policy's answer, the verifier's verdict), greedy
for pass@1; with ``samples``, that many more episodes per task at temperature 1 give pass@k.
Code tasks (function, program, repository) of a remote or scripted policy run through the
rollout runner and ``CodeEnv``; a local model's tasks, and any policy's tasks of the other
kinds (a domain's: SQL, dataframe, shell...), go the batched route
(:mod:`referee.rollout.batched`): the answer read from the policy's text and judged by the
task's own verifier. A kind with no verifier (``custom``) is refused before any work.

A local model without a chat template (like the one ``referee train`` makes) was trained to
continue a task's description (:func:`referee.tasks.compact.compact_prompt`), not a
conversation; for it the prompt is that text,
so it is evaluated on what it was trained to do.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.envs.base import EpisodeLimits
from referee.envs.registry import make_env
from referee.envs.runtime import CodeRuntime
from referee.errors import ConfigError, PolicyError, RefereeError
from referee.policy import Sampling, policy_from_spec
from referee.policy.spec import FORMS
from referee.rollout.batched import Progress, judge_batched
from referee.rollout.pass_at_k import pass_at_ks
from referee.rollout.runner import RolloutRunner
from referee.rollout.trajectory import Trajectory
from referee.tasks.compact import compact_prompt
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task

__all__ = [
    "EvalResult",
    "check_judgeable",
    "compact_prompt_format",
    "evaluate_batched",
    "evaluate_policy",
    "policy_for_eval",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalResult:
    """Per-task outcomes of an evaluation: greedy pass/fail, partial credit, pass@k."""

    task_ids: list[str]
    passed: list[bool]  # greedy, per task
    rewards: list[float]  # the verifier's partial credit of the greedy answer
    pass_at_k: dict[int, float] = field(default_factory=dict)  # from sampled completions
    infra_errors: int = 0
    completions: list[str] = field(default_factory=list)
    completion_tokens: int = 0  # the greedy answers' tokens
    greedy_s: float = 0.0  # wall seconds of the greedy pass (generation and verdicts)
    #: per task, whether the greedy answer reached a test at all (parsed, loaded, ran): the
    #: "format" part of pass@1 (:func:`~referee.rollout.batched.answer_ran`); empty where the
    #: route does not tell
    ran: list[bool] = field(default_factory=list)

    @property
    def solved(self) -> list[str]:
        """The ids of the tasks whose greedy answer passed, in the tasks' order."""
        return [t for t, ok in zip(self.task_ids, self.passed, strict=True) if ok]

    @property
    def pass_at_1(self) -> float:
        """The share of tasks whose greedy answer passed."""
        return sum(self.passed) / len(self.passed) if self.passed else 0.0


#: The kinds a ``code-single`` episode (``CodeEnv``) runs; the others go the batched route.
_CODE_ENV_KINDS = frozenset(
    {TaskKind.FUNCTION, TaskKind.PROGRAM, TaskKind.REPO_PATCH, TaskKind.TEST_WRITING}
)


def check_judgeable(tasks: Sequence[Task]) -> None:
    """A :class:`~referee.errors.ConfigError` unless every task's kind has a verifier: a kind
    judged only by its own environment (``custom``) has no single answer to evaluate."""
    from referee.verify.dispatch import kind_spec

    for kind in sorted({t.kind for t in tasks}, key=lambda k: k.value):
        try:
            kind_spec(kind)
        except ConfigError as e:
            first = next(t.id for t in tasks if t.kind == kind)
            raise ConfigError(
                f"cannot evaluate task {first!r}: {e}; leave such tasks out of --tasks"
            ) from None


def compact_prompt_format(messages: list[dict[str, Any]], tools: Any = None) -> str:
    """The compact prompt (:func:`referee.tasks.compact.compact_prompt`) of a single-turn
    episode's messages: the input of a model trained without a chat template."""
    # The single-turn episode's user message holds the task's code prompt in a fence; the
    # model was trained on its compact form (referee.tasks.compact).
    text = str(messages[-1].get("content", ""))
    if "```python\n" in text:
        text = text.split("```python\n", 1)[1].split("```", 1)[0]
    return compact_prompt(text)


def policy_for_eval(spec: str, *, device: str | None = None, adapter: str | None = None) -> Any:
    """The policy ``spec`` names; a local model without a chat template reads compact prompts.
    A local model loads quietly: the evaluation prints its own result, which transformers'
    loading bars and notices would bury. ``device``: where a local model runs
    (:func:`~referee.policy.device.pick_device`; auto by default)."""
    if spec.startswith("local:"):
        from referee.policy.quiet import quiet_transformers

        quiet_transformers()
    try:
        policy: Any = policy_from_spec(spec, device=device, adapter=adapter)
    except PolicyError as e:  # an openai: URL that is not http(s): a bad spec all the same
        raise ConfigError(f"policy spec {spec!r}: {e}; accepted forms: {', '.join(FORMS)}") from e
    tokenizer = getattr(policy, "tokenizer", None)
    if tokenizer is not None and not getattr(tokenizer, "chat_template", None):
        policy.prompt_format = compact_prompt_format
    return policy


def _warn_faults(trajectories: Sequence[Trajectory], what: str) -> None:
    """Each distinct infrastructure fault of a batch, once and whole, with how many episodes
    it ended (they count as infra errors, not as failures of the policy)."""
    faults = Counter(
        (tr.error.where, tr.error.message) for tr in trajectories if tr.error is not None
        and tr.error.kind == "infra"
    )  # fmt: skip
    for (where, message), n in faults.items():
        _log.warning(
            "%d of %d %s episodes ended in an infrastructure fault, in %s: %s",
            n, len(trajectories), what, where, message,
        )  # fmt: skip


async def _close(policy: Any) -> None:
    """Close the policy: ``aclose`` (an HTTP client, on this loop) or ``close`` (a local model)."""
    aclose = getattr(policy, "aclose", None)
    if callable(aclose):
        await aclose()
        return
    close = getattr(policy, "close", None)
    if callable(close):
        close()


def evaluate_policy(
    spec: str, tasks: Sequence[Task], *, samples: int = 0, ks: Sequence[int] | None = None,
    concurrency: int = 8, max_tokens: int = 256, device: str | None = None,
    adapter: str | None = None, batch: int = 16, progress: Progress | None = None,
    threads: int | None = None,
) -> EvalResult:  # fmt: skip
    """Greedy pass@1 of the policy ``spec`` on ``tasks`` (and pass@k over ``samples``, for each
    k of ``ks`` up to ``samples``; by default 1, 2, 4, 8, ... and ``samples`` itself: :func:`~
    referee.rollout.pass_at_k.pass_ks`).

    Raises :class:`~referee.errors.ConfigError` for a bad spec or arguments,
    :class:`~referee.errors.SandboxUnavailable` without a sandbox, and
    :class:`~referee.errors.RefereeError` when no greedy episode reached a verdict (every one an
    infrastructure fault: a server that is down, or tasks never recorded, are not a pass@1 of 0).
    """
    if not tasks:
        raise ConfigError("no tasks to evaluate")
    if samples < 0:
        raise ConfigError(f"samples must be 0 (greedy only) or more, got {samples}")
    if concurrency < 1 or max_tokens < 1:
        raise ConfigError("concurrency and max_tokens must be at least 1")
    check_judgeable(tasks)
    policy = policy_for_eval(spec, device=device, adapter=adapter)
    if threads is not None and hasattr(policy, "num_threads"):
        policy.num_threads = threads  # a local model's torch threads (one on a CPU by default)
    local = getattr(policy, "serial", False) and hasattr(policy, "generate_batch")
    if local or any(t.kind not in _CODE_ENV_KINDS for t in tasks):
        # A local model: padded batches, ~8x the tokens/s of one answer at a time; any other
        # policy on a domain's tasks (which CodeEnv does not run): its answers judged so too
        try:
            return evaluate_batched(
                policy, tasks, samples=samples, ks=ks, max_tokens=max_tokens, batch=batch,
                progress=progress,
            )  # fmt: skip
        finally:
            close = getattr(policy, "close", None)
            if callable(close):
                close()
    # A local model generates one answer at a time: episodes queued behind it would spend
    # their policy watchdog waiting (issue 14: 3 of 40 HumanEval answers of SmolLM2 were
    # "infrastructure faults" so), so they run one by one, with a CPU's pace in the watchdogs.
    serial = bool(getattr(policy, "serial", False))
    policy_timeout_s = 900.0 if serial else Sampling().timeout_s
    limits = EpisodeLimits(episode_timeout_s=policy_timeout_s + 300.0) if serial else None
    concurrency = 1 if serial else concurrency
    runtime = CodeRuntime()

    async def run(group: int, sampling: Sampling) -> list[Trajectory]:
        runner = RolloutRunner(
            lambda: make_env("code-single", runtime=runtime),
            policy,
            concurrency=concurrency,
            group_size=group,
            sampling=sampling,
            limits=limits or EpisodeLimits(),
            log_faults=False,  # reported once, below: the error, or one warning per fault
        )
        return await runner.run(list(tasks))

    async def both() -> tuple[list[Trajectory], list[Trajectory]]:
        # One event loop for every episode, so the policy's client (and its connections) is
        # made once and closed on the loop that opened it.
        try:
            # The sandbox and verifier now, so that a machine without one fails here with
            # SandboxUnavailable instead of in every episode.
            await asyncio.to_thread(lambda: runtime.function_verifier)
            t0 = time.perf_counter()
            greedy = await run(
                1, Sampling(temperature=0.0, max_tokens=max_tokens, timeout_s=policy_timeout_s)
            )
            timing["greedy_s"] = time.perf_counter() - t0
            if all(not tr.ok for tr in greedy):
                first = greedy[0].error
                why = f"in {first.where}: {first.message}" if first is not None else ""
                raise RefereeError(
                    f"no episode of {spec!r} reached a verdict: all {len(greedy)} were "
                    f"infrastructure faults; the first, {why}"
                )
            _warn_faults(greedy, "greedy")
            sampled: list[Trajectory] = []
            if samples:
                sampled = await run(
                    samples,
                    Sampling(
                        temperature=1.0, max_tokens=max_tokens, seed=0, timeout_s=policy_timeout_s
                    ),
                )
                _warn_faults(sampled, "sampled")
            return greedy, sampled
        finally:
            await _close(policy)

    timing: dict[str, float] = {}
    try:
        greedy, sampled = asyncio.run(both())
    finally:
        runtime.close()
    infra_errors = sum(not tr.ok for tr in greedy)
    pass_k: dict[int, float] = {}
    if samples:
        infra_errors += sum(not tr.ok for tr in sampled)
        outcomes: dict[str, list[bool]] = {t.id: [] for t in tasks}
        for tr in sampled:
            outcomes[tr.task_id].append(tr.passed)
        pass_k = pass_at_ks(outcomes, samples, ks)
    return EvalResult(
        task_ids=[t.id for t in tasks],
        passed=[tr.passed for tr in greedy],
        rewards=[tr.reward or 0.0 for tr in greedy],
        pass_at_k=pass_k,
        infra_errors=infra_errors,
        completions=[tr.final_text() for tr in greedy],
        completion_tokens=sum(tr.completion_tokens for tr in greedy),
        greedy_s=round(timing.get("greedy_s", 0.0), 2),
    )


def evaluate_batched(
    policy: Any, tasks: Sequence[Task], *, samples: int = 0, ks: Sequence[int] | None = None,
    max_tokens: int = 256, batch: int = 16, progress: Progress | None = None,
    verifiers: Any = None,
) -> EvalResult:  # fmt: skip
    """:func:`evaluate_policy` for a policy with ``generate_batch`` (a local model, loaded or
    being trained): each task's prompt, greedy, in fixed chunks of ``batch`` tasks
    (:mod:`referee.rollout.batched`: any task kind; reproducible), then ``samples`` sampled
    answers per task (temperature 1, seeded) for pass@k.

    Raises :class:`~referee.errors.RefereeError` when every greedy answer was an
    infrastructure fault."""
    if not tasks:
        raise ConfigError("no tasks to evaluate")
    t0 = time.perf_counter()
    greedy = [
        row[0]
        for row in judge_batched(
            policy,
            tasks,
            Sampling(temperature=0.0, max_tokens=max_tokens),
            batch=batch,
            verifiers=verifiers,
            progress=progress,
        )
    ]
    greedy_s = time.perf_counter() - t0
    infra = [j for j in greedy if j.infra_error is not None]
    if len(infra) == len(greedy):
        raise RefereeError(
            f"no answer reached a verdict: all {len(greedy)} were infrastructure faults; the "
            f"first: {infra[0].infra_error}"
        )
    for message, n in Counter(j.infra_error for j in infra).items():
        _log.warning("%d of %d greedy answers: infrastructure fault: %s", n, len(greedy), message)
    pass_k: dict[int, float] = {}
    infra_errors = len(infra)
    if samples:
        sampled = judge_batched(
            policy, tasks, Sampling(temperature=1.0, max_tokens=max_tokens, seed=0),
            samples=samples, batch=batch, verifiers=verifiers, progress=progress,
        )  # fmt: skip
        infra_errors += sum(j.infra_error is not None for row in sampled for j in row)
        outcomes = {t.id: [j.passed for j in row] for t, row in zip(tasks, sampled, strict=True)}
        pass_k = pass_at_ks(outcomes, samples, ks)
    return EvalResult(
        task_ids=[t.id for t in tasks],
        passed=[j.passed for j in greedy],
        rewards=[j.reward for j in greedy],
        pass_at_k=pass_k,
        infra_errors=infra_errors,
        completions=[j.text for j in greedy],
        completion_tokens=sum(j.completion_tokens for j in greedy),
        greedy_s=round(greedy_s, 2),
        ran=[j.ran for j in greedy],
    )
