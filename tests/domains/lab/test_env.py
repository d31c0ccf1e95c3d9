"""The lab environment: experiments through tools, one final submission, the verdict after."""

import json

import pytest

from referee.domains import generate_family
from referee.domains.lab.agents import tool_call
from referee.domains.lab.env import LabEnv
from referee.envs import make_env
from referee.envs.base import EpisodeLimits, SyncEnvironment
from referee.errors import ConfigError


@pytest.fixture
def task():
    return generate_family("lab-population", count=1, difficulty=0.5, seed=3)[0]


def _say(*calls):
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


RUN = {"N0": 50.0, "h": 0.1, "times": [1.0, 5.0, 20.0]}


def test_an_episode_runs_experiments_then_the_submission_is_judged(task):
    with SyncEnvironment(make_env("lab")) as env:
        first = env.reset(task)
        assert first[0]["content"] == task.prompt[0].content
        names = [t["function"]["name"] for t in env.tools()]
        assert names == ["run_experiment", "submit"]
        schema = env.tools()[0]["function"]["parameters"]
        assert sorted(schema["properties"]) == ["N0", "h", "times"]
        step = env.step(
            _say(
                tool_call("run_experiment", RUN, 0), tool_call("run_experiment", {**RUN, "h": 9}, 1)
            )
        )
        reply = json.loads(step.observations[0]["content"])
        assert reply["experiment"] == 1 and reply["budget_left"] == 5 and len(reply["values"]) == 3
        assert step.observations[1]["content"] == "error: h must be between 0 and 0.3 1/day"
        assert step.metrics["experiments"] == 1 and step.metrics["refused"] == 1 and not step.done
        end = env.step(_say(tool_call("submit", json.loads(task.hidden["reference"]))))
        assert end.done and end.reason == "submitted"
        assert end.observations[0]["content"] == "submitted; the episode is over"
        assert env.verify().passed
        with pytest.raises(ConfigError, match="the episode is over"):
            env.step(_say(tool_call("run_experiment", RUN)))


def test_the_first_submission_is_final_even_when_it_is_not_a_model(task):
    with SyncEnvironment(LabEnv()) as env:
        env.reset(task)
        step = env.step(
            _say(
                tool_call("submit", {"law": "logistic"}),
                tool_call("submit", json.loads(task.hidden["reference"]), 1),
            )
        )
        assert step.done and step.observations[1]["content"].startswith(
            "error: the model is submitted already"
        )
        verdict = env.verify()
        assert verdict.reward == 0.0 and "keys law and params only" in verdict.tests[0].detail


def test_a_final_message_without_tool_calls_is_the_answer(task):
    with SyncEnvironment(LabEnv()) as env:
        env.reset(task)
        end = env.step(
            {"role": "assistant", "content": f"Fitted.\n```json\n{task.hidden['reference']}\n```"}
        )
        assert end.done and end.reason == "answered" and env.verify().passed


def test_single_turn_offers_no_tools_and_takes_the_first_message(task):
    with SyncEnvironment(LabEnv(single_turn=True)) as env:
        env.reset(task)
        assert env.tools() == []
        end = env.step(
            {
                "role": "assistant",
                "content": task.hidden["reference"],
                "tool_calls": [tool_call("run_experiment", RUN)],
            }
        )
        assert end.done and end.observations == [] and env.verify().passed


def test_a_turn_limit_ends_an_episode_that_never_submits(task):
    with SyncEnvironment(LabEnv(limits=EpisodeLimits(max_turns=2))) as env:
        env.reset(task)
        assert not env.step(_say(tool_call("run_experiment", RUN))).done
        end = env.step(_say(tool_call("run_experiment", RUN)))
        assert end.done and end.reason == "max_turns"
        assert env.verify().reward == 0.0


def test_unknown_tools_and_broken_calls_are_told_and_cost_nothing(task):
    with SyncEnvironment(LabEnv()) as env:
        env.reset(task)
        bad = {
            "id": "x",
            "type": "function",
            "function": {"name": "run_experiment", "arguments": "{"},
        }
        step = env.step(_say(tool_call("get_params", {}), bad))
        assert step.observations[0]["content"].startswith("error: unknown tool 'get_params'")
        assert step.observations[1]["content"].startswith("error: arguments are not valid JSON")
        assert step.metrics["budget_left"] == 6


def test_a_step_before_reset_is_a_config_error():
    with SyncEnvironment(LabEnv()) as env, pytest.raises(ConfigError, match="call reset"):
        env.step(_say())


def test_a_snapshot_restores_the_episode_and_its_noise_goes_on_as_before(task):
    with SyncEnvironment(LabEnv()) as env:
        env.reset(task)
        env.step(_say(tool_call("run_experiment", RUN)))
        snap = env.snapshot()
        after = env.step(_say(tool_call("run_experiment", RUN))).observations[0]["content"]
        env.restore(snap)
        assert env.env.laboratory.budget_left == 5
        again = env.step(_say(tool_call("run_experiment", RUN))).observations[0]["content"]
        assert again == after
        with pytest.raises(ConfigError, match=r"takes what LabEnv\.snapshot returned"):
            env.restore("not a snapshot")
