"""The RFT control's stopping rule: its wall time is GRPO's to within half a round."""

from __future__ import annotations

import pytest

from referee.experiments.lm.control import another_round


def rounds_run(round_s: float, wall_s: float) -> float:
    """The control's wall time with rounds of ``round_s`` against GRPO's ``wall_s``."""
    done: list[float] = []
    while another_round(sum(done), done, wall_s):
        done.append(round_s)
    return sum(done)


@pytest.mark.parametrize("wall_s", [0.0, 10.0, 100.0, 675.0, 731.0])
@pytest.mark.parametrize("round_s", [7.0, 56.0, 60.0])
def test_the_control_ends_within_half_a_round_of_grpo(round_s: float, wall_s: float) -> None:
    spent = rounds_run(round_s, wall_s)
    assert spent >= round_s  # one round at least, however short GRPO was
    if wall_s >= round_s:
        assert abs(spent - wall_s) <= round_s / 2


def test_stopping_after_the_round_that_reaches_the_budget_would_overshoot() -> None:
    # The rule it replaced ran rounds while the time spent was under the budget: with 56 s
    # rounds and GRPO's 675 s it ran 13 rounds (728 s), 53 s more than GRPO had.
    assert rounds_run(56.0, 675.0) == 12 * 56.0
    assert not another_round(650.0, [56.0] * 11, 675.0)


def test_the_module_examples_hold() -> None:
    import doctest

    import referee.experiments.lm.control as control_module

    result = doctest.testmod(control_module)
    assert result.attempted > 0 and result.failed == 0
