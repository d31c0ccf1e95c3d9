"""Environments: where a policy acts on a task, and what the verifier then judges.

:class:`Environment` is the contract (async ``reset``/``step``/``verify``, ``snapshot`` and
``restore`` for branching, :class:`SyncEnvironment` for synchronous callers); :class:`CodeEnv`
runs function and repository tasks with tools in the sandbox, or single-turn.

>>> from referee.envs import make_env, CodeRuntime                        # doctest: +SKIP
>>> with CodeRuntime() as rt:                                            # doctest: +SKIP
...     env = SyncEnvironment(make_env("code", runtime=rt, single_turn=False))
...     messages = env.reset(task)
...     result = env.step({"role": "assistant", "content": "", "tool_calls": [
...         {"id": "1", "type": "function",
...          "function": {"name": "submit", "arguments": "{}"}}]})
...     env.verify().reward

``examples/custom_env.py`` shows a whole custom environment in a few dozen lines.
"""

from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult, SyncEnvironment
from referee.envs.budget import Budget
from referee.envs.code import CodeEnv, CodeSnapshot
from referee.envs.registry import env_names, make_env, register_env
from referee.envs.runtime import CodeRuntime
from referee.envs.tools import ToolCall, function_tool, parse_tool_calls, tool_message

__all__ = [
    "Budget",
    "ChatMessage",
    "CodeEnv",
    "CodeRuntime",
    "CodeSnapshot",
    "Environment",
    "EpisodeLimits",
    "StepResult",
    "SyncEnvironment",
    "ToolCall",
    "env_names",
    "function_tool",
    "make_env",
    "parse_tool_calls",
    "register_env",
    "tool_message",
]
