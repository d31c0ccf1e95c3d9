"""The trainers' logs go to the run folder, and the terminal gets a progress bar instead.

Transformers' ``PrinterCallback`` (on whenever its tqdm bar is off) prints every log as a raw
Python dict on stdout: hundreds of lines that bury the run's own stage lines and break ``--json``
readers. :func:`quiet_trainer` swaps it for :class:`StageLog`, which appends each log as one
JSON line to ``<trainer output folder>/trainer_log.jsonl`` and draws a progress bar on stderr
(only on a terminal).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from transformers import PrinterCallback, TrainerCallback

__all__ = ["TRAINER_LOG", "StageLog", "quiet_trainer"]

#: The file, in a trainer's output folder, that holds its logs (one JSON object per line).
TRAINER_LOG = "trainer_log.jsonl"


class StageLog(TrainerCallback):
    """One training stage's logs to ``folder/trainer_log.jsonl``; its steps as a progress bar."""

    def __init__(self, folder: Path, stage: str, console: Console | None = None) -> None:
        self.path = Path(folder) / TRAINER_LOG
        self.stage = stage
        self.console = console or Console(stderr=True)
        self._progress: Progress | None = None
        self._bar: Any = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._progress = Progress(console=self.console, transient=True)
        self._progress.start()
        self._bar = self._progress.add_task(self.stage, total=max(1, state.max_steps))
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
        if self._progress is not None:
            self._progress.update(self._bar, completed=state.global_step)
        return control

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> Any:
        record = {"stage": self.stage, "step": state.global_step, **dict(logs or {})}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        return control


def quiet_trainer(trainer: Any, folder: Path, stage: str) -> StageLog:
    """Replace ``trainer``'s printing of raw logs with a :class:`StageLog` (returned)."""
    trainer.remove_callback(PrinterCallback)
    log = StageLog(folder, stage)
    trainer.add_callback(log)
    return log
