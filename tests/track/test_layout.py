"""The run folder's layout: one spelling of every path a run writes."""

from __future__ import annotations

import dataclasses

import pytest

from referee.track.layout import RunLayout


def test_paths_are_under_the_run_folder(tmp_path):
    run = RunLayout(tmp_path / "r1")
    assert run.name == "r1"
    named = {
        run.config: "config.json",
        run.results: "results.json",
        run.heldout_per_task: "heldout_per_task.json",
        run.heldout_episodes: "heldout_episodes.jsonl",
        run.rl_metrics: "rl_metrics.jsonl",
        run.trajectories_jsonl: "trajectories.jsonl",
        run.track_db: "track.sqlite",
        run.artifacts: "artifacts",
        run.model_sft: "model-sft",
        run.model_rl: "model-rl",
        run.model_control: "model-control",
        run.sft_dir: "sft",
        run.rl_dir: "rl",
        run.control_dir: "control",
    }
    for path, name in named.items():
        assert path == tmp_path / "r1" / name


def test_the_store_and_the_layout_agree(tmp_path):
    from referee.track.store import TrackStore

    run = RunLayout(tmp_path).create()
    with TrackStore(run.root) as store:
        assert store.path == run.track_db


def test_create_makes_the_folder_and_the_layout_is_frozen(tmp_path):
    run = RunLayout(str(tmp_path / "a" / "b")).create()
    assert run.root.is_dir()
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.root = tmp_path  # type: ignore[misc]


def test_the_module_example_runs():
    import doctest

    import referee.track.layout as layout_module

    result = doctest.testmod(layout_module)
    assert result.failed == 0 and result.attempted > 0
