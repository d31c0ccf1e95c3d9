"""A run folder's layout: every file and folder a ``referee train`` run writes, named once.

The store, the dashboard, the exports and the experiment all meet in the run folder; spelling
its paths as string literals in each of them let one drift from the others. :class:`RunLayout`
is the one spelling.

>>> run = RunLayout("runs/r1")
>>> str(run.results), str(run.model_sft), str(run.track_db)
('runs/r1/results.json', 'runs/r1/model-sft', 'runs/r1/track.sqlite')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from referee.rollout.sink import JSONL_NAME
from referee.track.schema import DB_NAME

__all__ = ["RunLayout"]


@dataclass(frozen=True)
class RunLayout:
    """The paths of one run folder (``root``); nothing is created until :meth:`create`."""

    root: Path

    def __init__(self, root: str | Path) -> None:
        object.__setattr__(self, "root", Path(root))

    def create(self) -> RunLayout:
        """Make the run folder (and its parents); returns ``self``."""
        self.root.mkdir(parents=True, exist_ok=True)
        return self

    @property
    def name(self) -> str:
        """The folder's name: the run's id in its store."""
        return self.root.name

    @property
    def made_by_train(self) -> bool:
        """Whether ``referee train`` made this folder: it writes :attr:`config` first of all."""
        return self.config.is_file()

    # ---- what the run records ------------------------------------------------------------
    @property
    def config(self) -> Path:
        """The run's options (``ExperimentConfig.options()``)."""
        return self.root / "config.json"

    @property
    def results(self) -> Path:
        """The results ``referee train --json`` prints."""
        return self.root / "results.json"

    @property
    def heldout_per_task(self) -> Path:
        """Each held-out task's pass/fail at each stage (the paired tests' data)."""
        return self.root / "heldout_per_task.json"

    @property
    def heldout_episodes(self) -> Path:
        """Multi-turn: every held-out episode of every stage, one JSON line each."""
        return self.root / "heldout_episodes.jsonl"

    @property
    def rl_metrics(self) -> Path:
        """TRL's metrics per GRPO step."""
        return self.root / "rl_metrics.jsonl"

    @property
    def trajectories_jsonl(self) -> Path:
        """The GRPO episodes as JSON lines (an export beside the store)."""
        return self.root / JSONL_NAME

    @property
    def track_db(self) -> Path:
        """The run's store (:class:`referee.track.store.TrackStore`)."""
        return self.root / DB_NAME

    @property
    def artifacts(self) -> Path:
        """Large blobs the store keeps out of its database."""
        return self.root / "artifacts"

    # ---- models and the trainers' output folders -----------------------------------------
    @property
    def model_sft(self) -> Path:
        """The fine-tuned model (GRPO and the control start from it)."""
        return self.root / "model-sft"

    @property
    def model_rl(self) -> Path:
        """The model after GRPO."""
        return self.root / "model-rl"

    @property
    def model_control(self) -> Path:
        """The SFT-only control's model."""
        return self.root / "model-control"

    @property
    def sft_dir(self) -> Path:
        """The fine-tuning trainer's output folder."""
        return self.root / "sft"

    @property
    def rl_dir(self) -> Path:
        """The GRPO trainer's output folder (TensorBoard logs land here)."""
        return self.root / "rl"

    @property
    def control_dir(self) -> Path:
        """The control trainer's output folder."""
        return self.root / "control"
