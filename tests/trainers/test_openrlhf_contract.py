"""Contract: OpenRLHF 0.11.2 loads referee's agent file and its ``MultiTurnAgentExecutor`` runs it.

Runs in the openrlhf venv (scripts/run-trainer-tests.sh openrlhf). The agent file is loaded by
OpenRLHF's own ``_load_agent_executor`` (``openrlhf/trainer/ray/vllm_engine.py``; a ``.py`` path,
module ``agent_module``, ``AgentExecutor()``), compiled from the installed source because its
module imports ray and vllm; vLLM is not here, so the engine is a stand-in
(``StandinEngine``: ``generate(prompt_token_ids, sampling_params, multi_modal_data=None)``
returning ``outputs[0].{token_ids, text, finish_reason, logprobs}``) replaying canned model text,
and the tokenizer is the probes' in-memory BPE stand-in (tests/trainers/probes/_tiny_tokenizer.py).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from _tiny_tokenizer import tokenizer
from openrlhf.utils.agent import AgentExecutorBase, MultiTurnAgentExecutor

import referee.train.openrlhf as adapter
from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import lookup
from referee.verify.redteam import EXPLOITS

FIXTURE = Path(__file__).parent / "fixtures" / "he3.jsonl"
TASKS = read_tasks(FIXTURE)
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}
TOK = tokenizer()


def openrlhf_loader():
    """OpenRLHF's own ``_load_agent_executor``, compiled from its installed source: the module
    (``openrlhf.trainer.ray.vllm_engine``) imports ray and vllm, which are not in this venv."""
    spec = importlib.util.find_spec("openrlhf.trainer.ray")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "vllm_engine.py"
    tree = ast.parse(path.read_text())
    fn = next(n for n in tree.body if getattr(n, "name", "") == "_load_agent_executor")
    namespace = {"AgentExecutorBase": AgentExecutorBase}
    exec(compile(ast.Module([fn], type_ignores=[]), str(path), "exec"), namespace)
    return namespace["_load_agent_executor"]


_load_agent_executor = openrlhf_loader()
PROMPT = "<|im_start|>user\nwrite the function<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv(lookup.TASKS_ENV, str(FIXTURE))


class StandinEngine:
    """A stand-in for OpenRLHF's vLLM engine: replays ``replies`` in order."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        self.prompts.append(TOK.decode(prompt_token_ids, skip_special_tokens=False))
        text = self.replies.pop(0)
        ids = TOK.encode(text, add_special_tokens=False)
        out = SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def params():
    return SimpleNamespace(max_tokens=None, logprobs=None)


def gold(task) -> str:
    return "```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"


def exploit(task, name) -> str:
    return "```python\n" + task.payload["code_prompt"] + EXPLOIT[name].completion(task) + "```"


def tool_call(name, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def run(executor, label, replies, max_length=4096):
    engine = StandinEngine(replies)
    out = asyncio.run(executor.execute(PROMPT, label, params(), max_length, TOK, engine))
    return out, engine


@pytest.fixture(scope="module")
def executor():
    # The module file itself, by path, as OpenRLHF's loader takes it.
    ex = _load_agent_executor(adapter.__file__)
    assert isinstance(ex, MultiTurnAgentExecutor) and isinstance(ex, AgentExecutorBase)
    return ex


@pytest.mark.parametrize("task", TRAIN, ids=lambda t: t.id)
def test_gold_answer_rewards_1(executor, task):
    out, _ = run(executor, task.id, [gold(task) + "<|im_end|>"])
    assert out["reward"] == 1.0 and float(out["scores"]) == 1.0
    assert len(out["action_ranges"]) == 1 and float(out["extra_logs"]["passed"]) == 1.0


@pytest.mark.parametrize(
    "answer", ["", "no code at all", "sys-exit-at-import", "always-equal-object", "mock-any"]
)
def test_empty_wrong_and_exploit_answers_reward_0(executor, answer):
    task = TRAIN[0]
    text = exploit(task, answer) if answer in EXPLOIT else answer
    out, _ = run(executor, json.dumps({"task_id": task.id}), [text])
    assert out["reward"] == 0.0


def test_heldout_task_is_refused_and_unknown_label_is_an_error(executor):
    with pytest.raises(ConfigError, match="held out"):
        run(executor, HELDOUT.id, [gold(HELDOUT)])
    with pytest.raises(ConfigError, match="not in"):
        run(executor, "no/such-task", ["x"])
    with pytest.raises(ConfigError, match="cannot read a task id"):
        run(executor, None, ["x"])


def test_multi_turn_write_file_then_submit_rewards_1(tmp_path):
    shim = tmp_path / "referee_agent.py"
    shim.write_text(
        "from referee.train.openrlhf import agent_executor\n"
        f"AgentExecutor = agent_executor(tasks={str(FIXTURE)!r}, multi_turn=True, max_turns=4)\n"
    )
    ex = _load_agent_executor(str(shim))
    task = TRAIN[2]
    solution = task.payload["code_prompt"] + task.hidden["reference"]
    replies = [
        "I'll write it." + tool_call("write_file", path="solution.py", content=solution),
        "Done." + tool_call("submit") + "<|im_end|>",
    ]
    out, engine = run(ex, task.id, replies)
    assert out["reward"] == 1.0 and len(out["action_ranges"]) == 2
    # The tool result reached the model as a ChatML user turn before its second reply.
    assert "<|im_start|>user\n<tool_response>" in engine.prompts[1]
    assert engine.prompts[1].endswith("<|im_start|>assistant\n")


def test_multi_turn_wrong_file_rewards_0_at_the_turn_limit(tmp_path):
    task = TRAIN[2]
    ex = adapter.agent_executor(tasks=str(FIXTURE), multi_turn=True, max_turns=2)()
    wrong = task.payload["code_prompt"] + "    return 0.0\n"
    replies = [tool_call("write_file", path="solution.py", content=wrong), "thinking..."]
    out, _ = run(ex, task.id, replies)
    assert out["reward"] == 0.0 and len(out["action_ranges"]) == 2


def test_rows_offer_the_tools_for_multi_turn():
    row = adapter.openrlhf_row(TRAIN[2], multi_turn=True)
    assert row["task_id"] == TRAIN[2].id and "<tool_call>" in row["input"][0]["content"]
    single = adapter.openrlhf_row(TRAIN[0])
    assert "<tool_call>" not in json.dumps(single["input"])
