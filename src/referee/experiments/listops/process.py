"""The experiment's process: its device, offline hub, quiet libraries, and the stage timer.

Every mode of the experiment starts the same way (:func:`prepare_process`) and times its stages
with one :class:`Timer`, whose laps are the results' ``times``. The device is chosen once
(:func:`referee.policy.device.pick_device`: CUDA where present, in bf16 where supported, else
the CPU with one torch thread) and read back by the stages (:func:`run_device`,
:func:`trainer_device_args`, :func:`place`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from referee.policy.device import Device, pick_device

__all__ = [
    "StageClock", "Timer", "place", "prepare_process", "quiet_libraries", "run_device",
    "trainer_device_args",
]  # fmt: skip

_device: Device | None = None


class Timer:
    """Wall seconds per stage, by name."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    def lap(self, name: str, t0: float) -> None:
        """Record the time since ``t0`` (a ``time.perf_counter()``) under ``name``."""
        self.times[name] = round(time.perf_counter() - t0, 2)


class StageClock:
    """A stage's wall and process-CPU seconds since :meth:`start`, less its pauses (the
    evaluations run inside a stage are not the stage's work).

    >>> clock = StageClock()
    >>> with clock.paused():
    ...     _ = sum(range(10**5))
    >>> clock.cpu() < 0.5 and clock.wall() >= 0.0
    True
    """

    def __init__(self) -> None:
        self.start()

    def start(self) -> None:
        """Start (or restart) the clock from now."""
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        self._paused_wall = self._paused_cpu = 0.0

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The block's time does not count."""
        w, c = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self._paused_wall += time.perf_counter() - w
            self._paused_cpu += time.process_time() - c

    def wall(self) -> float:
        """Wall seconds counted so far."""
        return time.perf_counter() - self._wall0 - self._paused_wall

    def cpu(self) -> float:
        """Process-CPU seconds counted so far (all threads)."""
        return time.process_time() - self._cpu0 - self._paused_cpu

    def spent(self, clock: str) -> float:
        """Seconds counted so far by ``clock``: "wall" or "cpu"
        (:data:`referee.experiments.listops.config.CLOCKS`)."""
        return self.cpu() if clock == "cpu" else self.wall()


def quiet_libraries() -> None:
    """Silence the libraries' progress bars and notices about options referee does not set:
    the run prints its own progress, which they would bury."""
    import datasets

    from referee.policy.quiet import quiet_transformers

    datasets.disable_progress_bars()
    quiet_transformers()


def run_device() -> Device:
    """The device :func:`prepare_process` chose (``auto`` if it has not run)."""
    return _device if _device is not None else pick_device()


def trainer_device_args() -> dict[str, Any]:
    """TRL/transformers ``TrainingArguments`` for the run's device: the CPU forced where there
    is no GPU, mixed precision (bf16, or fp16 on older GPUs) where there is one."""
    d = run_device()
    return {"use_cpu": d.use_cpu, "bf16": d.bf16, "fp16": d.fp16}


def place(model: Any) -> Any:
    """``model`` on the run's device (float32 weights: the trainer autocasts); returned."""
    import torch

    # Module.to, called unbound: transformers' wrapped ``to`` confuses type checkers.
    torch.nn.Module.to(model, run_device().device)
    return model


def prepare_process(device: str | None = None) -> Device:
    """The device (``device``: auto, cpu, cuda; see :func:`~referee.policy.device.pick_device`),
    one torch thread on the CPU, the hub offline, TRL's experimental notice off, quiet
    libraries. Returns the device."""
    import torch

    global _device
    _device = pick_device(device)
    if _device.threads is not None:
        # two threads on two shared cores were 10-30x slower here
        torch.set_num_threads(_device.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # environment_factory is marked experimental in TRL; its notice on every run says nothing new.
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    quiet_libraries()
    return _device
