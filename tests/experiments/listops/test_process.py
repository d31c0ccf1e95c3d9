"""The stage clock: wall and CPU seconds, less the pauses (evaluations) inside a stage."""

from __future__ import annotations

import time

from referee.experiments.listops.process import StageClock


def _busy(seconds: float) -> None:
    """Spend ``seconds`` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_cpu_clock_counts_work_and_not_waiting():
    clock = StageClock()
    time.sleep(0.3)  # waiting (as when other work holds the cores): wall time, no CPU time
    assert clock.wall() >= 0.3
    assert clock.cpu() < 0.3
    _busy(0.2)
    assert clock.cpu() >= 0.2
    assert clock.spent("cpu") >= 0.2 and clock.spent("wall") >= 0.5


def test_paused_time_counts_on_neither_clock():
    clock = StageClock()
    with clock.paused():
        _busy(0.3)
        time.sleep(0.3)
    # the pause spent 0.3 s of CPU and 0.6 s of wall time; the clock counts neither
    assert clock.cpu() < 0.3
    assert clock.wall() < 0.6


def test_start_restarts_from_now():
    clock = StageClock()
    _busy(0.2)
    clock.start()
    assert clock.cpu() < 0.2
