"""Helpers of the environment tests: OpenAI-format messages, and running a coroutine."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def call(name: str, call_id: str | None = None, **args: Any) -> dict[str, Any]:
    """One OpenAI-format tool call."""
    return {
        "id": call_id or f"call-{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def say(*calls: dict[str, Any], content: str = "") -> dict[str, Any]:
    """An assistant message with these tool calls."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg
