"""referee's slime adapter with a recorded-signature stand-in Sample and a stand-in SGLang
router (slime is not on the package index); the stand-in is checked against signatures/slime.json."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import lookup, slime
from referee.verify.redteam import EXPLOITS

from .standins.slime_standin import CharTokenizerStandin, GenerateServerStandin, SampleStandin

ROOT = Path(__file__).parents[1] / "trainers" / "fixtures"
RECORD = json.loads((ROOT / "signatures" / "slime.json").read_text())["signatures"]
TASKS = read_tasks(ROOT / "he3.jsonl")
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv(lookup.TASKS_ENV, str(ROOT / "he3.jsonl"))


def gold(task) -> str:
    return "```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"


def exploit(task, name) -> str:
    return "```python\n" + task.payload["code_prompt"] + EXPLOIT[name].completion(task) + "```"


def names(fn):
    ps = inspect.signature(fn).parameters.values()
    return [p.name for p in ps if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def test_standin_sample_and_functions_match_the_recorded_signatures():
    recorded = RECORD["slime.utils.types.Sample"]
    assert [f.name for f in dataclasses.fields(SampleStandin)] == list(recorded["fields"])
    assert [s.value for s in SampleStandin.Status] == recorded["Status"]
    for fn in (slime.reward, slime.eval_reward, slime.group_reward, slime.generate):
        assert inspect.iscoroutinefunction(fn)
    assert names(slime.reward) == ["args", "sample"]  # await fn(args, sample, **kwargs)
    assert "**kwargs" in RECORD["custom_rm"]["call"]
    assert names(slime.group_reward) == ["args", "samples"]
    assert names(slime.generate) == ["args", "sample", "sampling_params"]
    assert "evaluation" not in names(slime.generate)  # slime passes it only when named


def run(coro):
    return asyncio.run(coro)


def test_reward_gold_1_wrong_and_exploit_0_with_both_label_forms():
    args = SimpleNamespace()
    for t in TRAIN:
        assert run(slime.reward(args, SampleStandin(label=t.id, response=gold(t)))) == 1.0
    t = TRAIN[0]
    label = json.dumps({"task_id": t.id, "difficulty": 1})
    for text in ["", "no code", exploit(t, "always-equal-object"), exploit(t, "os-exit-at-import")]:
        assert run(slime.reward(args, SampleStandin(label=label, response=text))) == 0.0
    group = [SampleStandin(label=t.id, response=a) for a in (gold(t), "", gold(t))]
    assert run(slime.group_reward(args, group)) == [1.0, 0.0, 1.0]


def test_reward_refuses_heldout_and_missing_tasks():
    args = SimpleNamespace()
    with pytest.raises(ConfigError, match="held out"):
        run(slime.reward(args, SampleStandin(label=HELDOUT.id, response=gold(HELDOUT))))
    ok = SampleStandin(label=HELDOUT.id, response=gold(HELDOUT))
    assert run(slime.eval_reward(args, ok)) == 1.0
    with pytest.raises(ConfigError, match="not in"):
        run(slime.reward(args, SampleStandin(label="no/such", response="x")))
    with pytest.raises(ConfigError, match="cannot read a task id"):
        run(slime.reward(args, SampleStandin(label=None, response="x")))


def args_for(server, **options):
    return SimpleNamespace(
        sglang_router_ip="127.0.0.1",
        sglang_router_port=server.port,
        referee_tokenizer=CharTokenizerStandin(),
        **options,
    )


def call(name, **arguments):
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def test_generate_multi_turn_fills_the_sample_and_masks_tool_output():
    t = TRAIN[2]
    solution = t.payload["code_prompt"] + t.hidden["reference"]
    first = call("write_file", path="solution.py", content=solution)
    second = call("submit")
    with GenerateServerStandin([(first, "stop"), (second, "stop")]) as server:
        args = args_for(server, referee_multi_turn=True, referee_max_turns=4)
        sample = SampleStandin(prompt="PROMPT:", label=t.id)
        out = run(slime.generate(args, sample, {"temperature": 1.0}))
    assert out is sample and out.status is SampleStandin.Status.COMPLETED
    assert out.reward == 1.0 and out.response.startswith(first) and out.response.endswith(second)
    assert out.tokens == [ord(c) for c in "PROMPT:" + out.response]
    assert out.response_length == len(out.response) == len(out.loss_mask)
    assert len(out.rollout_log_probs) == out.response_length
    feedback = out.response[len(first) : -len(second)]
    assert "<tool_response>" in feedback
    expected = [1] * len(first) + [0] * len(feedback) + [1] * len(second)
    assert out.loss_mask == expected
    assert server.requests[1]["input_ids"] == out.tokens[: -len(second)]
    assert server.requests[0]["sampling_params"] == {"temperature": 1.0}
    # The reward function takes the episode's reward rather than re-judging the transcript.
    assert run(slime.reward(args, out)) == 1.0


def test_generate_single_turn_exploit_0_and_truncation():
    t = TRAIN[0]
    with GenerateServerStandin([(exploit(t, "mock-any"), "stop"), ("def", "length")]) as server:
        args = args_for(server)
        bad = run(slime.generate(args, SampleStandin(prompt="P", label=t.id), {}))
        cut = run(slime.generate(args, SampleStandin(prompt="P", label=t.id), {}))
    assert bad.reward == 0.0 and bad.status is SampleStandin.Status.COMPLETED
    assert bad.loss_mask == [1] * bad.response_length
    assert cut.status is SampleStandin.Status.TRUNCATED and cut.reward == 0.0


def test_generate_refuses_heldout():
    with GenerateServerStandin([]) as server, pytest.raises(ConfigError, match="held out"):
        run(slime.generate(args_for(server), SampleStandin(prompt="P", label=HELDOUT.id), {}))
