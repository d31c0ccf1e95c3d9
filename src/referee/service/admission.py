"""Admission: the server takes on no more work than it can start soon, and says so.

Work is counted in units (a sample to verify, a program to run, a session step). A request is
admitted when its units fit under the limit (``--queue``); otherwise it is refused at once with
429 and a ``Retry-After`` the client can honour, instead of waiting in an unbounded queue that
grows until a reward call times out. While the server drains (SIGTERM), new work gets 503 and
work in flight finishes.

Some trainers' clients cannot take a 429 (veRL's SandboxFusion reward scores it as a failed test
case): their routes use :meth:`Admission.admit_waiting` instead, which waits, in line and
without polling, until the units fit or its timeout passes. Released units go to the waiters
first, in the order they came, so a waiter is never overtaken by a later arrival.

>>> gate = Admission(limit=4)
>>> with gate.admit(3):
...     gate.in_use
3
>>> gate.in_use
0
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

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


@dataclass(eq=False)
class _Waiter:
    """One ``admit_waiting`` call in line: woken on its own event loop when granted."""

    units: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    granted: bool = False


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if not future.done():
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


class Admission:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self.draining = False
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._waiters: deque[_Waiter] = deque()

    @property
    def waiting(self) -> int:
        """Calls of :meth:`admit_waiting` waiting for room now."""
        return len(self._waiters)

    @contextmanager
    def admit(self, units: int = 1) -> Iterator[None]:
        """Hold ``units`` of the limit for the ``with`` block, or raise :class:`Busy`,
        :class:`Draining` or :class:`TooLarge` without holding anything."""
        units = max(1, units)
        with self._lock:
            self._check(units)
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
            self._release(units)

    @asynccontextmanager
    async def admit_waiting(self, units: int = 1, timeout_s: float = 10.0) -> AsyncIterator[None]:
        """Hold ``units`` for the ``async with`` block, waiting up to ``timeout_s`` seconds for
        them (on the event loop, woken when units are released: no polling). Raises
        :class:`Busy` when the wait times out, :class:`Draining` (also while waiting) and
        :class:`TooLarge` as :meth:`admit` does, holding nothing then.

        >>> async def one(gate):
        ...     async with gate.admit_waiting(1, timeout_s=1):
        ...         return gate.in_use
        >>> asyncio.run(one(Admission(limit=1)))
        1
        """
        units = max(1, units)
        waiter: _Waiter | None = None
        with self._lock:
            self._check(units)
            if not self._waiters and self.in_use + units <= self.limit:
                self.in_use += units
            else:
                loop = asyncio.get_running_loop()
                waiter = _Waiter(units, loop, loop.create_future())
                self._waiters.append(waiter)
        if waiter is not None:
            await self._wait(waiter, timeout_s)
        try:
            yield
        finally:
            self._release(units)

    async def _wait(self, waiter: _Waiter, timeout_s: float) -> None:
        """Wait until ``waiter`` is granted its units (then it holds them) or give up."""
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), timeout=max(0.0, timeout_s))
            return
        except TimeoutError:
            with self._lock:
                if waiter.granted:  # granted as the timeout fired: the units are ours; use them
                    return
                self._remove(waiter)
            raise Busy(
                f"waited {timeout_s:g} s for room at the server's admission limit ({self.limit} "
                "work units, --queue) without getting it; retry later, or give the server a "
                "larger --queue or more --workers",
                retry_after_s=1,
            ) from None
        except BaseException:  # cancelled (client gone) or Draining: give back what was granted
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._remove(waiter)
            if granted:
                self._release(waiter.units)
            raise

    def _check(self, units: int) -> None:
        if self.draining:
            raise Draining("the server is shutting down; send the request to another one")
        if units > self.limit:
            raise TooLarge(
                f"this request holds {units} work units, more than the server admits at "
                f"once ({self.limit}, --queue); split it into batches of at most {self.limit}"
            )

    def _remove(self, waiter: _Waiter) -> None:
        try:
            self._waiters.remove(waiter)
        except ValueError:
            pass
        self._grant()  # a large waiter at the head may have been holding smaller ones back

    def _grant(self) -> None:
        """Hand free units to the waiters in line, first come first served (lock held)."""
        while self._waiters and not self.draining:
            head = self._waiters[0]
            if self.in_use + head.units > self.limit:
                return
            self._waiters.popleft()
            # Count the units before the waiter can wake: its loop runs in another thread and may
            # resume (and read in_use) before this thread gets past the wake-up call.
            self.in_use += head.units
            head.granted = True
            try:
                head.loop.call_soon_threadsafe(_settle, head.future, None)
            except RuntimeError:  # its event loop is closed: nobody is waiting any more
                self.in_use -= head.units
                head.granted = False

    def _release(self, units: int) -> None:
        with self._lock:
            self.in_use -= units
            self._grant()
            self._idle.notify_all()

    def drain(self, timeout_s: float) -> bool:
        """Refuse new work from now on (callers still waiting for room get :class:`Draining`);
        wait until the work in flight is done. True if it finished within ``timeout_s``."""
        with self._lock:
            self.draining = True
            while self._waiters:
                w = self._waiters.popleft()
                error = Draining("the server is shutting down; send the request to another one")
                try:
                    w.loop.call_soon_threadsafe(_settle, w.future, error)
                except RuntimeError:  # its event loop is closed: nobody is waiting any more
                    pass
            return self._idle.wait_for(lambda: self.in_use == 0, timeout=timeout_s)
