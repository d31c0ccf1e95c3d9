"""Tool calls written in a model's plain text, for trainers whose environments see text only.

SkyRL (and verifiers' and AReaL's token-level loops) hand the environment the model's decoded
text, not an API message with ``tool_calls``. referee reads tool calls in that text in the
Hermes format that Qwen2.5/Qwen3 chat templates (and so most RL-on-code runs) use::

    <tool_call>
    {"name": "write_file", "arguments": {"path": "solution.py", "content": "..."}}
    </tool_call>

:func:`parse_text_action` turns such text into the OpenAI-format assistant message that
:class:`~referee.envs.code.CodeEnv` steps on; a block whose JSON is broken becomes a call that
:func:`~referee.envs.tools.parse_tool_calls` marks as malformed, so the model is told, not the
trainer. :func:`tools_prompt` says the format and the tools' schemas (for the system message),
and :func:`observation_text` writes tool results back as ``<tool_response>`` blocks in one user
message (the role SkyRL's bundled environments use for observations).

>>> msg = parse_text_action('Let me try.\\n<tool_call>{"name": "submit", "arguments": {}}'
...                         '</tool_call><|im_end|>')
>>> msg["content"], msg["tool_calls"][0]["function"]["name"]
('Let me try.', 'submit')
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from referee.envs.answers import message_text, strip_end_tokens
from referee.envs.base import ChatMessage

__all__ = ["observation_text", "parse_text_action", "tools_prompt"]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_NAME = re.compile(r'"name"\s*:\s*"([^"]{1,64})"')


def _call(index: int, body: str) -> dict[str, Any]:
    call_id = f"call_{index}"
    try:
        obj = json.loads(body)
    except json.JSONDecodeError:
        guess = _NAME.search(body)
        # The raw text as the arguments: parse_tool_calls reports it as invalid JSON.
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": guess[1] if guess else "invalid", "arguments": body},
        }
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        # No name: parse_tool_calls answers with the shape a call needs.
        return {"id": call_id, "type": "function", "function": {}}
    args = obj.get("arguments", obj.get("parameters", {}))
    return {
        "id": call_id,
        "type": "function",
        "function": {
            "name": obj["name"],
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }


def parse_text_action(text: str) -> ChatMessage:
    """The assistant message ``text`` stands for: its ``<tool_call>`` blocks as ``tool_calls``
    and the rest as ``content`` (end-of-turn tokens stripped)."""
    text = strip_end_tokens(text)
    calls = [_call(i, m[1]) for i, m in enumerate(_TOOL_CALL.finditer(text))]
    message: ChatMessage = {"role": "assistant", "content": text}
    if calls:
        message["content"] = _TOOL_CALL.sub("", text).strip()
        message["tool_calls"] = calls
    return message


def tools_prompt(schemas: Sequence[dict[str, Any]]) -> str:
    """The system-message part that offers ``schemas`` (OpenAI ``tools`` entries) in the
    ``<tool_call>`` format."""
    lines = "\n".join(json.dumps(s["function"], sort_keys=True) for s in schemas)
    return (
        "# Tools\n\nYou may call one or more of these functions; their signatures are within "
        f"<tools></tools>:\n<tools>\n{lines}\n</tools>\n\nTo call one, write a JSON object with "
        "its name and arguments within <tool_call></tool_call> tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def observation_text(observations: Sequence[ChatMessage]) -> str:
    """Tool results (``<tool_response>`` blocks) and any other message's text, joined."""
    parts = []
    for m in observations:
        text = message_text(m)
        parts.append(
            f"<tool_response>\n{text}\n</tool_response>" if m.get("role") == "tool" else text
        )
    return "\n".join(parts)
