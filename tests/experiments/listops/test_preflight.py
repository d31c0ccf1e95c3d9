"""issue 20: every option and optional dependency of `referee train` is checked before any
work (one line naming the fix, exit 2, no run folder), and a run that fails later leaves no
half-made folder behind, or is marked failed where the dashboard lists runs."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError
from referee.experiments.listops.config import experiment_config
from referee.experiments.listops.experiment import run_folder
from referee.track.layout import RunLayout
from referee.track.store import TrackStore


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the experiment gets past its checks (prepare_process is its first work)."""
    import referee.experiments.listops.process as process

    def never() -> None:  # pragma: no cover - reached only if a check failed to refuse
        raise AssertionError("work started")

    monkeypatch.setattr(process, "prepare_process", never)


def _train(tmp_path: Path, *args: str):
    run = tmp_path / "r"
    result = CliRunner().invoke(app, ["train", *args, "--run-dir", str(run)])
    lines = [line for line in result.output.splitlines() if line.strip()]
    return result, lines, run


def _refused(tmp_path: Path, *args: str, says: str) -> None:
    result, lines, run = _train(tmp_path, *args)
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("referee: "), result.output
    assert says in lines[0], lines[0]
    assert not run.exists()


def test_a_report_to_logger_that_is_not_installed_is_refused_first(tmp_path, monkeypatch, no_work):
    import referee.optional as optional

    real = optional.installed  # the train extra is here; the loggers are made to be missing
    monkeypatch.setattr(
        optional,
        "installed",
        lambda module: module not in ("wandb", "tensorboardX", "tensorboard") and real(module),
    )
    _refused(tmp_path, "--report-to", "wandb", says="pip install wandb")
    _refused(tmp_path, "--report-to", "tensorboard", says="pip install tensorboardX")


def test_a_model_folder_without_a_model_is_refused_first(tmp_path, no_work):
    (tmp_path / "empty").mkdir()
    _refused(tmp_path, "--model", str(tmp_path / "empty"), says="no config.json")
    _refused(tmp_path, "--sft-checkpoint", str(tmp_path / "empty"), says="no config.json")


def test_a_hub_id_not_in_the_cache_is_refused_first_when_offline(tmp_path, monkeypatch, no_work):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    _refused(tmp_path, "--model", "nobody/no-such-model", says="local hub cache")


def test_a_busy_metrics_port_is_refused_first(tmp_path, no_work):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        _refused(tmp_path, "--metrics-port", str(port), says="in use")


def test_a_missing_sandbox_is_refused_first(tmp_path, monkeypatch, no_work):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    _refused(tmp_path, says="apt-get install bubblewrap")


def test_a_run_that_fails_before_making_anything_leaves_no_folder(tmp_path):
    layout = RunLayout(tmp_path / "runs" / "r1")
    with pytest.raises(RuntimeError), run_folder(layout, experiment_config(), log=print):
        assert layout.config.is_file()
        raise RuntimeError("the sandbox broke")
    assert not layout.root.exists()


def test_a_run_that_fails_after_making_something_is_marked_failed(tmp_path):
    layout = RunLayout(tmp_path / "r1")
    with pytest.raises(RuntimeError), run_folder(layout, experiment_config(), log=print):
        layout.model_sft.mkdir()  # the fine-tuned model, worth keeping
        raise RuntimeError("GRPO broke")
    assert layout.model_sft.is_dir()
    with TrackStore(layout.root, create=False) as store:
        assert [(r.run_id, r.status) for r in store.runs()] == [("r1", "failed")]
    with pytest.raises(KeyboardInterrupt), run_folder(layout, experiment_config(), log=print):
        raise KeyboardInterrupt
    with TrackStore(layout.root, create=False) as store:
        assert store.run("r1").status == "cancelled"


def test_a_folder_that_was_there_before_is_never_removed(tmp_path):
    layout = RunLayout(tmp_path / "r1")
    layout.root.mkdir()
    with pytest.raises(ConfigError), run_folder(layout, experiment_config(), log=print):
        raise ConfigError("bad task file")
    assert layout.root.is_dir()


def test_a_run_folder_as_sft_checkpoint_is_refused_first_naming_model_sft(tmp_path, no_work):
    from tests.policy.test_folder import fake_run

    run = fake_run(tmp_path / "earlier")
    says = f"{run} is a run folder, not a model; pass {run / 'model-sft'}"
    _refused(tmp_path, "--sft-checkpoint", str(run), says=says)
    _refused(tmp_path, "--model", str(run), says=says)
    (run / "model-sft" / "config.json").unlink()  # no fine-tuned model in it: say what is wrong
    _refused(tmp_path, "--sft-checkpoint", str(run), says=f"pass {run / 'model-rl'}")


@pytest.mark.parametrize("count", ["1", "3", "5"])
def test_generated_tasks_without_a_heldout_split_are_refused_first(tmp_path, no_work, count):
    # issue 20: `--tasks 3` fine-tuned, then failed with "no tasks to average pass@k over"
    _refused(tmp_path, "--tasks", count, says="so no held-out task: ask for more --tasks")


def test_a_run_dir_that_holds_a_run_is_refused_first_and_left_as_it_was(tmp_path, no_work):
    # issue 20: a second run was merged into the first one's store, its models overwritten
    run = tmp_path / "r"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "track.sqlite").write_bytes(b"")
    result, lines, _ = _train(tmp_path)
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert f"--run-dir {run} already holds a run (config.json, track.sqlite)" in lines[0]
    assert "name a new folder" in lines[0]
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "track.sqlite"]


def test_an_empty_run_dir_is_accepted(tmp_path, monkeypatch):
    import referee.experiments.listops.process as process

    (tmp_path / "r").mkdir()
    monkeypatch.setattr(
        process, "prepare_process", lambda device=None: (_ for _ in ()).throw(KeyError("ok"))
    )
    result, _, _ = _train(tmp_path)
    assert isinstance(result.exception, KeyError)  # past every check: the work began


@pytest.mark.parametrize("where", ["afile", "afile/sub", "/proc/nope"])
def test_a_run_dir_that_cannot_be_a_folder_is_refused_first(tmp_path, no_work, where):
    """QA finding 1: a file, a path under a file, or a folder nothing can be made in was a
    traceback (FileExistsError, NotADirectoryError, FileNotFoundError) after the checks."""
    (tmp_path / "afile").write_text("x")
    target = where if where.startswith("/") else str(tmp_path / where)
    result = CliRunner().invoke(app, ["train", "--run-dir", target])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith(f"referee: --run-dir {target}"), result.output
    assert (tmp_path / "afile").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # the probe left nothing
