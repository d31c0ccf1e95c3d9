"""Reading a submitted model: a law from the task's candidates and a number for each of its
parameters, nothing else.

A submission is JSON, ``{"law": NAME, "params": {NAME: NUMBER, ...}}``: the ``submit`` tool's
arguments, or the last fenced ```` ```json ```` block of a model's text (else the whole text,
if it is a JSON object). No code is run: the judge predicts with its own simulator, so a
submission cannot see the held-out conditions it is judged on, nor answer them itself. Every
way of not being such a model (prose, code, a table of observations, predictions, a law not
offered, a missing, extra, non-finite or out-of-bounds parameter) is a
:class:`SubmissionError` whose message says which, in one line.

>>> from referee.domains.lab.population import POPULATION
>>> read_submission('{"law": "logistic", "params": {"r": 0.3, "K": 800}}',
...                 POPULATION, ["logistic"])
Model(law='logistic', params={'r': 0.3, 'K': 800.0})
>>> read_submission('{"law": "logistic", "params": {"r": NaN, "K": 800}}',
...                 POPULATION, ["logistic"])
Traceback (most recent call last):
...
referee.domains.lab.submission.SubmissionError: the submission is not JSON: NaN is not a number
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from referee.domains.lab.system import System

__all__ = ["MAX_CHARS", "Model", "SubmissionError", "model_json", "read_submission"]

#: A longer submission is refused unread: a model is a few numbers.
MAX_CHARS = 4000

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


class SubmissionError(ValueError):
    """The text is not a model of the task's form; the message says why, in one line."""


@dataclass(frozen=True)
class Model:
    """A submitted model: one of the task's laws, with its parameters."""

    law: str
    params: dict[str, float]


def model_json(law: str, params: dict[str, float]) -> str:
    """The submission text of ``law`` with ``params`` (what the reference answers are).

    >>> model_json("logistic", {"r": 0.5, "K": 100.0})
    '{"law": "logistic", "params": {"r": 0.5, "K": 100.0}}'
    """
    return json.dumps({"law": law, "params": params})


def _no_constant(name: str) -> Any:
    raise SubmissionError(f"the submission is not JSON: {name} is not a number")


def read_submission(text: str, system: System, offered: list[str]) -> Model:
    """The model ``text`` submits for a task of ``system`` whose candidate laws are
    ``offered``; a :class:`SubmissionError` if it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise SubmissionError("nothing was submitted")
    if len(text) > MAX_CHARS:
        raise SubmissionError(f"the submission is {len(text)} characters; a model fits in 4000")
    blocks = _FENCE.findall(text)
    body = blocks[-1] if blocks else text
    try:
        data = json.loads(body, parse_constant=_no_constant)
    except SubmissionError:
        raise
    except (ValueError, RecursionError) as e:  # JSONDecodeError, a huge integer, deep nesting
        why = e.msg if isinstance(e, json.JSONDecodeError) else type(e).__name__
        raise SubmissionError(
            f"the submission is not JSON ({why}); submit "
            '{"law": NAME, "params": {NAME: NUMBER, ...}}'
        ) from None
    if not isinstance(data, dict) or set(data) != {"law", "params"}:
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise SubmissionError(f"a model is an object with keys law and params only, got {keys}")
    law = data["law"]
    if not isinstance(law, str) or law not in offered:
        raise SubmissionError(f"law must be one of {', '.join(offered)}, got {str(law)[:40]!r}")
    params = data["params"]
    declared = system.laws[law].params
    names = [p.name for p in declared]
    if not isinstance(params, dict) or sorted(params) != sorted(names):
        got = sorted(params)[:8] if isinstance(params, dict) else type(params).__name__
        raise SubmissionError(f"params of {law} must be exactly {', '.join(names)}, got {got}")
    values: dict[str, float] = {}
    for p in declared:
        v = params[p.name]
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise SubmissionError(f"parameter {p.name} must be a number")
        try:
            v = float(v)
        except OverflowError:
            v = math.inf
        if not math.isfinite(v):
            raise SubmissionError(f"parameter {p.name} must be a finite number")
        if not p.lo <= v <= p.hi:
            raise SubmissionError(f"parameter {p.name} must be between {p.lo:g} and {p.hi:g}")
        values[p.name] = v
    return Model(law, values)
