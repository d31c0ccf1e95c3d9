"""The experiment's process: one torch thread, offline hub, quiet libraries, and the stage timer.

Every mode of the experiment starts the same way (:func:`prepare_process`) and times its stages
with one :class:`Timer`, whose laps are the results' ``times``.
"""

from __future__ import annotations

import os
import time

__all__ = ["Timer", "prepare_process", "quiet_libraries"]


class Timer:
    """Wall seconds per stage, by name."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    def lap(self, name: str, t0: float) -> None:
        """Record the time since ``t0`` (a ``time.perf_counter()``) under ``name``."""
        self.times[name] = round(time.perf_counter() - t0, 2)


def quiet_libraries() -> None:
    """Silence the libraries' progress bars and notices about options referee does not set:
    the run prints its own progress, which they would bury."""
    import datasets

    from referee.policy.quiet import quiet_transformers

    datasets.disable_progress_bars()
    quiet_transformers()


def prepare_process() -> None:
    """One torch thread, the hub offline, TRL's experimental notice off, quiet libraries."""
    import torch

    torch.set_num_threads(1)  # two threads on two shared cores were 10-30x slower here
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # environment_factory is marked experimental in TRL; its notice on every run says nothing new.
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    quiet_libraries()
