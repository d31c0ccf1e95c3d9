"""How the control is sized: GRPO's time, by the clock the config names."""

from __future__ import annotations

import pytest

from referee.experiments.listops.config import SFTConfig
from referee.experiments.listops.results import SFTResult
from referee.experiments.listops.sft import control_budget

# fine-tuning: 100 steps in 50 wall seconds (0.5 s a step) but 20 CPU seconds (0.2 s a step):
# the machine was shared, so the wall clock ran 2.5 times the process's CPU time
FT = SFTResult(steps=100, wall_s=60.0, train_s=50.0, lr=3e-3, cpu_s=20.0)


def test_the_wall_clock_gives_grpo_s_wall_seconds_at_the_wall_pace():
    assert control_budget(SFTConfig(), FT, grpo_wall_s=30.0, grpo_cpu_s=12.0) == (30.0, 60)


def test_the_cpu_clock_gives_grpo_s_cpu_seconds_at_the_cpu_pace():
    cfg = SFTConfig(control_clock="cpu")
    assert control_budget(cfg, FT, grpo_wall_s=30.0, grpo_cpu_s=12.0) == (12.0, 60)
    # GRPO ran while the machine was busier (twice the wall time for the same CPU time): the
    # wall clock would give the control twice the compute; the CPU clock gives it the same.
    assert control_budget(cfg, FT, grpo_wall_s=60.0, grpo_cpu_s=12.0) == (12.0, 60)
    assert control_budget(SFTConfig(), FT, grpo_wall_s=60.0, grpo_cpu_s=12.0) == (60.0, 120)


def test_without_a_measured_pace_the_clock_alone_stops_the_control():
    skipped = SFTResult.skipped("runs/a/model-sft")
    cfg = SFTConfig(control_clock="cpu")
    assert control_budget(cfg, skipped, grpo_wall_s=30.0, grpo_cpu_s=12.0) == (12.0, 10**6)


def test_the_cpu_clock_needs_grpo_s_cpu_seconds():
    with pytest.raises(ValueError, match="grpo_cpu_s"):
        control_budget(SFTConfig(control_clock="cpu"), FT, grpo_wall_s=30.0, grpo_cpu_s=None)
