"""The outcome of one sandboxed run.

``ExecResult`` is plain data: it never raises for what the program did. A crash, a timeout, an
exhausted memory limit or a flood of output are all fields here. It is a pydantic model because it
crosses process boundaries (``referee exec --json``, the HTTP service, the trajectory store) as
pydantic's data does, and is a :class:`~referee.plain.PlainModel` (a frozen dataclass) so that the
sandbox runs programs before pydantic is imported: a one-shot ``referee verify`` gives its first
verdict that much sooner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from referee.plain import PlainModel, coerce

__all__ = ["EXEC_RESULT_SCHEMA_VERSION", "ExecResult", "Violation"]

EXEC_RESULT_SCHEMA_VERSION = 1

#: The names used in ``ExecResult.violations``. Each one is a limit or rule the run ran into.
Violation = Literal[
    "timeout",  # wall clock ran out; the whole process tree was killed
    "cpu-limit",  # RLIMIT_CPU fired (SIGXCPU or SIGKILL from the kernel)
    "memory-limit",  # the memory cgroup (or RLIMIT_AS where there is none) stopped it
    "process-limit",  # the pids cgroup refused a fork
    "file-size-limit",  # RLIMIT_FSIZE fired (SIGXFSZ)
    "output-limit",  # stdout or stderr went past its cap and was cut
    "stray-processes-killed",  # processes were still alive when the run ended
    "seccomp-kill",  # the kernel killed it for a forbidden system call (SIGSYS)
    "supervisor-lost",  # the program took down its in-sandbox supervisor; worker replaced
]


@dataclass(frozen=True, kw_only=True)
class ExecResult(PlainModel):
    """What happened when a program ran in the sandbox.

    ``exit_code`` is ``None`` when the program was ended by a signal (``signal`` says which).
    ``cpu_s`` is the CPU time of the whole process tree; ``wait_s`` (runs the wall clock ended
    only) the time it was runnable but had no CPU. ``peak_memory_mb`` is the memory charged to
    the run's cgroup where one exists, otherwise the peak resident set of its largest process.
    ``isolation`` lists the layers that were active, so that a result produced on a machine with
    weaker isolation says so.
    """

    schema_version: int = EXEC_RESULT_SCHEMA_VERSION
    exit_code: int | None
    signal: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_memory_mb: float = 0.0
    #: Seconds the run's processes spent runnable but waiting for a CPU (the kernel's
    #: schedstat), read when the wall clock ended the run; None when it did not or is unknown.
    #: Tells a starved run (the machine was busy) from an idle one (the program waited).
    wait_s: float | None = None
    violations: list[str] = field(default_factory=list)
    isolation: list[str] = field(default_factory=list)
    backend: str = "bwrap"

    def __post_init__(self) -> None:
        coerce(
            self, floats=("wall_s", "cpu_s", "peak_memory_mb", "wait_s"),
            lists=("violations", "isolation"),
        )  # fmt: skip

    @property
    def ok(self) -> bool:
        """True when the program exited 0 on its own, within every limit."""
        return self.exit_code == 0 and not self.timed_out and not self.memory_exceeded

    def summary(self) -> str:
        """A one-line human description, e.g. ``exit 0 in 12.3 ms``."""
        if self.timed_out:
            what = "timed out"
        elif self.exit_code is None:
            what = f"killed by signal {self.signal}"
        else:
            what = f"exit {self.exit_code}"
        extra = f" [{', '.join(self.violations)}]" if self.violations else ""
        return f"{what} in {self.wall_s * 1000:.1f} ms{extra}"


def decode_output(data: bytes) -> str:
    """Decode program output without ever failing: invalid UTF-8 becomes U+FFFD.

    NUL and other control bytes are kept; JSON encoding escapes them.
    """
    return data.decode("utf-8", errors="replace")
