"""slime's remote reward model: ``POST /slime/reward`` (``referee serve --compat slime``).

What the slime user writes::

    --rm-type remote_rm --rm-url http://HOST:8000/slime/reward --label-key task_id

or, to log more than the reward, ``--rm-url 'http://HOST:8000/slime/reward?format=dict'
--reward-key reward`` (slime then reads ``reply["reward"]``; ``--eval-reward-key reward`` for
evaluation). slime posts to the URL exactly as given, one request per sample. The label carries
the task id: the id itself, or a JSON object with a ``task_id`` key (:mod:`.rewards`). **This
route takes no token** (slime sends none): serve it on a trusted network only.

Request: ``{"prompt": str or [{role, content}], "response": str, "label": str or null}`` (other
keys are ignored). The response is the model's text; the prompt is not needed.

Reply: the reward as a bare JSON number (the verifier's reward: the share of hidden tests
passed), which is what slime uses as the sample's reward when ``--reward-key`` is unset. With
``?format=dict``: ``{"reward": float, "passed": 0|1, "tests_passed": n, "tests_total": n,
"flags": n, "task_id": str}``.

Errors: an unknown task id, a missing or unreadable label is a 422 JSON error; an
infrastructure error (the sandbox failed, the deadline killed the work) is a 503. slime retries
any non-2xx 10 times with back-off, then the rollout fails: loud, never a reward of 0 the model
did not earn. At the admission limit the request waits (up to 30 s, then 429).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from referee.service.compat.rewards import count_tests, judge, task_id_of
from referee.service.http_errors import ApiError
from referee.service.schemas import MAX_TEXT
from referee.service.state import Service

__all__ = ["ROUTES", "router"]

PATH = "/slime/reward"
ROUTES = [f"POST {PATH}", f"POST {PATH}?format=dict"]

router = APIRouter()


class SlimeBody(BaseModel):
    # slime's Sample has more fields; a custom caller may add some. Only these are read.
    model_config = ConfigDict(extra="ignore", strict=True)

    response: str = Field(max_length=MAX_TEXT)
    label: str | dict[str, Any] | None = None
    prompt: str | list[dict[str, Any]] | None = None


@router.post(PATH)
async def reward(
    body: SlimeBody,
    request: Request,
    shape: Literal["number", "dict"] = Query("number", alias="format"),
) -> Any:
    service: Service = request.app.state.service
    if body.label is None:
        raise ApiError(
            422,
            "invalid_label",
            "the sample has no label; give slime --label-key naming the dataset column that "
            "holds the task id",
        )
    task_id = task_id_of(body.label)
    verdict = (await judge(service, [(task_id, body.response)], PATH))[0]
    if shape == "number":
        return JSONResponse(verdict.reward)
    passed, total = count_tests(verdict)
    return {
        "reward": verdict.reward,
        "passed": int(verdict.passed),
        "tests_passed": passed,
        "tests_total": total,
        "flags": len(verdict.flags),
        "task_id": verdict.task_id,
    }
