"""OpenRLHF's remote reward (``openrlhf`` 0.11.2, ``openrlhf/utils/agent.py``).

``--reward.remote_url URL[,URL...]`` makes each vLLM actor build
``SingleTurnAgentExecutor(remote_rm_url)``; after generating one sample it posts
``{"query": [prompt+response text], "prompts": [prompt], "labels": [label]}`` to the URL as given
(no path appended) and reads ``rewards``, ``scores`` (falls back to ``rewards``) and
``extra_logs`` from the JSON object it gets back. Any failure (5 tries, 1 s apart) is logged at
INFO level and leaves the sample's reward None.

``openrlhf.utils`` imports torch and transformers (referee's pins), so this module imports them.
"""

from __future__ import annotations

import asyncio
import sys
from copy import deepcopy
from types import SimpleNamespace
from typing import Any

from openrlhf.utils.agent import SingleTurnAgentExecutor


class _Tokenizer:
    """The two calls the executor makes: one 'token' per character."""

    def __call__(self, text: str, add_special_tokens: bool = False, return_tensors: str = "pt"):  # type: ignore[no-untyped-def]
        import numpy as np

        return {"input_ids": np.array([[ord(c) for c in text]])}

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(i) for i in ids)


class _Engine:
    """Stands in for the vLLM engine: always answers ``response``."""

    def __init__(self, response: str) -> None:
        self.response = response

    async def generate(
        self, prompt_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> Any:
        out = SimpleNamespace(
            token_ids=[ord(c) for c in self.response],
            text=self.response,
            finish_reason="stop",
            logprobs=None,
        )
        return SimpleNamespace(outputs=[out])


def reward_for(url: str | list[str], prompt: str, label: str, response: str) -> dict[str, Any]:
    """One sample through the executor, as the trainer runs it; returns the executor's output
    (its ``reward``, ``scores`` and ``extra_logs`` come from the server's reply)."""
    executor = SingleTurnAgentExecutor(remote_rm_url=url)
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    return asyncio.run(
        executor.execute(prompt, label, deepcopy(params), 4096, _Tokenizer(), _Engine(response))
    )


def fetch(
    url: str | list[str], queries: list[str], prompts: list[str], labels: list[str]
) -> list[Any]:
    """The HTTP call alone: one JSON reply per server the batch was sharded over."""
    executor = SingleTurnAgentExecutor(remote_rm_url=url)
    return asyncio.run(executor._fetch_rewards_via_http(queries, prompts, labels))


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080/reward"
    out = reward_for(url, "What is 1+2? ", "task-id-1", "3")
    print({k: out[k] for k in ("reward", "scores", "extra_logs")})
