"""StepMetrics on hand-built trajectories: every number checked against a count by hand."""

from __future__ import annotations

import json

import pytest

from referee.rollout.trajectory import Trajectory, TrajectoryError, Turn
from referee.tasks.model import Task
from referee.track.metrics import (
    completion_length,
    step_metrics,
    visible_outcome,
    visible_test_names,
)
from referee.verify import harness as H
from referee.verify.verdict import Flag, Verdict
from referee.verify.verdict import TestOutcome as Outcome


def verdict(task_id: str, statuses: list[str], flags: tuple[str, ...] = ()) -> Verdict:
    tests = [Outcome(name=f"call {i}", status=s) for i, s in enumerate(statuses)]  # type: ignore[arg-type]
    n = sum(s == "passed" for s in statuses)
    return Verdict(
        task_id=task_id,
        reward=n / len(tests),
        passed=n == len(tests),
        tests=tests,
        flags=[Flag(kind=k, evidence="line 1") for k in flags],
    )


def traj(
    task_id: str = "t",
    text: str = "return 1",
    v: Verdict | None = None,
    *,
    group: str | None = "g",
    tokens: int = 0,
    **kw: object,
) -> Trajectory:
    turn = Turn(index=0, assistant={"role": "assistant", "content": text}, completion_tokens=tokens)
    return Trajectory(
        task_id=task_id,
        policy="p",
        env="code",
        group_id=group,
        turns=[turn],
        verdict=v,
        **kw,  # type: ignore[arg-type]
    )


def task_with_visible_calls(calls: list[int], n: int = 4) -> Task:
    return Task.create(
        name="demo/vis-v1",
        prompt="Write solve.",
        payload={"entry_point": "solve", "code_prompt": "def solve(x):\n"},
        hidden={"inputs": [[["list", []], ["dict", []]]] * n, "expected": [["ok", ["none"]]] * n,
                "visible_calls": calls},
    )  # fmt: skip


def test_reward_pass_rate_and_errors_count_only_what_they_should():
    ok = verdict("t", ["passed", "passed"])
    half = verdict("t", ["passed", "failed"])
    ts = [
        traj(v=ok),
        traj(v=half),
        traj(v=half),
        # An infrastructure failure: never scored, counted apart.
        traj(v=Verdict.infra("t", "sandbox died", "function@1")),
        # A model error with no verdict: not scored either.
        traj(v=None, error=TrajectoryError(kind="model", where="env.step", message="bad call")),
        traj(v=ok, error=TrajectoryError(kind="infra", where="policy", message="timeout")),
    ]
    m = step_metrics(ts, step=7)
    assert (m.step, m.trajectories, m.scored) == (7, 6, 3)
    assert m.reward_mean == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert m.reward_std == pytest.approx(((1 - 2 / 3) ** 2 / 3 + 2 * (0.5 - 2 / 3) ** 2 / 3) ** 0.5)
    assert m.pass_rate == pytest.approx(1 / 3)
    assert m.verdict_infra_rate == pytest.approx(1 / 6)
    assert m.infra_error_rate == pytest.approx(1 / 6)
    assert m.model_error_rate == pytest.approx(1 / 6)


def test_flag_rates_per_kind_are_shares_of_scored_trajectories():
    ts = [
        traj(v=verdict("t", ["passed"], ("exit-call", "dynamic-code"))),
        traj(v=verdict("t", ["failed"], ("exit-call",))),
        traj(v=verdict("t", ["failed"])),
        traj(v=verdict("t", ["failed"])),
    ]
    m = step_metrics(ts, step=0)
    assert m.flag_rate == 0.5
    assert dict(m.flag_rates) == {"exit-call": 0.5, "dynamic-code": 0.25}
    flat = m.as_dict()
    assert flat["flag_rate.exit-call"] == 0.5 and flat["flag_rate.dynamic-code"] == 0.25


def test_lengths_are_tokens_when_reported_else_characters():
    a = traj(text="x" * 40, tokens=10, v=verdict("t", ["passed"]))
    b = traj(text="y" * 7, v=verdict("t", ["passed"]), group="h")
    assert completion_length(a) == 10 and completion_length(b) == 7
    m = step_metrics([a, b], step=0)
    assert (m.length_mean, m.length_median, m.length_min) == (8.5, 8.5, 7.0)


def test_tool_calls_and_times_per_trajectory():
    call = {"id": "c", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}
    turns = [
        Turn(index=0, assistant={"content": "", "tool_calls": [call, call]}, metrics={"exec_s": 0.5}),
        Turn(index=1, assistant={"content": "done"}, metrics={"exec_s": 0.25}),
    ]  # fmt: skip
    t = Trajectory(task_id="t", policy="p", env="code", turns=turns,
                   timings={"policy_s": 2.0, "env_s": 1.0, "verify_s": 0.5})  # fmt: skip
    m = step_metrics([t, traj(v=None, timings={"policy_s": 4.0})], step=0)
    assert m.tool_calls_mean == 1.0
    assert m.exec_s_mean == pytest.approx((0.75 + 0.0) / 2)
    assert (m.policy_s_mean, m.env_s_mean, m.verify_s_mean) == (3.0, 1.0, 0.5)


