"""An environment's tool calls checked against its tools before anything runs.

>>> from referee.envs.tools import ToolCall, function_tool
>>> submit = function_tool("submit", "Hand in the answer.", {"query": {"type": "string"}})
>>> schemas = tool_schemas([submit])
>>> tool_call_error(ToolCall("1", "drop", {}), schemas)
"unknown tool 'drop'; the tools are submit"
>>> tool_call_error(ToolCall("2", "submit", {"query": "SELECT 1"}), schemas)
''
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from referee.envs.tools import ToolCall, check_arguments

__all__ = ["tool_call_error", "tool_schemas"]


def tool_schemas(tools: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The tools (OpenAI format, :func:`referee.envs.tools.function_tool`) by name."""
    return {tool["function"]["name"]: tool for tool in tools}


def tool_call_error(call: ToolCall, schemas: Mapping[str, dict[str, Any]]) -> str:
    """Why ``call`` cannot run: its own parse error, an unknown tool (naming the tools), or
    arguments its schema refuses; "" when it can."""
    if call.error:
        return call.error
    schema = schemas.get(call.name)
    if schema is None:
        return f"unknown tool {call.name!r}; the tools are {', '.join(schemas)}"
    return check_arguments(call, schema)
