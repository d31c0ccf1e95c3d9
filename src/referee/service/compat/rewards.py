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

import json
import re
from collections.abc import Sequence
from typing import Any

from referee.envs.answers import extract_code, extract_diff, to_completion
from referee.service.http_errors import ApiError
from referee.service.state import Service
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = [
    "MAX_ID",
    "answer_for",
    "judge",
    "strip_end_tokens",
    "task_id_of",
]

MAX_ID = 512
#: The longest a reward request waits for room at the admission limit: a reward a little late
#: is worth more to a trainer than a 429 its client retries a second later, but its client gives
#: up after 120 s (slime) or 180 s (OpenRLHF), and the verification itself may take the server's
#: whole --deadline after the wait.
MAX_WAIT_S = 30.0

# Special tokens a tokenizer's decode keeps at the end of a response (skip_special_tokens=False).
_TOKEN = (
    r"(?:<\|[A-Za-z0-9_.:-]{1,40}\|>|</s>|<eos>|<end_of_turn>"
    r"|<\uff5cend\u2581of\u2581sentence\uff5c>)"  # DeepSeek end of sentence
)
_END_TOKENS = re.compile(rf"{_TOKEN}(?:\s*{_TOKEN})*\s*\Z")
_END_TAIL = 512


def task_id_of(label: Any) -> str:
    """The task id a label carries (see the module); :class:`ApiError` 422 when none."""
    value: Any = label
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            value = json.loads(label)
        except ValueError:
            value = label  # not JSON after all: an id that starts with a brace
    if isinstance(value, dict):
        value = value.get("task_id")
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID:
        raise ApiError(
            422,
            "invalid_label",
            f"cannot read a task id from the label {_shown(label)}; the label must be the task "
            'id (a string, e.g. "HumanEval/0") or a JSON object with a "task_id" string '
            "(GET /v1/tasks lists the ids the server holds)",
        )
    return value.strip()


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def strip_end_tokens(text: str) -> str:
    """``text`` without the end-of-turn special tokens a decode left at its end.

    >>> strip_end_tokens("    return 1\\n<|im_end|><|endoftext|>")
    '    return 1\\n'
    """
    start = max(0, len(text) - _END_TAIL)  # only the end: no scan of a long hostile text
    match = _END_TOKENS.search(text, start)
    return text if match is None else text[: match.start()]


def answer_for(task: Task, text: str) -> str:
    """The completion the verifier judges for ``task`` when the model wrote ``text``."""
    text = strip_end_tokens(text)
    if task.kind == TaskKind.FUNCTION:
        code = extract_code(text) or ""
        prompt = str(task.payload.get("code_prompt", ""))
        entry = str(task.payload.get("entry_point", ""))
        return to_completion(prompt, code, entry) if code.strip() else ""
    if task.kind.is_repository:
        return extract_diff(text) or text
    return text


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
