"""OpenRLHF's remote reward: ``POST /openrlhf/reward`` (``referee serve --compat openrlhf``).

What the OpenRLHF user writes (0.11.2; older releases call the flag ``--remote_rm_url``)::

    --reward.remote_url http://HOST:8000/openrlhf/reward --data.label_key task_id

OpenRLHF posts to the URL exactly as given. The dataset's label column carries the task id:
the id itself, or a JSON object with a ``task_id`` key (:mod:`.rewards`). **This route takes no
token** (OpenRLHF sends none): serve it on a trusted network only.

Request (one sample per call from OpenRLHF's rollout executor, lists of one)::

    {"query": [prompt + response text], "prompts": [prompt text], "labels": [label]}

``query`` is the decoded prompt and response tokens, special tokens kept. The response is what
follows the prompt in it: the prompt is stripped when ``query`` starts with it (else after its
first occurrence, else after the prompt's last 256 characters: the executor cuts a prompt too
long for ``--max_len`` from the left). No prompt in the query at all is a 422.

Reply, lists as long as ``query``::

    {"rewards": [float], "scores": [float], "extra_logs": {"passed": [0.0|1.0],
     "tests_passed": [n], "tests_total": [n], "flags": [n]}}

``rewards`` and ``scores`` are the verifier's reward (the share of hidden tests passed).

Errors: an unknown task id or unreadable label is a 422 JSON error; OpenRLHF retries it (5 tries,
1 s apart), then logs it and leaves the sample's reward ``None``: loud, never a silent 0. An
infrastructure error (the sandbox failed, the deadline killed the work) is a 503 for the same
reason: OpenRLHF has no "skip" value, and a 0 would train on a failure that was not the
model's. At the admission limit the request waits (up to 30 s, then 429).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from referee.service.compat.rewards import count_tests, judge, task_id_of
from referee.service.http_errors import ApiError
from referee.service.schemas import MAX_TEXT
from referee.service.state import Service

__all__ = ["ROUTES", "router"]

PATH = "/openrlhf/reward"
ROUTES = [f"POST {PATH}"]
#: Samples in one request (OpenRLHF's executor sends one).
MAX_SAMPLES = 4096
_TAIL = 256

router = APIRouter()

Label = str | dict[str, Any] | None


class RewardBody(BaseModel):
    # Other keys are ignored: a later OpenRLHF may send more.
    model_config = ConfigDict(extra="ignore", strict=True)

    query: list[str] = Field(min_length=1, max_length=MAX_SAMPLES)
    prompts: list[str] = Field(min_length=1, max_length=MAX_SAMPLES)
    labels: list[Label] = Field(min_length=1, max_length=MAX_SAMPLES)

    @model_validator(mode="after")
    def _same_lengths(self) -> RewardBody:
        if not len(self.query) == len(self.prompts) == len(self.labels):
            raise ValueError(
                f"query, prompts and labels must be lists of the same length (got "
                f"{len(self.query)}, {len(self.prompts)}, {len(self.labels)})"
            )
        if any(len(q) > MAX_TEXT for q in self.query):
            raise ValueError(f"a query is longer than {MAX_TEXT} characters")
        return self


def response_of(query: str, prompt: str) -> str:
    """The response part of ``query`` (prompt + response); see the module.

    >>> response_of("Q: 1+2? A: 3", "Q: 1+2? ")
    'A: 3'
    """
    if query.startswith(prompt):
        return query[len(prompt) :]
    at = query.find(prompt) if prompt else -1
    if at >= 0:
        return query[at + len(prompt) :]
    tail = prompt[-_TAIL:]
    at = query.find(tail) if tail.strip() else -1
    if at >= 0:
        return query[at + len(tail) :]
    raise ApiError(
        422,
        "prompt_not_in_query",
        "the query does not contain its prompt, so the response cannot be told apart from it; "
        "send query = prompt + response and the prompt as given to the model",
    )


@router.post(PATH)
async def reward(body: RewardBody, request: Request) -> dict[str, Any]:
    service: Service = request.app.state.service
    samples = [
        (task_id_of(label), response_of(query, prompt))
        for query, prompt, label in zip(body.query, body.prompts, body.labels, strict=True)
    ]
    verdicts = await judge(service, samples, PATH)
    rewards = [v.reward for v in verdicts]
    counts = [count_tests(v) for v in verdicts]
    return {
        "rewards": rewards,
        "scores": rewards,
        "extra_logs": {
            "passed": [float(v.passed) for v in verdicts],
            "tests_passed": [float(p) for p, _ in counts],
            "tests_total": [float(n) for _, n in counts],
            "flags": [float(len(v.flags)) for v in verdicts],
        },
    }
