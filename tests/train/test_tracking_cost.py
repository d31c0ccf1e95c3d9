"""RunTracking: each trajectory's cost from its verdict and tokens, the run's ledger, the stop."""

from __future__ import annotations

from pathlib import Path

from referee.rollout import RunBudget
from referee.sandbox.metering import SandboxUsage
from referee.tasks.model import Task
from referee.track.store import TrackStore
from referee.train.tracking import RunTracking
from referee.verify.verdict import Verdict


def test_batches_carry_costs_and_a_spent_budget_is_recorded_as_the_stop(tmp_path: Path) -> None:
    task = Task.create(name="c/one", prompt="p", hidden={"answer": "x"})
    tracking = RunTracking(
        tmp_path, run_id="r1", config={"lr": 1.0}, tasks=[task], budget=RunBudget(tokens=50)
    )
    usage = SandboxUsage(cpu_s=0.25, wall_s=0.5, peak_memory_mb=20.0, runs=1)
    verdict = Verdict(task_id=task.id, reward=1.0, passed=True, sandbox=usage,
                      timings={"total_s": 0.6})  # fmt: skip
    tracking.log_batch(0, [task, task], ["p", "p"], ["a", "b"], [verdict, verdict],
                       completion_tokens=[5, 7], prompt_tokens=[10, 10])  # fmt: skip
    assert tracking.ledger.exhausted() is None and tracking.ledger.spent.tokens == 32
    tracking.log_batch(1, [task], ["p"], ["c"], [verdict], completion_tokens=[9],
                       prompt_tokens=[10])  # fmt: skip
    stop = tracking.ledger.exhausted()
    assert stop is not None and (stop.budget, stop.spent) == ("tokens", 51)
    tracking.close("stopped", stop)
    with TrackStore(tmp_path, create=False) as store:
        run = store.run("r1")
        assert run.status == "stopped" and run.stop is not None and run.stop["spent"] == 51
        assert run.config["budget"]["tokens"] == 50 and run.config["lr"] == 1.0
        ts = store.trajectories(run_id="r1")
        c = ts[0].cost
        assert (c.sandbox_cpu_s, c.sandbox_runs, c.peak_memory_mb, c.wall_s) == (0.25, 1, 20, 0.6)
        assert (c.prompt_tokens, c.completion_tokens) == (10, 5)
        assert sum(t.cost.tokens for t in ts) == 51
