"""Policies: what produces the assistant's next message.

* :class:`OpenAIPolicy`: any OpenAI-compatible chat server (vLLM, SGLang, ...), with tool
  calls, token ids and log-probabilities where the server returns them;
* :class:`TransformersPolicy`: a local transformers model;
* :class:`ScriptedPolicy`: replies written in advance, for tests and benchmarks;
* :func:`policy_from_spec`: one of them from a command-line string
  (``openai:http://host:8000/v1#model``, ``local:/path``, ``scripted:42``).

Both are imported on first use, so ``import referee.policy`` imports neither torch nor httpx.

>>> import asyncio
>>> from referee.policy import ScriptedPolicy, Sampling
>>> g = asyncio.run(ScriptedPolicy(["4"]).generate([{"role": "user", "content": "2+2?"}]))
>>> g.message
{'role': 'assistant', 'content': '4'}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from referee.policy.base import Generation, Policy, PolicyOutputError, Sampling
from referee.policy.scripted import ScriptedPolicy
from referee.policy.spec import policy_from_spec

if TYPE_CHECKING:
    from referee.policy.local import TransformersPolicy
    from referee.policy.openai_compat import OpenAIPolicy

__all__ = [
    "Generation",
    "OpenAIPolicy",
    "Policy",
    "PolicyOutputError",
    "Sampling",
    "ScriptedPolicy",
    "TransformersPolicy",
    "policy_from_spec",
]


def __getattr__(name: str) -> Any:
    if name == "TransformersPolicy":
        from referee.policy.local import TransformersPolicy

        return TransformersPolicy
    if name == "OpenAIPolicy":
        from referee.policy.openai_compat import OpenAIPolicy

        return OpenAIPolicy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
