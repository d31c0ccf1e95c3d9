"""referee's step metrics in the trainer's own loggers (TensorBoard, W&B, whatever ``report_to``).

A transformers ``Trainer`` (TRL's trainers are ones) reports through callbacks: at each log
event its ``CallbackHandler`` calls every callback's ``on_log`` in list order with the *same*
``logs`` dict, and the reporting callbacks (``TensorBoardCallback``, ``WandbCallback``...) write
what is in it. :class:`RefereeMetricsCallback` adds the tracker's latest step metrics to that
dict, under ``referee/``, before they write, so every logger the user configured gets them,
at the trainer's own step, without referee knowing which loggers those are.

Order matters: the ``Trainer`` puts the reporting callbacks *before* the ones passed in
``callbacks=`` or ``add_callback``, so a callback added those ways would add its values after
they were written. Install it with :meth:`RefereeMetricsCallback.attach`, which puts it first.

>>> from transformers import Trainer                                      # doctest: +SKIP
>>> trainer = Trainer(model, args=TrainingArguments(..., report_to=["tensorboard"]))
>>> RefereeMetricsCallback.attach(trainer, tracker)                       # doctest: +SKIP
>>> trainer.train()   # TensorBoard: train/referee/reward_mean, train/referee/pass_rate, ...

(``TensorBoardCallback`` files every key of a training log under ``train/``.)

W&B takes the same path: with ``report_to=["wandb"]`` the ``WandbCallback`` logs every number
in ``logs``, ``referee/...`` included (``WANDB_MODE=offline`` for a run without a server).
"""

from __future__ import annotations

from typing import Any, Protocol

from transformers import TrainerCallback

from referee.track.detectors import Alert
from referee.track.metrics import StepMetrics

__all__ = ["RefereeMetricsCallback", "TrackerLike"]


class TrackerLike(Protocol):
    def latest_metrics(self) -> StepMetrics | None: ...

    def anomalies(self) -> list[Alert]: ...


class RefereeMetricsCallback(TrainerCallback):
    """Merges ``tracker.latest_metrics()`` (prefixed ``prefix``) into the trainer's logs.

    ``only_new`` (default): a referee step's metrics go out once, at the first log event after
    the tracker logged it, so a chart never shows a stale value as a new point. The running
    alert count goes with them as ``<prefix>alerts``.
    """

    def __init__(
        self, tracker: TrackerLike, *, prefix: str = "referee/", only_new: bool = True
    ) -> None:
        self.tracker = tracker
        self.prefix = prefix
        self.only_new = only_new
        self._sent: int | None = None

    @classmethod
    def attach(cls, trainer: Any, tracker: TrackerLike, **kwargs: Any) -> RefereeMetricsCallback:
        """Make a callback and put it first among ``trainer``'s callbacks (see the module
        docstring for why first)."""
        cb = cls(tracker, **kwargs)
        trainer.callback_handler.callbacks.insert(0, cb)
        return cb

    def values(self) -> dict[str, float]:
        """What the next log event would get (empty when there is nothing new)."""
        m = self.tracker.latest_metrics()
        if m is None or (self.only_new and self._sent == m.step):
            return {}
        out = {self.prefix + k: v for k, v in m.as_dict().items()}
        out[self.prefix + "alerts"] = float(len(self.tracker.anomalies()))
        return out

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        if logs is None:
            return
        values = self.values()
        if values:
            # In place: the handler passes this very dict on to the callbacks after this one.
            logs.update(values)
            m = self.tracker.latest_metrics()
            self._sent = None if m is None else m.step
