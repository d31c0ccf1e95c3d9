"""Admission: the server takes on no more work than it can start soon, and says so.

Work is counted in units (a sample to verify, a program to run, a session step). A request is
admitted when its units fit under the limit (``--queue``); otherwise it is refused at once with
429 and a ``Retry-After`` the client can honour, instead of waiting in an unbounded queue that
grows until a reward call times out. While the server drains (SIGTERM), new work gets 503 and
work in flight finishes.

>>> gate = Admission(limit=4)
>>> with gate.admit(3):
...     gate.in_use
3
>>> gate.in_use
0
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from referee.errors import RefereeError

__all__ = ["Admission", "Busy", "Draining", "TooLarge"]


class Busy(RefereeError):
    """The admission limit is reached: retry after ``retry_after_s``."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Draining(RefereeError):
    """The server is shutting down and takes no new work."""


class TooLarge(RefereeError):
    """One request holds more work than the server admits at once."""


class Admission:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self.draining = False
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    @contextmanager
    def admit(self, units: int = 1) -> Iterator[None]:
        """Hold ``units`` of the limit for the ``with`` block, or raise :class:`Busy`,
        :class:`Draining` or :class:`TooLarge` without holding anything."""
        units = max(1, units)
        with self._lock:
            if self.draining:
                raise Draining("the server is shutting down; send the request to another one")
            if units > self.limit:
                raise TooLarge(
                    f"this request holds {units} work units, more than the server admits at "
                    f"once ({self.limit}, --queue); split it into batches of at most {self.limit}"
                )
            if self.in_use + units > self.limit:
                raise Busy(
                    f"the server is at its admission limit ({self.in_use} of {self.limit} work "
                    "units in use); retry after the Retry-After seconds",
                    retry_after_s=1,
                )
            self.in_use += units
        try:
            yield
        finally:
            with self._lock:
                self.in_use -= units
                self._idle.notify_all()

    def drain(self, timeout_s: float) -> bool:
        """Refuse new work from now on; wait until the work in flight is done. True if it
        finished within ``timeout_s``."""
        with self._lock:
            self.draining = True
            return self._idle.wait_for(lambda: self.in_use == 0, timeout=timeout_s)
