"""referee's rLLM adapter through a recorded-signature stand-in of rLLM (rLLM is not on the
package index): the stand-in is checked against signatures/rllm.json, then drives the adapter."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import lookup, rllm
from referee.verify.redteam import EXPLOITS

from .standins import rllm_standin

ROOT = Path(__file__).parents[1] / "trainers" / "fixtures"
SIGS = json.loads((ROOT / "signatures" / "rllm.json").read_text())["signatures"]
TASKS = read_tasks(ROOT / "he3.jsonl")
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv(lookup.TASKS_ENV, str(ROOT / "he3.jsonl"))


@pytest.fixture
def standin(monkeypatch):
    rllm_standin.install(monkeypatch)


def gold(task) -> str:
    return "```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"


def exploit(task, name) -> str:
    return "```python\n" + task.payload["code_prompt"] + EXPLOIT[name].completion(task) + "```"


def field_names(cls) -> list[str]:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return list(cls.model_fields)


def params(call: str) -> list[str]:
    """Parameter names (without self, *, **) of a recorded call like 'f(self, a: int, b=1)'."""
    inner = call[call.index("(") + 1 : call.index(")")]
    names = [re.split(r"[:=]", p)[0].strip() for p in inner.split(",")]
    return [n for n in names if n and n != "self" and not n.startswith("*")]


def signature_names(fn) -> list[str]:
    ps = inspect.signature(fn).parameters.values()
    return [
        p.name for p in ps if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


# ---- the stand-in and the adapter against the recorded signatures ------------------------------
@pytest.mark.parametrize("qualname", sorted(rllm_standin.CLASSES))
def test_standin_matches_the_recorded_fields(qualname):
    recorded = SIGS[qualname]
    cls = rllm_standin.CLASSES[qualname][1]
    if "fields" in recorded:
        names = [n for n in recorded["fields"] if n != "..."]
        have = field_names(cls)
        missing = [n for n in names if n not in have]
        assert not missing, f"{qualname}: stand-in lacks {missing}"
        if qualname != "rllm.types.Step":  # Step's record lists only the fields it names
            assert have == names, f"{qualname}: stand-in fields {have} != recorded {names}"
    else:  # the Workflow ABC
        assert signature_names(cls.__init__) == params(recorded["init"])
        assert signature_names(cls.run) == params(recorded["abstract"])


def test_adapter_callables_match_the_recorded_calls():
    assert signature_names(rllm.RefereeReward.__call__) == params(
        SIGS["rllm.rewards.reward_fn.RewardFunction"]["call"]
    )
    assert signature_names(rllm.RefereeEvaluator.evaluate) == params(
        SIGS["rllm.types.Evaluator"]["call"]
    )
    run = rllm.workflow_class().run
    assert inspect.iscoroutinefunction(run)
    assert signature_names(run) == params(SIGS["rllm.workflows.workflow.Workflow"]["abstract"])
    # The plain fallbacks keep the recorded field names.
    for plain, qualname in [
        (rllm.RewardResult, "rllm.rewards.reward_types.RewardOutput"),
        (rllm.EvalResult, "rllm.eval.types.EvalOutput"),
        (rllm.SignalResult, "rllm.eval.types.Signal"),
    ]:
        assert field_names(plain) == list(SIGS[qualname]["fields"])


# ---- driving the adapter through the stand-in --------------------------------------------------
def test_reward_function_returns_rllms_reward_output(standin):
    reward = rllm.RefereeReward()
    for t in TRAIN:
        out = reward(rllm.rllm_row(t), gold(t))
        assert type(out) is rllm_standin.RewardOutputStandin
        assert (out.reward, out.is_correct) == (1.0, True)
    for answer in ["", "no code", exploit(TRAIN[0], "always-equal-object")]:
        out = reward(rllm.rllm_row(TRAIN[0]), answer)
        assert (out.reward, out.is_correct) == (0.0, False)


def test_heldout_refused_and_missing_task_is_an_error(standin):
    with pytest.raises(ConfigError, match="held out"):
        rllm.RefereeReward()(rllm.rllm_row(HELDOUT), gold(HELDOUT))
    assert rllm.RefereeReward(allow_heldout=True)(rllm.rllm_row(HELDOUT), gold(HELDOUT)).reward == 1
    with pytest.raises(ConfigError, match="not in"):
        rllm.RefereeReward()({"ground_truth": "no/such"}, "x")
    with pytest.raises(ConfigError, match="held out"):
        rllm.RefereeEvaluator().evaluate(rllm.rllm_row(HELDOUT), rllm_standin.EpisodeStandin())


def episode_with(text):
    step = rllm_standin.StepStandin(action=text)
    return rllm_standin.EpisodeStandin(trajectories=[rllm_standin.TrajectoryStandin(steps=[step])])


def test_evaluator_judges_the_episodes_final_text(standin):
    ev = rllm.RefereeEvaluator()
    t = TRAIN[1]
    good = ev.evaluate(rllm.rllm_row(t), episode_with(gold(t)))
    assert type(good) is rllm_standin.EvalOutputStandin
    assert (good.reward, good.is_correct) == (1.0, True)
    assert {s.name: s.value for s in good.signals} == {"passed": 1.0, "reward": 1.0}
    assert all(type(s) is rllm_standin.SignalStandin for s in good.signals)
    bad = ev.evaluate(rllm.rllm_row(t), episode_with(exploit(t, "sys-exit-at-import")))
    assert (bad.reward, bad.is_correct) == (0.0, False)
    assert ev.evaluate(rllm.rllm_row(t), rllm_standin.EpisodeStandin()).reward == 0.0


class StandinEngine:
    """A stand-in for rLLM's RolloutEngine: get_model_response(messages) -> .text"""

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []

    async def get_model_response(self, messages, **kwargs):
        self.seen.append(messages)
        return SimpleNamespace(text=self.replies.pop(0))