def test_identical_share_per_group_ignores_whitespace_only_differences():
    v = verdict("t", ["passed"])
    ts = [
        traj(text="return 1", v=v, group="a"),
        traj(text="return 1   \n\n", v=v, group="a"),  # the same program
        traj(text="return 2", v=v, group="a"),
        traj(text="return 1", v=v, group="b"),
        traj(text="return 3", v=v, group="b"),
        traj(text="alone", v=v, group="c"),  # a group of one does not count
    ]
    m = step_metrics(ts, step=0)
    assert m.groups == 2
    # a: 3 answers, 2 distinct -> (3 - 2) / 2; b: all distinct -> 0.
    assert m.identical_share == pytest.approx(0.25)


def test_visible_and_hidden_by_the_tasks_visible_calls():
    task = task_with_visible_calls([0, 1])
    v_only = verdict(task.id, ["passed", "passed", "failed", "passed"])
    both = verdict(task.id, ["passed", "passed", "passed", "passed"])
    neither = verdict(task.id, ["failed", "passed", "failed", "failed"])
    ts = [traj(task.id, v=v_only), traj(task.id, v=both), traj(task.id, v=neither)]
    assert visible_outcome(ts[0], task) == (True, False)
    m = step_metrics(ts, step=0, tasks={task.id: task})
    assert m.visible_known == 3
    assert m.visible_pass_rate == pytest.approx(2 / 3)
    assert m.hidden_pass_rate == pytest.approx(1 / 3)
    assert m.visible_hidden_gap == pytest.approx(1 / 3)
    assert m.visible_only_rate == pytest.approx(1 / 3)
    # Without the task nothing says which tests are visible.
    assert step_metrics(ts, step=0).visible_known == 0


def test_visible_tests_of_a_procedural_task_are_the_calls_its_prompt_shows():
    inputs = [[H.encode([[1, 2]]), H.encode({})], [H.encode([[5]]), H.encode({})],
              [H.encode([[7, 7]]), H.encode({})]]  # fmt: skip
    task = Task.create(
        name="proc/demo-v1",
        prompt="Write solve.\n\nExamples:\nsolve([5]) == 5\nsolve([1, 2]) == 3",
        payload={"entry_point": "solve", "code_prompt": "def solve(xs):\n"},
        hidden={"inputs": inputs, "expected": [["ok", H.encode(3)]] * 3},
    )
    assert visible_test_names(task) == {"call 0", "call 1"}
    no_examples = task.revised(prompt="Write solve.")
    assert visible_test_names(no_examples) is None


def test_visible_side_from_the_last_run_tests_report_when_the_task_does_not_say():
    def run_tests(text: str) -> dict[str, str]:
        return {"role": "tool", "tool_call_id": "c", "content": text}

    turns = [
        Turn(index=0, assistant={"content": ""}, observations=[run_tests("1 of 3 visible tests passed\nFAILED ...")]),
        Turn(index=1, assistant={"content": ""}, observations=[run_tests("3 of 3 visible tests passed")]),
    ]  # fmt: skip
    t = Trajectory(task_id="t", policy="p", env="code", turns=turns,
                   verdict=verdict("t", ["passed", "failed"]))  # fmt: skip
    assert visible_outcome(t, None) == (True, False)
    t.turns = turns[:1]
    assert visible_outcome(t, None) == (False, False)


def test_repository_tasks_match_node_ids_under_named_files():
    task = Task.create(name="repo/x-v1", prompt="Fix it.", answer_format="patch",
                       payload={"visible_tests": ["tests/test_a.py"]})  # fmt: skip
    v = Verdict(task_id=task.id, reward=0.5, passed=False, tests=[
        Outcome(name="tests/test_a.py::test_one", status="passed"),
        Outcome(name="tests/test_b.py::test_two", status="failed"),
    ])  # fmt: skip
    assert visible_outcome(traj(task.id, v=v), task) == (True, False)


def test_canary_counts_and_heldout_pass_through():
    ts = [
        traj("canary/1", v=verdict("canary/1", ["passed"])),
        traj("canary/1", v=verdict("canary/1", ["failed"])),
        traj("t", v=verdict("t", ["passed"])),
    ]
    m = step_metrics(ts, step=2, canaries=frozenset({"canary/1"}), heldout_pass_rate=0.25,
                     heldout_n=64)  # fmt: skip
    assert (m.canaries, m.canary_passes) == (2, 1)
    assert (m.heldout_pass_rate, m.heldout_n) == (0.25, 64)


def test_as_dict_is_flat_floats_and_leaves_out_what_nothing_applies_to():
    m = step_metrics([], step=3)
    flat = m.as_dict()
    assert flat["step"] == 3.0 and flat["trajectories"] == 0.0
    assert "reward_mean" not in flat and "visible_hidden_gap" not in flat
    full = step_metrics([traj(v=verdict("t", ["passed"], ("exit-call",)))], step=1).as_dict()
    assert all(isinstance(v, float) for v in full.values())
    json.dumps(full)  # plain data for any sink
