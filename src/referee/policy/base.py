"""The ``Policy`` contract: given the conversation so far, produce the next assistant message.

Three kinds ship with referee: an OpenAI-compatible chat endpoint (vLLM, SGLang, any server),
a local transformers model, and a scripted policy for tests. Anything with an async
``generate`` of this shape is a policy::

    class Echo:
        name = "echo"
        async def generate(self, messages, *, tools=None, sampling=Sampling()):
            return Generation(message={"role": "assistant", "content": messages[-1]["content"]})

A policy that cannot answer (the server is down, the request timed out) raises
:class:`~referee.errors.PolicyError`; the rollout runner records it as an infrastructure
error on the trajectory and retries within its bounds. A policy that answered, but with
nothing usable as an action (a server that returned no choices), raises
:class:`PolicyOutputError`: that is recorded as a model error and not retried.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from referee.errors import PolicyError

__all__ = ["Generation", "Policy", "PolicyOutputError", "Sampling"]


class PolicyOutputError(PolicyError):
    """The policy answered, but with nothing usable as an assistant message (a model error)."""


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters, as the OpenAI API names them."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    stop: tuple[str, ...] = ()
    timeout_s: float = 120.0  # one request


@dataclass(frozen=True)
class Generation:
    """One assistant message, with the token-level data where the policy has it."""

    message: dict[str, Any]  # {"role": "assistant", "content": ..., "tool_calls": [...]}
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None  # of the completion
    logprobs: list[float] | None = None  # one per completion token
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""  # "stop", "length", "tool_calls"
    latency_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    name: str

    async def generate(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling = ...,
    ) -> Generation: ...