def run_workflow(task, replies, **options):
    cls = rllm.workflow_class()
    engine = StandinEngine(replies)
    wf = cls(engine, None, **options)
    return asyncio.run(wf.run(rllm.rllm_row(task), "uid-1")), wf, engine


def test_workflow_subclasses_rllms_workflow_and_scores_single_turn(standin):
    t = TRAIN[0]
    ep, wf, _ = run_workflow(t, [gold(t)])
    assert isinstance(wf, rllm_standin.WorkflowStandin)
    assert type(ep) is rllm_standin.EpisodeStandin and ep.is_correct and ep.id == "uid-1"
    (traj,) = ep.trajectories
    assert traj.reward == 1.0 and [s.reward for s in traj.steps] == [1.0]
    ep, _, _ = run_workflow(t, [exploit(t, "mock-any")])
    assert not ep.is_correct and ep.trajectories[0].reward == 0.0
    with pytest.raises(ConfigError, match="held out"):
        run_workflow(HELDOUT, [gold(HELDOUT)])


def test_workflow_multi_turn_tools(standin):
    t = TRAIN[2]
    solution = t.payload["code_prompt"] + t.hidden["reference"]
    call = {"name": "write_file", "arguments": {"path": "solution.py", "content": solution}}
    replies = [
        f"<tool_call>{json.dumps(call)}</tool_call>",
        '<tool_call>{"name": "submit"}</tool_call>',
    ]
    ep, _, engine = run_workflow(t, replies, multi_turn=True, max_turns=3)
    assert [s.reward for s in ep.trajectories[0].steps] == [0.0, 1.0] and ep.is_correct
    assert "<tools>" in engine.seen[0][0]["content"]
    assert "<tool_response>" in engine.seen[1][-1]["content"]


def test_without_rllm_the_adapter_returns_plain_objects():
    t = TRAIN[0]
    out = rllm.RefereeReward()(rllm.rllm_row(t), gold(t))
    assert type(out) is rllm.RewardResult and out.reward == 1.0
    ep, _, _ = run_workflow(t, [gold(t)])
    assert type(ep) is rllm.EpisodeResult and ep.is_correct
    assert type(ep.trajectories[0].steps[0]) is rllm.StepResult
