"""Probe: OpenRLHF 0.11.2's agent executors (openrlhf/utils/agent.py) run an agent file and a reward
file on the CPU, with a fake vLLM engine; loaded the way vllm_engine._load_agent_executor does.

Run in the openrlhf venv: .venvs/openrlhf/bin/python tests/trainers/probes/openrlhf_probe.py
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
T0 = time.perf_counter()
from _tiny_tokenizer import tokenizer  # noqa: E402
from openrlhf.utils.agent import AgentExecutorBase, SingleTurnAgentExecutor  # noqa: E402

print(f"import openrlhf.utils.agent: {time.perf_counter() - T0:.1f}s")
tok = tokenizer()
GOOD, BAD = "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"


def load_agent_executor(path):  # == openrlhf/trainer/ray/vllm_engine.py:_load_agent_executor
    spec = importlib.util.spec_from_file_location("agent_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert issubclass(mod.AgentExecutor, AgentExecutorBase)
    return mod.AgentExecutor()


class FakeEngine:
    def __init__(self, replies):
        self.replies = list(replies)

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        text = self.replies.pop(0)
        ids = tok.encode(text, add_special_tokens=False)
        return SimpleNamespace(
            outputs=[SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)]
        )


def params():
    return SimpleNamespace(max_tokens=None, logprobs=None)


async def main():
    prompt = "user: write add(a, b)\nassistant: "
    ex = load_agent_executor(os.path.join(HERE, "plugins", "openrlhf_agent.py"))
    t = time.perf_counter()
    one = await ex.execute(prompt, "task-add", params(), 512, tok, FakeEngine([GOOD]))
    two = await ex.execute(prompt, "task-add", params(), 512, tok, FakeEngine([BAD, GOOD]))
    print(
        f"1 MultiTurnAgentExecutor: gold reward={one['reward']} ranges={one['action_ranges']}; "
        f"wrong-then-right reward={two['reward']} ranges={two['action_ranges']} {time.perf_counter() - t:.3f}s"
    )
    assert one["reward"] == 1.0 and two["reward"] == 1.0 and len(two["action_ranges"]) == 2
    print("  output keys:", sorted(one))

    st = SingleTurnAgentExecutor(os.path.join(HERE, "plugins", "openrlhf_reward.py"))
    good = await st.execute(prompt, "task-add", params(), 512, tok, FakeEngine([GOOD]))
    bad = await st.execute(prompt, "task-add", params(), 512, tok, FakeEngine([BAD]))
    print(
        f"2 SingleTurnAgentExecutor(reward .py): gold reward={good['reward']} wrong={bad['reward']} "
        f"extra_logs={good['extra_logs']}"
    )
    assert float(good["reward"]) == 1.0 and float(bad["reward"]) == 0.0


asyncio.run(main())
print(f"openrlhf probe OK in {time.perf_counter() - T0:.1f}s")
