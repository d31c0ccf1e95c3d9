"""What the reward protocols (OpenRLHF, slime) share: reading the task id out of a label, the
answer out of what the model wrote, and judging a batch with waiting admission.

Labels. The trainer's dataset column named by ``--label_key`` / ``--label-key`` reaches the
server as the sample's label. referee reads the task id from it in either of two forms:

* the task id itself: ``"HumanEval/0"``;
* a JSON object with a ``task_id`` key, as a string (``'{"task_id": "HumanEval/0"}'``, for a
  dataset whose label column already carries other fields) or as an object.

>>> task_id_of("HumanEval/0"), task_id_of('{"task_id": "HumanEval/0", "difficulty": 3}')
('HumanEval/0', 'HumanEval/0')

Answers. The model's text becomes the verifier's completion exactly as referee's own single-turn
environment reads a plain-text answer (``CodeEnv``): for a function task, the last fenced
```` ```python ```` block (else the whole text) turned into the text that continues the task's
code prompt (:func:`referee.envs.answers.to_completion`: a bare body, the whole function, or
the prompt repeated all work); for a repository task, the diff in it (else the text). A chat
model's end-of-turn token decoded at the end (``<|im_end|>``, ``</s>``...) is dropped first.

Infrastructure errors. A verdict that is an infrastructure error (the sandbox failed, the
deadline killed the work) is not a reward: the whole request gets a 503 naming it, so the
trainer's client retries, and never trains on a 0 the model did not earn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.envs.answers import answer_for
from referee.service.http_errors import ApiError
from referee.service.state import Service
from referee.tasks.labels import label_task_id_or_none
from referee.verify.verdict import Verdict

__all__ = [
    "MAX_ID",
    "answer_for",
    "judge",
    "task_id_of",
]

MAX_ID = 512
#: The longest a reward request waits for room at the admission limit: a reward a little late
#: is worth more to a trainer than a 429 its client retries a second later, but its client gives
#: up after 120 s (slime) or 180 s (OpenRLHF), and the verification itself may take the server's
#: whole --deadline after the wait.
MAX_WAIT_S = 30.0


def task_id_of(label: Any) -> str:
    """The task id a label carries (see the module; the rule is
    :func:`referee.tasks.labels.label_task_id_or_none`); :class:`ApiError` 422 when none."""
    value = label_task_id_or_none(label)
    if value is None or len(value) > MAX_ID:
        raise ApiError(
            422,
            "invalid_label",
            f"cannot read a task id from the label {_shown(label)}; the label must be the task "
            'id (a string, e.g. "HumanEval/0") or a JSON object with a "task_id" string '
            "(GET /v1/tasks lists the ids the server holds)",
        )
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


async def judge(service: Service, samples: Sequence[tuple[str, str]], route: str) -> list[Verdict]:
    """Verdicts for (task id, model text) pairs, in order: unknown ids are a 422 before any
    work, room at the admission limit is waited for (up to ``MAX_WAIT_S``; then 429), and any
    infrastructure error makes the whole request a 503 (see the module)."""
    engine = service.engine
    pairs = engine.resolve([(tid, "") for tid, _ in samples])  # 422 for unknown ids
    texts = [text for _, text in samples]
    completions = [
        (task.id, answer_for(task, text)) for (task, _), text in zip(pairs, texts, strict=True)
    ]
    wait_s = min(MAX_WAIT_S, engine.deadline_cap_s)
    async with service.admission.admit_waiting(len(completions), timeout_s=wait_s):
        verdicts = await engine.verify(completions)
    service.metrics.count_verdicts(verdicts)
    failed = [v for v in verdicts if v.infra_error]
    if failed:
        deadlined = sum(1 for v in failed if "deadline" in (v.infra_error or ""))
        if deadlined:
            service.metrics.deadlines.labels(route).inc(deadlined)
        first = failed[0]
        raise ApiError(
            503,
            "infra_error",
            f"{len(failed)} of {len(verdicts)} sample(s) could not be judged (an infrastructure "
            f"error, not the model's failure; first: {first.task_id}: {first.infra_error}); "
            "no reward is given for them: retry",
            {"Retry-After": "1"},
            infra_errors=[{"task_id": v.task_id, "infra_error": v.infra_error} for v in failed],
        )
    return verdicts


def count_tests(verdict: Verdict) -> tuple[int, int]:
    """(tests passed, tests run) of a verdict."""
    return sum(1 for t in verdict.tests if t.status == "passed"), len(verdict.tests)
