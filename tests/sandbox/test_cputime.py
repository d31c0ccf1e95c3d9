"""Time limits on CPU time with a wall-clock backstop (referee.sandbox.cputime): the rule for a
run the backstop ends, on made-up results, and the facts it reads, on real runs."""

from __future__ import annotations

from typing import Any

import pytest

from referee.sandbox import ExecResult
from referee.sandbox.cputime import (
    MachineStarved,
    cpu_limits,
    judged_run,
    stall_outcome,
    stretched,
    time_outcome,
)


def _result(**kw: Any) -> ExecResult:
    return ExecResult(exit_code=kw.pop("exit_code", 0), **kw)


def test_limits_put_rlimit_cpu_past_the_limit_and_the_wall_clock_at_the_backstop() -> None:
    lim = cpu_limits(1.0, memory_mb=64)
    assert (lim.timeout_s, lim.cpu_seconds, lim.memory_mb) == (4.0, 2, 64)


def test_time_is_judged_on_cpu_and_the_backstop_by_what_the_processes_did() -> None:
    assert time_outcome(_result(cpu_s=0.5, wall_s=3.0), 1.0) == "ok"  # slow, not over
    assert time_outcome(_result(cpu_s=1.2, wall_s=1.2), 1.0) == "time-limit"  # ended, over
    assert time_outcome(_result(exit_code=None, violations=["cpu-limit"]), 1.0) == "time-limit"
    killed = {"exit_code": None, "timed_out": True, "wall_s": 4.0}
    # Runnable (on a CPU or queued) most of the time: the machine starved it.
    assert time_outcome(_result(cpu_s=0.8, wait_s=3.0, **killed), 1.0) == "starved"
    # Asleep most of the time, even computing 20% of it: the program's own doing.
    assert time_outcome(_result(cpu_s=0.8, wait_s=0.1, **killed), 1.0) == "idle"
    # Without the run delay the CPU share alone decides, at 10%.
    assert stall_outcome(0.01, 4.0, None) == "idle"
    assert stall_outcome(0.8, 4.0, None) == "starved"


def test_a_starved_run_is_run_again_and_starved_twice_is_an_infra_error() -> None:
    starved = _result(exit_code=None, timed_out=True, cpu_s=0.3, wall_s=4.0, wait_s=3.5)
    idle = _result(exit_code=None, timed_out=True, cpu_s=0.0, wall_s=4.0, wait_s=0.0)
    done = _result(cpu_s=0.3, wall_s=0.5)
    runs = iter([starved, done])
    assert judged_run(lambda: next(runs), 1.0) == (done, "ok")
    runs = iter([idle])  # idle on the run delay's evidence: judged at once
    assert judged_run(lambda: next(runs), 1.0) == (idle, "idle")
    unsure = idle.model_copy(update={"wait_s": None})  # on the CPU share alone: run again
    runs = iter([unsure, done])
    assert judged_run(lambda: next(runs), 1.0) == (done, "ok")
    runs = iter([starved, starved])
    with pytest.raises(MachineStarved):
        judged_run(lambda: next(runs), 1.0)
    # The second run of a starved one gets a backstop four times longer, named to the code in
    # the sandbox too.
    seen_limits = []

    def run() -> ExecResult:
        seen_limits.append(stretched(cpu_limits(1.0), None))
        return starved if len(seen_limits) == 1 else done

    assert judged_run(run, 1.0) == (done, "ok")
    assert [lim.timeout_s for lim, _ in seen_limits] == [4.0, 16.0]
    assert seen_limits[1][1] == {"REFEREE_BACKSTOP_STRETCH": "4.0"}
    over = _result(exit_code=None, violations=["cpu-limit"], cpu_s=2.0)
    runs = iter([over])  # a time limit is a verdict: not run again
    assert judged_run(lambda: next(runs), 1.0) == (over, "time-limit")
    # A call inside the run (a harness's) that its own backstop ended counts the same.
    runs = iter([done, done])
    seen = iter(["starved", "ok"])
    assert judged_run(lambda: next(runs), 1.0, stalled=lambda r: next(seen)) == (done, "ok")  # type: ignore[arg-type, return-value]


def test_a_sleeping_program_is_ended_by_the_backstop_and_judged_idle(run_py: Any) -> None:
    lim = cpu_limits(0.2)
    r = run_py("import time\ntime.sleep(30)\n", limits=lim)
    assert r.timed_out and r.cpu_s < 0.2 and r.wait_s is not None, r
    assert time_outcome(r, 0.2) == "idle"


def test_a_busy_loop_is_ended_on_its_cpu_time(run_py: Any) -> None:
    r = run_py("while True:\n    pass\n", limits=cpu_limits(0.2))
    assert time_outcome(r, 0.2) == "time-limit", r
