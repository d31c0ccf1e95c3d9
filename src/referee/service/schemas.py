"""The native API's request bodies, validated before any work starts.

Unknown fields are refused (a misspelt ``timout_s`` must not silently mean the default), and
sizes are bounded so a single request cannot pin the server.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "EnvBody",
    "ExecBody",
    "OpenSessionBody",
    "RestoreBody",
    "SampleBody",
    "SessionOptions",
    "StepBody",
    "VerifyBody",
]

MAX_ID = 512
MAX_TEXT = 4 * 1024 * 1024  # characters in one completion or program


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SampleBody(_Body):
    task_id: str = Field(min_length=1, max_length=MAX_ID)
    completion: str = Field(max_length=MAX_TEXT)
    #: A program task's language (``"cpp"``, ``"python"``, ...), over the tag of the
    #: completion's fenced block; ignored for other kinds, as ``referee verify`` ignores it.
    language: str | None = Field(default=None, min_length=1, max_length=32)


class VerifyBody(_Body):
    samples: list[SampleBody] = Field(min_length=1, max_length=100_000)
    #: Seconds this request may take (default and ceiling: the server's ``--deadline``).
    deadline_s: float | None = Field(default=None, gt=0, le=3600)


class ExecBody(_Body):
    code: str = Field(max_length=MAX_TEXT)
    language: str = Field(default="python", max_length=32)
    stdin: str | None = Field(default=None, max_length=MAX_TEXT)
    #: Files put into the workspace before the run: relative path -> text.
    files: dict[str, str] = Field(default_factory=dict, max_length=256)
    timeout_s: float = Field(default=10.0, gt=0, le=3600)
    memory_mb: int = Field(default=512, ge=16, le=65536)


class SessionOptions(_Body):
    """How the environment is made: the options of :class:`referee.envs.CodeEnv` a remote
    caller may choose (None: the environment's default)."""

    #: False: tools even for function tasks; True: one answer; None: per task.
    single_turn: bool | None = None
    #: Offer only these tools (a small model's prompt stays short).
    tools: list[str] | None = Field(default=None, min_length=1, max_length=32)
    max_turns: int | None = Field(default=None, ge=1, le=256)


class EnvBody(_Body):
    env: str = Field(default="code", max_length=64)
    options: SessionOptions = Field(default_factory=SessionOptions)


class OpenSessionBody(EnvBody):
    task_id: str = Field(min_length=1, max_length=MAX_ID)


class StepBody(_Body):
    #: The assistant's message as the OpenAI chat API writes it, tool calls included.
    message: dict[str, Any]
    deadline_s: float | None = Field(default=None, gt=0, le=3600)

    @field_validator("message")
    @classmethod
    def _assistant(cls, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("role") != "assistant":
            raise ValueError('a step takes the assistant\'s message: {"role": "assistant", ...}')
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            raise ValueError("message.content must be a string, a list of parts, or null")
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise ValueError("message.tool_calls must be a list")
        return message


class RestoreBody(_Body):
    snapshot_id: str = Field(min_length=1, max_length=128)
