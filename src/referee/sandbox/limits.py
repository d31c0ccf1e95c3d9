"""Resource limits of one sandboxed run.

A run gets a wall-clock timeout, a memory limit, a CPU-time limit, a cap on processes, on the size
of any file it writes, on open files and on captured output. Every field has a safe default so
that ``Limits()`` is always a sensible choice for untrusted code.

>>> Limits(timeout_s=2, memory_mb=256).cpu_seconds
3
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from referee.errors import ConfigError

__all__ = ["Limits"]


def _positive(name: str, value: float, *, minimum: float = 0.0) -> None:
    if not (value > minimum) or math.isinf(value) or math.isnan(value):
        raise ConfigError(f"{name} must be a finite number above {minimum:g}, got {value!r}")


@dataclass(frozen=True)
class Limits:
    """Limits for one run. Sizes are in MiB, times in seconds.

    ``cpu_s`` defaults to the timeout plus one second, rounded up: a program cannot burn more
    CPU than wall time on one core, and the extra second keeps the wall clock the binding limit
    for single-threaded code (so that the result says ``timed_out`` rather than a CPU signal).
    """

    timeout_s: float = 10.0
    memory_mb: int = 512
    cpu_s: float | None = None
    max_processes: int = 64
    max_file_mb: int = 64
    max_open_files: int = 256
    workspace_mb: int = 256
    stdout_bytes: int = 1 << 20
    stderr_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        _positive("timeout_s", self.timeout_s)
        _positive("memory_mb", self.memory_mb, minimum=15)
        if self.cpu_s is not None:
            _positive("cpu_s", self.cpu_s)
        _positive("max_processes", self.max_processes)
        _positive("max_file_mb", self.max_file_mb)
        _positive("max_open_files", self.max_open_files, minimum=15)
        _positive("workspace_mb", self.workspace_mb)
        if self.stdout_bytes < 0 or self.stderr_bytes < 0:
            raise ConfigError("stdout_bytes and stderr_bytes must be zero or more")

    @property
    def cpu_seconds(self) -> int:
        """The RLIMIT_CPU value in whole seconds (the kernel counts whole seconds)."""
        if self.cpu_s is not None:
            return max(1, math.ceil(self.cpu_s))
        return max(1, math.ceil(self.timeout_s) + 1)

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024

    def with_(self, **changes: object) -> Limits:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)  # type: ignore[arg-type]
