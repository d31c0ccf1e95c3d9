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
from typing import Any

from referee.policy.device import Device, pick_device

__all__ = [
    "Timer", "place", "prepare_process", "quiet_libraries", "run_device", "trainer_device_args",
]  # fmt: skip

_device: Device | None = None


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
