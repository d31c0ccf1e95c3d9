"""Stage results: frozen values whose ``to_json()`` keeps results.json's keys."""

from __future__ import annotations

import dataclasses
import json

import pytest

from referee.experiments.listops.results import GRPOResult, SFTResult, experiment_results
from referee.rollout.evaluate import EvalResult
from referee.track.layout import RunLayout

GRPO = GRPOResult(
    steps=2, wall_s=1.5, train_reward_first=0.25, train_reward_last=0.5,
    train_reward_per_step=(0.25, 0.5), frac_zero_std_mean=0.5, zero_variance_groups_mean=0.5,
    curriculum={"tasks": 10}, never_solved=0, canaries=1,
)  # fmt: skip


def _eval(passed):
    return EvalResult(task_ids=["a", "b"], passed=passed, rewards=[float(p) for p in passed])


def test_results_json_has_the_keys_it_always_had(tmp_path):
    sft = SFTResult(steps=10, wall_s=2.0, train_s=1.0, lr=3e-3, loss_first=2.0, loss_last=1.0)
    control = dataclasses.replace(sft, planned_steps=12)
    stages = {
        "before": _eval([False, False]), "sft": _eval([True, False]),
        "rl": _eval([True, True]), "control": _eval([False, True]),
    }  # fmt: skip
    layout = RunLayout(tmp_path)
    results = experiment_results(
        layout, train=[], heldout=[], demo_pass=0.5, ceiling={"heldout_mode": 0.5},
        stages=stages, sft=sft, rl=GRPO, control=control, times={"rl": 1.5},
    )  # fmt: skip
    data = results.to_json()
    # what bench/train_summary.py, bench/RESULTS.md and the README read
    for key in (
        "run_dir", "train_tasks", "heldout_tasks", "demo_pass_rate", "imitation_ceiling",
        "heldout_before", "heldout_sft", "heldout_rl", "heldout_sft_control", "train_reward",
        "sft", "rl", "control", "paired", "dev_pass_at_1", "heldout_pass_at_k",
        "heldout_infra_errors", "times",
    ):  # fmt: skip
        assert key in data, key
    assert "env" not in data and "heldout_tool_use" not in data  # single-turn keys only
    assert data["heldout_rl"] == 1.0 and data["heldout_sft_control"] == 0.5
    assert data["train_reward"] == 0.5
    assert set(data["sft"]) == {
        "steps", "wall_s", "train_s", "lr", "loss_first", "loss_last", "dev_curve"
    }  # fmt: skip
    assert data["control"]["planned_steps"] == 12
    for key in ("train_reward_per_step", "frac_zero_std_mean", "curriculum", "never_solved",
                "curve", "alerts", "canaries"):  # fmt: skip
        assert key in data["rl"], key
    assert set(data["paired"]) == {"rl_vs_sft", "rl_vs_control"}
    assert json.loads(json.dumps(data)) == data
    per_task = json.loads(layout.heldout_per_task.read_text())
    assert per_task["rl"] == [True, True]
    with pytest.raises(dataclasses.FrozenInstanceError):
        results.heldout_rl = 0.0  # type: ignore[misc]


def test_a_skipped_fine_tuning_and_no_control():
    assert SFTResult.skipped("ckpt").to_json() == {"from": "ckpt"}
    assert SFTResult.skipped("ckpt").pace_s == 0.0
    data = GRPO.to_json()
    assert "tool_calls_per_episode" not in data  # multi-turn only
    multi = dataclasses.replace(GRPO, tool_calls_per_episode=(1.0,), episodes=4, infra_errors=0)
    assert multi.to_json()["episodes"] == 4


def test_a_stage_reads_as_text_in_the_log():
    # issue 20: the log printed raw dicts, `fine-tuning: {'steps': 20, ..., 'loss_first': None}`
    done = SFTResult(
        steps=20, wall_s=9.0, train_s=8.42, lr=3e-3, loss_first=4.031, loss_last=0.0213
    )
    assert done.describe() == "20 steps in 8.4 s, loss 4.03 -> 0.02"
    control = SFTResult(steps=5, wall_s=2.0, train_s=2.0, lr=3e-4, planned_steps=6,
                        dev_curve=({"step": 5, "dev_pass_at_1": 0.25},))  # fmt: skip
    assert control.describe() == "5 steps in 2.0 s (6 planned); dev pass@1 0.250 at 5"
    assert SFTResult.skipped("runs/a/model-sft").describe() == (
        "skipped, the run starts from runs/a/model-sft"
    )
    assert "{" not in done.describe() + control.describe()


def test_cpu_seconds_are_reported_where_measured():
    # issue 27: the multi-turn control is sized by GRPO's CPU seconds (its process's and its
    # sandbox's), so both stages report them; runs before had no such keys, and keep none.
    assert "cpu_s" not in GRPO.to_json() and GRPO.total_cpu_s is None
    measured = dataclasses.replace(GRPO, cpu_s=40.0, sandbox_cpu_s=2.5)
    data = measured.to_json()
    assert data["cpu_s"] == 40.0 and data["sandbox_cpu_s"] == 2.5
    assert measured.total_cpu_s == 42.5
    sft = SFTResult(steps=10, wall_s=9.0, train_s=8.0, lr=3e-3, cpu_s=4.0)
    assert sft.to_json()["cpu_s"] == 4.0
    assert sft.pace_cpu_s == 0.4 and sft.pace_s == 0.8
    assert SFTResult.skipped("ckpt").pace_cpu_s == 0.0
