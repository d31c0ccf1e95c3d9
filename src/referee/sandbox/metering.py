"""Metering: what the sandbox runs started in one context cost, summed.

Under :func:`metering`, every :class:`~referee.sandbox.Sandbox` run (``run`` and ``run_python``,
both backends) started in the same context adds its CPU seconds, wall seconds and run count to
the meter, and raises its peak memory to the run's if higher. Threads started with
:func:`asyncio.to_thread` or through :func:`contextvars.copy_context` carry the meter, as they
carry a :func:`~referee.sandbox.deadline.deadline`. Meters nest: a run counts in every meter
open around it (a verification metered on its own inside a metered rollout counts in both).

CPU seconds are the run's cgroup's where it has one (every process the program started,
reaped or not), else the rusage of the program's process tree.

>>> from referee.sandbox.metering import metering
>>> with metering() as meter:
...     meter.usage().runs
0
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from referee.plain import PlainModel, coerce
from referee.sandbox.result import ExecResult

__all__ = ["SandboxMeter", "SandboxUsage", "metering", "record_run"]


@dataclass(frozen=True, kw_only=True)
class SandboxUsage(PlainModel):
    """What sandbox runs cost: summed CPU and wall seconds, the highest peak memory of one run,
    and how many runs there were (a :class:`~referee.plain.PlainModel`, as a run's result)."""

    cpu_s: float = 0.0
    wall_s: float = 0.0
    peak_memory_mb: float = 0.0
    runs: int = 0

    def __post_init__(self) -> None:
        coerce(self, floats=("cpu_s", "wall_s", "peak_memory_mb"))

    def __add__(self, other: SandboxUsage) -> SandboxUsage:
        return SandboxUsage(
            cpu_s=self.cpu_s + other.cpu_s,
            wall_s=self.wall_s + other.wall_s,
            peak_memory_mb=max(self.peak_memory_mb, other.peak_memory_mb),
            runs=self.runs + other.runs,
        )


class SandboxMeter:
    """The running total of one :func:`metering` block; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cpu_s = 0.0
        self._wall_s = 0.0
        self._peak_mb = 0.0
        self._runs = 0

    def add(self, result: ExecResult) -> None:
        with self._lock:
            self._cpu_s += result.cpu_s
            self._wall_s += result.wall_s
            self._peak_mb = max(self._peak_mb, result.peak_memory_mb)
            self._runs += 1

    def usage(self) -> SandboxUsage:
        """The total so far (rounded to microseconds)."""
        with self._lock:
            return SandboxUsage(
                cpu_s=round(self._cpu_s, 6),
                wall_s=round(self._wall_s, 6),
                peak_memory_mb=self._peak_mb,
                runs=self._runs,
            )


#: The meters open in this context, innermost last.
_METERS: contextvars.ContextVar[tuple[SandboxMeter, ...]] = contextvars.ContextVar(
    "referee_meters", default=()
)


@contextmanager
def metering() -> Iterator[SandboxMeter]:
    """Meter every sandbox run started in this context until the block ends."""
    meter = SandboxMeter()
    token = _METERS.set((*_METERS.get(), meter))
    try:
        yield meter
    finally:
        _METERS.reset(token)


def record_run(result: ExecResult) -> ExecResult:
    """Count ``result`` in every meter open in this context; returns it. The sandbox calls
    this for each run it finishes."""
    for meter in _METERS.get():
        meter.add(result)
    return result
