"""issue 33: the run page's header shows unset settings as "none", never Python's None, and
the pass-rate-by-difficulty chart has held-out bars for a training run, whose held-out
evaluations are logged as metrics (it keeps no held-out trajectories)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from referee.tasks.model import Difficulty, Task
from referee.track import TrackStore
from referee.train.tracking import RunTracking
from referee.ui import create_app


def _task(name: str, estimate: float, split: str) -> Task:
    return Task.create(
        name=name, kind="custom", prompt="p", answer_format="text", split=split,
        difficulty=Difficulty(estimate=estimate),
    )  # fmt: skip


def _page(run_dir, run_id: str) -> str:
    store = TrackStore(run_dir, create=False)
    try:
        return TestClient(create_app(store)).get(f"/runs/{run_id}").text
    finally:
        store.close()


def test_unset_settings_show_as_none_not_pythons_none(tmp_path):
    store = TrackStore(tmp_path / "run")
    config = {"budget": {"cpu_hours": None, "tokens": 1000, "wall_s": None}, "model": None,
              "other": {"a": None}}  # fmt: skip
    store.start_run("r1", config)
    store.close()
    html = _page(tmp_path / "run", "r1")
    header = html.split('<p class="sub">', 1)[1].split("</p>", 1)[0]
    assert "None" not in header, header
    assert "budget=tokens 1000" in header and "model=none" in header and "other=none" in header


def test_a_training_runs_held_out_evaluation_draws_held_out_bars_by_difficulty(tmp_path):
    tasks = [_task("h/easy", 0.1, "heldout"), _task("h/hard", 0.9, "heldout"),
             _task("h/hard2", 0.95, "heldout")]  # fmt: skip
    tracking = RunTracking(tmp_path / "run", run_id="r1", config={}, tasks=tasks)
    tracking.heldout(0, pass_rate=0.0, n=3, passed={t.id: False for t in tasks})
    tracking.heldout(5, pass_rate=2 / 3, n=3, passed={"h/easy": True, "h/hard": True,
                                                      "h/hard2": False})  # fmt: skip
    tracking.close()
    html = _page(tmp_path / "run", "r1")
    chart = html.split('id="chart-difficulty"', 1)[1].split("</figure>", 1)[0]
    # the latest evaluation's rates: the easy bin all passed, the hard bin half
    assert "held-out · 0.0\u20130.2: 1.00" in chart and "held-out · 0.8\u20131.0: 0.50" in chart
    minis = html.split("class='mini'")  # the per-bin metrics are not drawn as metric curves
    assert not any("heldout_tasks" in m for m in minis[1:])
