"""Tool calls in the OpenAI chat format: schemas out, calls in, tool messages back.

Every environment with tools needs the same three things, so they live here:

* :func:`function_tool` writes one entry of the ``tools`` list a chat API takes;
* :func:`parse_tool_calls` reads an assistant message's ``tool_calls`` into :class:`ToolCall`
  values, turning anything malformed (not a list, no name, arguments that are not a JSON
  object) into a call with ``error`` set, never into an exception: a model that writes a
  broken call gets told so and may try again;
* :func:`tool_message` writes the ``{"role": "tool", ...}`` answer to one call.

>>> schema = function_tool("add", "Add two numbers.", {"a": {"type": "number"},
...                        "b": {"type": "number"}})
>>> schema["function"]["parameters"]["required"]
['a', 'b']
>>> msg = {"role": "assistant", "content": "", "tool_calls": [
...     {"id": "c1", "type": "function",
...      "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]}
>>> [(c.name, c.arguments, c.error) for c in parse_tool_calls(msg)]
[('add', {'a': 1, 'b': 2}, '')]
>>> tool_message(parse_tool_calls(msg)[0], "3")["tool_call_id"]
'c1'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from referee.envs.base import ChatMessage

__all__ = ["ToolCall", "check_arguments", "function_tool", "parse_tool_calls", "tool_message"]


@dataclass(frozen=True)
class ToolCall:
    """One call as the model wrote it; ``error`` says why it cannot be run (empty: it can)."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def function_tool(
    name: str,
    description: str,
    properties: dict[str, dict[str, Any]] | None = None,
    *,
    required: list[str] | None = None,
) -> dict[str, Any]:
    """One tool schema in the OpenAI ``tools`` format; every property is required by default."""
    props = properties or {}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": list(props) if required is None else required,
                "additionalProperties": False,
            },
        },
    }


def parse_tool_calls(message: ChatMessage) -> list[ToolCall]:
    """The tool calls of an assistant message, malformed ones carrying an ``error``.

    Arguments may be a JSON string (as the API sends them) or an already decoded object (as
    some local chat templates produce). A call without an id gets ``call_<index>``, so that its
    answer can still name it.
    """
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [ToolCall(id="call_0", name="", error="tool_calls must be a list of calls")]
    calls = []
    for i, item in enumerate(raw):
        call_id = f"call_{i}"
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            call_id = item["id"]
        fn = item.get("function") if isinstance(item, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            calls.append(
                ToolCall(
                    id=call_id,
                    name="",
                    error='a tool call needs {"function": {"name": ..., "arguments": "{...}"}}',
                )
            )
            continue
        name, args = fn["name"], fn.get("arguments")
        if args is None or args == "":
            args = {}
        elif isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError as e:
                calls.append(
                    ToolCall(
                        id=call_id,
                        name=name,
                        error=f"arguments are not valid JSON ({e.msg} at column {e.colno})",
                    )
                )
                continue
        if not isinstance(args, dict):
            calls.append(ToolCall(id=call_id, name=name, error="arguments must be a JSON object"))
            continue
        calls.append(ToolCall(id=call_id, name=name, arguments=args))
    return calls


def check_arguments(call: ToolCall, schema: dict[str, Any]) -> str:
    """Why ``call``'s arguments do not fit ``schema`` (one :func:`function_tool` entry), or "".

    Checks what a model gets wrong in practice: missing required arguments, unknown ones, and
    the JSON types of the values (string, integer, number, boolean, array, object).
    """
    params = schema["function"]["parameters"]
    props: dict[str, dict[str, Any]] = params.get("properties", {})
    missing = [k for k in params.get("required", []) if k not in call.arguments]
    if missing:
        return f"missing argument(s) {', '.join(missing)} for {call.name}"
    unknown = [k for k in call.arguments if k not in props]
    if unknown:
        allowed = ", ".join(props) or "none"
        return f"unknown argument(s) {', '.join(unknown)} for {call.name} (it takes: {allowed})"
    for key, value in call.arguments.items():
        wanted = props[key].get("type")
        if isinstance(wanted, str) and not _has_type(value, wanted):
            return f"argument {key} of {call.name} must be of type {wanted}"
        if wanted == "array" and isinstance(value, list):
            inner = props[key].get("items", {}).get("type")
            if isinstance(inner, str) and not all(_has_type(v, inner) for v in value):
                return f"argument {key} of {call.name} must be a list of {inner}s"
    return ""


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _has_type(value: Any, wanted: str) -> bool:
    if wanted not in _JSON_TYPES:
        return True
    if isinstance(value, bool) and wanted in ("integer", "number"):
        return False  # JSON true is not 1
    return isinstance(value, _JSON_TYPES[wanted])


def tool_message(call: ToolCall, content: str) -> ChatMessage:
    """The answer to one call, in the format the chat API expects after the assistant turn."""
    return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
