"""The Tracker end to end with an in-memory store: metrics, alerts, the audit queue, sinks."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from referee.rollout.trajectory import Trajectory, Turn
from referee.tasks.model import Task
from referee.track.canary import make_canaries
from referee.track.detectors import Alert, CanaryPass, Context, Detector, default_detectors
from referee.track.metrics import StepMetrics
from referee.track.tracker import MetricsSink, Tracker
from referee.verify import harness as H
from referee.verify.verdict import Flag, Verdict


class FakeStore:
    """The store's four methods, recording what they were given (as the SQLite one keeps it:
    evidence must be JSON)."""

    def __init__(self) -> None:
        self.trajectories: list[Trajectory] = []
        self.metrics: list[tuple[str, int, dict[str, float], str | None]] = []
        self.alerts: list[dict[str, Any]] = []
        self.audit: list[tuple[str | None, str, str]] = []

    def log_trajectories(self, ts: Iterable[Trajectory]) -> int:
        ts = list(ts)
        self.trajectories += ts
        return len(ts)

    def log_metrics(
        self, run_id: str, step: int, values: Mapping[str, float], split: str | None = None
    ) -> None:
        self.metrics.append((run_id, step, dict(values), split))

    def log_alert(
        self,
        run_id: str,
        detector: str,
        step: int | None,
        severity: str,
        message: str,
        evidence: Mapping[str, Any],
        trajectory_ids: Sequence[str],
    ) -> str:
        json.dumps(dict(evidence))
        self.alerts.append({"run_id": run_id, "detector": detector, "step": step,
                            "severity": severity, "message": message,
                            "evidence": dict(evidence), "ids": list(trajectory_ids)})  # fmt: skip
        return f"alert-{len(self.alerts)}"

    def enqueue_audit(self, run_id: str | None, trajectory_id: str, reason: str) -> str:
        self.audit.append((run_id, trajectory_id, reason))
        return f"item-{len(self.audit)}"


class Sink:
    def __init__(self) -> None:
        self.updates: list[tuple[dict[str, float], str]] = []
        self.alerts: list[tuple[str, str, str]] = []

    def update(self, metrics: Mapping[str, float], run_id: str) -> None:
        self.updates.append((dict(metrics), run_id))

    def alert(self, detector: str, severity: str, run_id: str) -> None:
        self.alerts.append((detector, severity, run_id))


def canary_task() -> Task:
    base = Task.create(
        name="proc/list-ops-d50-s1-v1",
        prompt="Write solve.",
        payload={"entry_point": "solve", "code_prompt": "def solve(xs):\n"},
        hidden={"reference": "    return 1\n", "inputs": [[H.encode([[1]]), H.encode({})]],
                "expected": [["ok", H.encode(1)]]},
    )  # fmt: skip
    [c] = make_canaries(1, seed=0, like=[base])
    return c


def traj(task_id: str, passed: bool, step: int, text: str = "code") -> Trajectory:
    v = Verdict(task_id=task_id, reward=1.0 if passed else 0.0, passed=passed,
                flags=[Flag(kind="exit-call", evidence="line 2: os._exit(0)")] if passed else [])  # fmt: skip
    return Trajectory(task_id=task_id, policy="p", env="code", run_id="run-7", step=step,
                      group_id=f"{step}:{task_id}", verdict=v,
                      turns=[Turn(index=0, assistant={"content": text})])  # fmt: skip


def test_alerts_are_stored_and_their_trajectories_enqueued_once():
    canary = canary_task()
    store, sink = FakeStore(), Sink()
    assert isinstance(sink, MetricsSink)
    tracker = Tracker(store, detectors=[CanaryPass()], sinks=[sink], tasks=[canary])
    assert tracker.canaries == {canary.id}
    quiet = [traj("task/a", False, 0), traj(canary.id, False, 0)]
    assert tracker.log(quiet, 0) == []
    cheat = [traj(canary.id, True, 1, "import os\nos._exit(0)"), traj("task/a", False, 1)]
    alerts = tracker.log(cheat, 1)
    again = tracker.log([cheat[0]], 2)  # the same trajectory in a second alert

    assert [a.detector for a in alerts] == ["canary-pass"] and alerts[0].severity == "critical"
    assert tracker.anomalies() == alerts + again
    assert [(a["detector"], a["step"], a["run_id"]) for a in store.alerts] == [
        ("canary-pass", 1, "run-7"), ("canary-pass", 2, "run-7")]  # fmt: skip
    assert store.alerts[0]["ids"] == [cheat[0].id]
    assert store.alerts[0]["evidence"]["passes"][0]["excerpt"].startswith("import os")
    # Enqueued for audit once, with the reason; the honest trajectories are not.
    assert [(r, t) for r, t, _ in store.audit] == [("run-7", cheat[0].id)]
    assert store.audit[0][2].startswith("canary-pass: ")
    # Every trajectory and every step's metrics were written; the sink saw the same numbers.
    assert len(store.trajectories) == 5
    assert [(r, s) for r, s, _, _ in store.metrics] == [("run-7", 0), ("run-7", 1), ("run-7", 2)]
    assert store.metrics[1][2]["canary_passes"] == 1.0
    assert [u for u, _ in sink.updates] == [m for _, _, m, _ in store.metrics]
    assert sink.alerts == [("canary-pass", "critical", "run-7")] * 2


def test_latest_metrics_and_a_run_without_a_store():
    tracker = Tracker()
    assert tracker.latest_metrics() is None
    tracker.log([traj("t", True, 0), traj("t", False, 0)], 0, heldout_pass_rate=0.4, heldout_n=20)
    m = tracker.latest_metrics()
    assert isinstance(m, StepMetrics)
    assert (m.step, m.pass_rate, m.heldout_pass_rate, m.heldout_n) == (0, 0.5, 0.4, 20)
    assert tracker.run_id == "run-7"  # from the trajectories
    assert [d.name for d in tracker.detectors] == [d.name for d in default_detectors()]


def test_a_broken_detector_is_recorded_and_does_not_stop_the_run():
    class Broken(Detector):
        name = "broken"

        def observe(
            self, step: int, trajectories: Sequence[Trajectory], metrics: StepMetrics,
            context: Context,
        ) -> list[Alert]:  # fmt: skip
            raise ZeroDivisionError("oops")

    canary = canary_task()
    store = FakeStore()
    tracker = Tracker(store, detectors=[Broken(), CanaryPass()], tasks={canary.id: canary})
    alerts = tracker.log([traj(canary.id, True, 0)], 0)
    assert [a.detector for a in alerts] == ["canary-pass"]
    assert tracker.detector_errors == [(0, "broken", "ZeroDivisionError: oops")]
    assert len(store.alerts) == 1


def test_without_tasks_canaries_are_unknown_and_stay_silent():
    canary = canary_task()
    tracker = Tracker(FakeStore(), detectors=[CanaryPass()])
    assert tracker.log([traj(canary.id, True, 0)], 0) == []
    tracker.add_tasks([canary])
    assert [a.detector for a in tracker.log([traj(canary.id, True, 1)], 1)] == ["canary-pass"]


def test_a_tracker_records_the_tasks_it_is_given_so_rl_rows_export(tmp_path):
    # issue 20 (6): README's Tracker(store, tasks=pool) run could not be exported as RL rows
    # ("track.sqlite has no tasks recorded"): the tracker knew the tasks, the store did not.
    from referee.track.export import export_run
    from referee.track.store import TrackStore

    task = Task.create(name="demo/add-v1", prompt="Write add.", split="train")
    tasks = [task, canary_task()]
    with TrackStore(tmp_path / "run") as store:
        store.start_run("mine", {})
        tracker = Tracker(store, tasks=tasks, run_id="mine")
        assert [t.id for t in store.tasks()] == [t.id for t in tasks]
        tracker.add_tasks([])  # nothing new: nothing written
        done = export_run(store, "trl-rl", tmp_path / "rl.jsonl")
    assert done.rows == 1 and done.left_out == {"canary": 1}
    assert json.loads((tmp_path / "rl.jsonl").read_text())["task_id"] == task.id


def test_rl_rows_of_a_store_without_tasks_are_refused_as_user_fixable(tmp_path):
    # issue 20 (6): it exited 1, as if referee had failed.
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.track.store import TrackStore

    TrackStore(tmp_path / "run").close()
    out = tmp_path / "rl.jsonl"
    r = CliRunner().invoke(
        app, ["export", "--run", str(tmp_path / "run"), "--format", "verl", "--out", str(out)]
    )
    assert r.exit_code == 2 and "store.add_tasks(tasks)" in r.output and not out.exists()


def test_rl_rows_of_a_train_run_cancelled_before_its_tasks_say_to_re_run_it(tmp_path):
    # issue 20 (9): a `referee train` run (it wrote config.json) was told to call the Python API.
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.track.store import TrackStore

    run = tmp_path / "run"
    TrackStore(run).close()
    (run / "config.json").write_text("{}")
    out = tmp_path / "rl.jsonl"
    r = CliRunner().invoke(
        app, ["export", "--run", str(run), "--format", "trl-rl", "--out", str(out)]
    )
    assert r.exit_code == 2 and not out.exists()
    assert "cancelled before it recorded them" in r.output and "re-run" in r.output
    assert "add_tasks" not in r.output and "Tracker(" not in r.output
