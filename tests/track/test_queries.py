"""TrackStore's aggregate reads (referee.track.queries): typed rows, no SQL outside the store."""

from __future__ import annotations

from pathlib import Path

from referee.track.queries import (
    FlaggedTrajectory,
    TrajectoryFilters,
    TrajectoryRow,
    TrajectorySubject,
)
from referee.track.store import TrackStore
from tests.track.test_store import make_trajectory


def test_the_audit_reads_return_typed_rows(tmp_path: Path) -> None:
    with TrackStore(tmp_path) as store:
        store.log_trajectories(
            [
                make_trajectory(0, task_id="t/a"),
                make_trajectory(1, task_id="t/b", flags=True, reward=0.0),
                make_trajectory(2, task_id="t/c", run_id="other"),
            ]
        )
        assert store.trajectory_ids("r1") == ["traj-0", "traj-1"]
        assert store.statically_flagged("r1") == [FlaggedTrajectory("traj-1", ("exit-call",))]
        assert store.trajectory_subject("traj-2") == TrajectorySubject(
            "traj-2", "t/c", "function-v1", "other"
        )
        assert store.trajectory_subject("nope") is None
        assert store.tasks_judged_by(["function-v1"]) == {"t/a", "t/b", "t/c"}
        assert store.tasks_judged_by([]) == set() and store.tasks_judged_by(["x"]) == set()
        store.quarantine("task", "t/a", "labelled hack")
        assert store.trajectory_ids("r1", unquarantined=True) == ["traj-1"]


def test_the_dashboard_reads_page_and_filter(tmp_path: Path) -> None:
    with TrackStore(tmp_path) as store:
        store.start_run("r1", {})
        store.log_trajectories(
            [make_trajectory(i, step=i // 2, reward=float(i % 2 == 0)) for i in range(6)]
        )
        rows = store.trajectory_rows("r1", TrajectoryFilters(passed=True), limit=2)
        assert [r.id for r in rows] == ["traj-4", "traj-2"]  # latest step first
        assert all(isinstance(r, TrajectoryRow) and r.passed for r in rows)
        assert store.count_trajectory_rows("r1", TrajectoryFilters(step=1)) == 2
        assert {r.id for r in store.rows_by_id(["traj-0", "gone"])} == {"traj-0"}
        assert store.curves("r1")["train pass rate"] == [(0, 0.5), (1, 0.5), (2, 0.5)]
        (summary,) = store.run_summaries()
        assert (summary.trajectories, summary.steps, summary.last_step) == (6, 3, 2)
