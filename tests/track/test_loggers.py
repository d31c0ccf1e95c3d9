"""referee's step metrics reach the trainer's own TensorBoard events, through a real Trainer."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboardX")  # transformers' TensorBoardCallback writes through it

from tensorboardX.proto.event_pb2 import Event  # noqa: E402
from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

from referee.rollout.trajectory import Trajectory, Turn  # noqa: E402
from referee.track.loggers import RefereeMetricsCallback  # noqa: E402
from referee.track.tracker import Tracker  # noqa: E402
from referee.verify.verdict import Verdict  # noqa: E402


class Tiny(torch.nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: Any) -> dict[str, Any]:
        return {"loss": ((self.w - x) ** 2).mean()}


class Feed(TrainerCallback):  # type: ignore[misc]
    """Stands in for the rollouts: each step, the tracker logs trajectories with reward step/10."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        s = state.global_step
        v = Verdict(task_id="t", reward=s / 10, passed=False)
        ts = [Trajectory(task_id="t", policy="p", env="code", verdict=v,
                         turns=[Turn(index=0, assistant={"content": "x"})])]  # fmt: skip
        self.tracker.log(ts, s)


def scalars(folder: Path) -> dict[str, dict[int, float]]:
    """Every scalar of the TFRecord event files under ``folder``: tag -> step -> value."""
    out: dict[str, dict[int, float]] = {}
    for path in folder.rglob("events.out.tfevents.*"):
        data = path.read_bytes()
        at = 0
        while at < len(data):
            (length,) = struct.unpack("<Q", data[at : at + 8])
            event = Event.FromString(data[at + 12 : at + 12 + length])
            at += 12 + length + 4  # length, its crc, the record, its crc
            for v in event.summary.value:
                if v.WhichOneof("value") == "simple_value":
                    out.setdefault(v.tag, {})[event.step] = v.simple_value
    return out


def train(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, install: Callable[..., None]) -> Any:
    logdir = tmp_path / "tb"
    monkeypatch.setenv("TENSORBOARD_LOGGING_DIR", str(logdir))
    tracker = Tracker(detectors=[])
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=3,
        logging_steps=1,
        per_device_train_batch_size=2,
        report_to=["tensorboard"],
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
    )
    data = [{"x": torch.tensor([1.0])} for _ in range(8)]
    trainer = Trainer(model=Tiny(), args=args, train_dataset=data, callbacks=[Feed(tracker)])
    install(trainer, tracker)
    trainer.train()
    return scalars(logdir)


def test_attached_callback_puts_referee_metrics_into_tensorboard(tmp_path, monkeypatch):
    got = train(tmp_path, monkeypatch, RefereeMetricsCallback.attach)
    assert "train/loss" in got  # the trainer's own scalars, written by its own callback
    # TensorBoardCallback files everything of a training log under train/.
    assert got["train/referee/reward_mean"] == pytest.approx({1: 0.1, 2: 0.2, 3: 0.3})
    assert got["train/referee/step"] == {1: 1.0, 2: 2.0, 3: 3.0}
    assert "train/referee/alerts" in got


def test_a_callback_added_the_usual_way_comes_too_late(tmp_path, monkeypatch):
    # Why attach() exists: the Trainer runs its reporting callbacks before those passed in.
    got = train(tmp_path, monkeypatch, lambda tr, tk: tr.add_callback(RefereeMetricsCallback(tk)))
    assert "train/loss" in got
    assert not any("referee" in tag for tag in got)


def test_only_new_metrics_are_merged_once():
    tracker = Tracker(detectors=[])
    cb = RefereeMetricsCallback(tracker)
    logs: dict[str, float] = {"loss": 1.0}
    cb.on_log(None, None, None, logs=logs)
    assert logs == {"loss": 1.0}  # nothing logged yet
    tracker.log([], 4)
    cb.on_log(None, None, None, logs=logs)
    assert logs["referee/step"] == 4.0 and logs["referee/alerts"] == 0.0
    again: dict[str, float] = {}
    cb.on_log(None, None, None, logs=again)
    assert again == {}
    always = RefereeMetricsCallback(tracker, only_new=False, prefix="r/")
    twice: dict[str, float] = {}
    always.on_log(None, None, None, logs=twice)
    always.on_log(None, None, None, logs=twice)
    assert twice["r/step"] == 4.0
