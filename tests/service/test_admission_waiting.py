"""``Admission.admit_waiting``: waiting in line for room instead of a 429 (the compat routes whose
clients cannot take one)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from referee.service.admission import Admission, Busy, Draining, TooLarge


def test_waiters_get_room_in_the_order_they_came_without_polling() -> None:
    gate = Admission(limit=1)
    order: list[int] = []

    async def one(i: int, hold_s: float) -> None:
        async with gate.admit_waiting(1, timeout_s=5):
            order.append(i)
            await asyncio.sleep(hold_s)

    async def main() -> float:
        started = time.monotonic()
        first = asyncio.create_task(one(0, 0.2))
        await asyncio.sleep(0.01)
        rest = [asyncio.create_task(one(i, 0.0)) for i in range(1, 5)]
        await asyncio.sleep(0.05)
        assert gate.waiting == 4 and gate.in_use == 1
        await asyncio.gather(first, *rest)
        return time.monotonic() - started

    took = asyncio.run(main())
    assert order == [0, 1, 2, 3, 4]
    assert gate.in_use == 0 and gate.waiting == 0
    assert took < 0.5, took  # woken by the release, not by a timer


def test_a_wait_that_times_out_is_busy_and_holds_nothing() -> None:
    gate = Admission(limit=2)

    async def main() -> None:
        with gate.admit(2):
            started = time.monotonic()
            with pytest.raises(Busy, match=r"waited 0\.2 s"):
                async with gate.admit_waiting(1, timeout_s=0.2):
                    pass
            assert 0.2 <= time.monotonic() - started < 0.5
            assert gate.waiting == 0
        async with gate.admit_waiting(2, timeout_s=0):  # room now: no wait at all
            assert gate.in_use == 2
        with pytest.raises(TooLarge):
            async with gate.admit_waiting(3, timeout_s=1):
                pass

    asyncio.run(main())
    assert gate.in_use == 0


def test_units_released_by_another_thread_wake_the_waiter() -> None:
    gate = Admission(limit=1)
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with gate.admit(1):
            held.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)

    async def main() -> float:
        asyncio.get_running_loop().call_later(0.1, release.set)
        started = time.monotonic()
        async with gate.admit_waiting(1, timeout_s=5):
            assert gate.in_use == 1
            return time.monotonic() - started

    took = asyncio.run(main())
    t.join()
    # Woken by the release (0.1 s), not by the 5 s timeout; the margin is for a loaded machine.
    assert 0.05 < took < 3.0, took
    assert gate.in_use == 0


def test_a_cancelled_waiter_leaves_the_line_and_a_drain_fails_the_rest() -> None:
    gate = Admission(limit=1)

    async def wait_one() -> None:
        async with gate.admit_waiting(1, timeout_s=10):
            pass

    async def main() -> None:
        with gate.admit(1):
            cancelled = asyncio.create_task(wait_one())
            drained = asyncio.create_task(wait_one())
            await asyncio.sleep(0.05)
            assert gate.waiting == 2
            cancelled.cancel()
            await asyncio.sleep(0.01)
            assert gate.waiting == 1
            # drain() blocks until work in flight ends: run it in a thread, release after.
            draining = asyncio.create_task(asyncio.to_thread(gate.drain, 5))
            with pytest.raises(Draining):
                await drained
        assert await draining is True
        with pytest.raises(Draining):
            async with gate.admit_waiting(1, timeout_s=1):
                pass

    asyncio.run(main())
    assert gate.in_use == 0 and gate.waiting == 0


def test_a_grant_to_a_waiter_that_gave_up_is_given_back() -> None:
    """The units are granted (under the lock) just as the waiter is cancelled: they must come
    back, or the limit shrinks by them for good."""
    gate = Admission(limit=1)

    async def main() -> None:
        holder = gate.admit(1)
        holder.__enter__()
        task = asyncio.create_task(_wait(gate))
        await asyncio.sleep(0.05)
        holder.__exit__(None, None, None)  # grants the unit to the waiter...
        task.cancel()  # ...which is cancelled before it runs again
        with pytest.raises(asyncio.CancelledError):
            await task
        assert gate.in_use == 0

    asyncio.run(main())


async def _wait(gate: Admission) -> None:
    async with gate.admit_waiting(1, timeout_s=10):
        await asyncio.sleep(10)
