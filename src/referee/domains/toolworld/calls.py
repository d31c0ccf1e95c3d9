"""Reading tool calls out of an answer: a JSON list of calls, or a model's text with
hermes-style ``<tool_call>{...}</tool_call>`` blocks.

A single-turn answer to a toolworld task is the whole plan, replayed against a fresh world by
the verifier. Each call is ``{"name": ..., "arguments": {...}}``; the OpenAI shape
``{"function": {"name", "arguments": "<json>"}}`` is taken too, and so is a chat transcript (a
list of messages: the assistant messages' ``tool_calls`` are the plan). What cannot be read
becomes a call with an ``error`` (the world then answers it with that error and it changes
nothing); text with no call at all is an empty plan (nothing done), whatever it claims.

>>> [c.name for c in parse_calls('[{"name": "get_order", "arguments": {"order_id": 3}}]')]
['get_order']
>>> text = 'Sure. <tool_call>{"name": "get_order", "arguments": {"order_id": 3}}</tool_call>'
>>> parse_calls(text)[0].arguments
{'order_id': 3}
>>> parse_calls("I refunded the order, all done!")
[]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_ANSWER_CHARS", "PlannedCall", "calls_json", "parse_calls"]

#: A longer answer is cut here before it is read (the calls in the rest are not made).
MAX_ANSWER_CHARS = 200_000
_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
# A plan written in a fenced ```json block (as models often write one), the last such block.
_JSON_BLOCK = re.compile(r"^```json[ \t]*\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class PlannedCall:
    """One call of a plan; ``error`` says why it cannot be made (empty: it can)."""

    name: str
    arguments: Any = field(default_factory=dict)
    error: str = ""


def _one(item: Any) -> PlannedCall:
    if not isinstance(item, dict):
        return PlannedCall("", error='a call is an object {"name": ..., "arguments": {...}}')
    inner = item.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else item
    name, args = fn.get("name"), fn.get("arguments", {})
    if not isinstance(name, str) or not name:
        return PlannedCall("", error='a call needs a "name"')
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            return PlannedCall(name, error=f"arguments are not valid JSON ({e.msg})")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return PlannedCall(name, error="arguments must be a JSON object")
    return PlannedCall(name, args)


def _from_messages(messages: list[Any]) -> list[PlannedCall]:
    """The calls of a chat transcript: every assistant message's ``tool_calls``, in order
    (tool messages, the world's answers then, are ignored: the replay makes its own)."""
    calls = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant":
            raw = m.get("tool_calls") or []
            calls += [_one(c) for c in (raw if isinstance(raw, list) else [raw])]
    return calls


def parse_calls(answer: str) -> list[PlannedCall]:
    """The calls of ``answer``: a JSON list (or one call object), bare or in the last fenced
    ```json block, else its hermes blocks.

    >>> len(parse_calls('The plan:\\n```json\\n[{"name": "get_order", "arguments": {}}]\\n```'))
    1
    """
    text = answer[:MAX_ANSWER_CHARS].strip()
    if not text.startswith(("[", "{")) and "<tool_call>" not in text:
        blocks = _JSON_BLOCK.findall(text)
        if blocks:
            text = blocks[-1].strip()
    if text.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, list):
            if any(isinstance(m, dict) and "role" in m for m in data):
                return _from_messages(data)
            return [_one(item) for item in data]
        if isinstance(data, dict):
            return [_one(data)]
    calls = []
    for block in _HERMES.findall(text):
        try:
            calls.append(_one(json.loads(block)))
        except json.JSONDecodeError as e:
            calls.append(PlannedCall("", error=f"a <tool_call> block is not valid JSON ({e.msg})"))
    return calls


def calls_json(calls: list[dict[str, Any]]) -> str:
    """A plan as the answer text the verifier reads (``hidden["reference"]``'s form)."""
    return json.dumps(
        [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls], sort_keys=True
    )
