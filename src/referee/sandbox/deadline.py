"""Deadlines that kill: every sandbox run started under one ends by it.

A caller with a deadline (a service request, a trainer's reward call) cannot wait for the work
to stop on its own: a timeout that only stops *waiting* leaves the worker busy (AReaL#1426).
Under :func:`deadline`, each :class:`~referee.sandbox.Sandbox` run started in the same context
(threads started with :func:`asyncio.to_thread` or :func:`contextvars.copy_context` carry it)
gets its wall-clock limit cut to the time left, so the sandbox kills the program's process
group when the deadline passes; a run that would start after it does not start at all
(:class:`DeadlineExceeded`).

>>> from referee.sandbox.deadline import deadline, time_left
>>> with deadline(2.0):
...     0 < time_left() <= 2.0
True
>>> time_left() is None
True
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from referee.errors import SandboxError
from referee.sandbox.limits import Limits

__all__ = ["DeadlineExceeded", "clip_limits", "deadline", "deadline_passed", "time_left"]

#: The monotonic time by which every run in this context must have ended; None: no deadline.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "referee_deadline", default=None
)
#: No run is started with less time left than this: it could not do anything useful.
MIN_RUN_S = 0.01


class DeadlineExceeded(SandboxError):
    """The caller's deadline passed before a sandbox run could start."""


@contextmanager
def deadline(seconds: float | None) -> Iterator[float | None]:
    """Runs started inside end within ``seconds`` from now (None: no new deadline). Nested
    deadlines keep the earlier one. Yields the absolute monotonic deadline."""
    outer = _DEADLINE.get()
    if seconds is None:
        yield outer
        return
    mine = time.monotonic() + max(0.0, seconds)
    token = _DEADLINE.set(mine if outer is None else min(outer, mine))
    try:
        yield _DEADLINE.get()
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds left before this context's deadline (never negative); None without one."""
    end = _DEADLINE.get()
    return None if end is None else max(0.0, end - time.monotonic())


def deadline_passed() -> bool:
    """True when this context has a deadline and it has passed."""
    left = time_left()
    return left is not None and left <= 0.0


def clip_limits(limits: Limits) -> Limits:
    """``limits`` with the wall-clock limit cut to this context's deadline; raises
    :class:`DeadlineExceeded` when too little time is left to start a run."""
    left = time_left()
    if left is None:
        return limits
    if left < MIN_RUN_S:
        raise DeadlineExceeded("the request's deadline passed before this run could start")
    if left >= limits.timeout_s:
        return limits
    return limits.with_(timeout_s=left)
