"""Time limits judged on CPU time, with a wall-clock backstop: verdicts that do not depend on load.

A time limit on the wall clock judges the machine as much as the program: on a loaded host a
correct program that needs a few milliseconds of CPU can wait past a one-second limit for its
turn on a core, and a gold answer is judged "time limit exceeded" (a false negative that
training learns from). Judges (Codeforces, ICPC) limit CPU time instead, with a wall clock as a
backstop for programs that sleep or block. So do the verifiers here:

* The **limit** is on the CPU time of the run's whole process tree (the run's cgroup's where it
  has one, else the rusage of the tree): ``ExecResult.cpu_s``. ``RLIMIT_CPU`` is set at the
  limit plus a second (the kernel's hard kill follows a second later), so a busy loop is
  stopped near its limit however loaded the machine is; a run that ends with more CPU than its
  limit is over it too.
* The **backstop** is the wall clock, at :data:`BACKSTOP_FACTOR` times the limit plus
  :data:`BACKSTOP_SLACK_S`: it only ends runs that do not burn CPU (a ``sleep``, a read that
  never returns, a starved process).
* A run the backstop ended while its CPU time was within the limit is **not** a failed test
  by itself. What its processes were doing decides. The kernel counts, per process, the time
  it was runnable but had no CPU (schedstat's run delay, ``ExecResult.wait_s``, read just
  before the kill). CPU time plus that wait under
  :data:`RUNNABLE_SHARE` (half) of the wall time: the program was idle or blocked most of the
  time (it waits, not the machine: a failure, "time limit exceeded (idle or blocked)"). Else
  the machine starved it: the run is run once more, with a backstop :data:`RETRY_STRETCH`
  (4) times longer (an infinite loop on a busy machine then reaches its CPU limit and fails
  on it, rather than being ended starved twice), and if the backstop ends that one too with
  the program starved, :func:`judged_run` raises :class:`MachineStarved`, a sandbox
  (infrastructure) error: the verdict is an ``infra_error``, never a reward of 0. Where the
  wait is unknown (no schedstat, no cgroup to find the processes), the CPU share alone
  decides, at :data:`IDLE_SHARE` (10%), and an idle run is run once more too before it is
  judged.

Why not the CPU share alone: a wrong answer that computes a little and sleeps a lot (20% busy)
would look starved and earn an infra error (no reward of 0 to learn from) on every machine; its
run delay is small, because it is asleep, not queued, so it stays a time-limit failure. A
program busy at least half of the backstop has used more CPU than its limit (1.5x limit) and
fails on CPU time anyway. The 10% fallback: a program competing with ``k`` busy processes per
core at the same priority gets ``1/(k+1)`` of a core; 10% is nine per core, far past the load a
training host runs at, while a program that sleeps or waits on a pipe uses well under 1%.

>>> lim = cpu_limits(2.0)
>>> lim.timeout_s, lim.cpu_seconds
(7.0, 3)
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from typing import Literal

from referee.errors import SandboxError
from referee.sandbox.limits import Limits
from referee.sandbox.result import ExecResult

__all__ = [
    "BACKSTOP_FACTOR",
    "BACKSTOP_SLACK_S",
    "IDLE_SHARE",
    "RETRY_STRETCH",
    "RUNNABLE_SHARE",
    "STRETCH_ENV",
    "MachineStarved",
    "TimeOutcome",
    "backstop_s",
    "cpu_limits",
    "judged_run",
    "stall_outcome",
    "stalls_outcome",
    "stretched",
    "time_outcome",
]

#: The wall-clock backstop is this many times the CPU limit, ...
BACKSTOP_FACTOR = 3.0
#: ... plus this many seconds.
BACKSTOP_SLACK_S = 1.0
#: A run the backstop ended twice is "idle" (the program's fault) when it spent less than this
#: share of its wall time on a CPU or queued for one; else the machine starved it.
RUNNABLE_SHARE = 0.5
#: The same, where the run delay is unknown: the share of the wall time spent on a CPU.
IDLE_SHARE = 0.10

#: A starved run is run again with its backstop (and its calls') this many times longer: the
#: machine is busy, so an infinite loop needs longer to reach its CPU limit.
RETRY_STRETCH = 4.0
#: The environment variable that tells code in the sandbox (a harness's per-call backstop, the
#: SQL runner's) how much its backstop is stretched.
STRETCH_ENV = "REFEREE_BACKSTOP_STRETCH"
_STRETCH: contextvars.ContextVar[float] = contextvars.ContextVar(
    "referee_backstop_stretch", default=1.0
)


def stretched(limits: Limits, env: dict[str, str] | None) -> tuple[Limits, dict[str, str] | None]:
    """``limits`` and ``env`` of a sandbox run started in this context: inside a retry of a
    starved run, the wall clock stretched by :data:`RETRY_STRETCH`, and the stretch named in
    the environment (:data:`STRETCH_ENV`) for the backstops inside the run."""
    factor = _STRETCH.get()
    if factor == 1.0:
        return limits, env
    return limits.with_(timeout_s=limits.timeout_s * factor), {
        **(env or {}),
        STRETCH_ENV: repr(factor),
    }


#: ``ok``: within the limit. ``time-limit``: more CPU than the limit. ``idle``: ended by the
#: backstop with almost no CPU use (sleeping or blocked). ``starved``: ended by the backstop
#: while runnable (the machine was busy): retried, never a verdict.
TimeOutcome = Literal["ok", "time-limit", "idle", "starved"]


class MachineStarved(SandboxError):
    """A run was ended by the wall-clock backstop twice while its CPU time was within its limit
    and it was not idle: the machine was too busy to judge it. An infrastructure error."""


def backstop_s(cpu_limit_s: float) -> float:
    """The wall-clock backstop of a run with ``cpu_limit_s`` seconds of CPU."""
    return BACKSTOP_FACTOR * cpu_limit_s + BACKSTOP_SLACK_S


def cpu_limits(cpu_limit_s: float, base: Limits | None = None, **changes: object) -> Limits:
    """``base`` (or the defaults) with ``changes``, judged on ``cpu_limit_s`` of CPU: RLIMIT_CPU
    at the limit plus a second, the wall clock at :func:`backstop_s`."""
    lim = (base or Limits()).with_(**changes) if changes else (base or Limits())
    return lim.with_(timeout_s=backstop_s(cpu_limit_s), cpu_s=cpu_limit_s + 1.0)


def time_outcome(r: ExecResult, cpu_limit_s: float) -> TimeOutcome:
    """What ``r`` says about a CPU-time limit of ``cpu_limit_s`` (one run; see
    :func:`judged_run` for the retry)."""
    if "cpu-limit" in r.violations or r.cpu_s > cpu_limit_s:
        return "time-limit"
    if not r.timed_out:
        return "ok"
    return stall_outcome(r.cpu_s, r.wall_s, r.wait_s)


def stall_outcome(
    cpu_s: float, wall_s: float, wait_s: float | None = None
) -> Literal["idle", "starved"]:
    """A backstop kill within the CPU limit: idle (the program waited) or starved (the machine
    was busy), by the share of the wall time it was runnable (on a CPU or queued for one), or,
    with the queueing unknown, by the share it spent on a CPU."""
    if wait_s is not None:
        return "idle" if cpu_s + wait_s < RUNNABLE_SHARE * wall_s else "starved"
    return "idle" if cpu_s < IDLE_SHARE * wall_s else "starved"


def stalls_outcome(stalls: Iterable[tuple[float, float, float | None]]) -> TimeOutcome:
    """The outcome of a run's calls that their own backstops ended, ``(cpu, wall, wait)`` each:
    ``starved`` if one of them was, else ``idle`` if there were any, else ``ok``."""
    found = [stall_outcome(*s) for s in stalls]
    if "starved" in found:
        return "starved"
    return "idle" if found else "ok"


def judged_run(
    run: Callable[[], ExecResult],
    cpu_limit_s: float,
    *,
    stalled: Callable[[ExecResult], TimeOutcome] | None = None,
) -> tuple[ExecResult, TimeOutcome]:
    """``run()`` judged on ``cpu_limit_s`` of CPU: a backstop kill within the limit is run once
    more (unless the run delay shows the program idle: that is its own doing, and waiting for
    it twice would double what a sleeping answer costs); the second run's outcome is returned,
    ``ok``, ``time-limit`` or ``idle``, or :class:`MachineStarved` raised if the machine starved
    it again.

    ``stalled`` looks inside a run that ended within its limits (a harness's calls, each with
    its own limit and backstop) and says ``idle`` or ``starved`` where one of them was ended by
    its backstop (else ``ok``); it is treated like the run's own outcome."""

    def once() -> tuple[ExecResult, TimeOutcome, bool]:
        r = run()
        outcome = time_outcome(r, cpu_limit_s)
        # Idle on the run delay's evidence is sure (a sleeping program's delay does not grow
        # with load); on the CPU share alone, it is run again like a starved one.
        retry = outcome == "starved" or (outcome == "idle" and r.wait_s is None)
        if outcome == "ok" and stalled is not None:
            outcome = stalled(r)
            retry = outcome == "starved"
        return r, outcome, retry

    r, outcome, retry = once()
    if retry:
        token = _STRETCH.set(RETRY_STRETCH)
        try:
            r, outcome, _ = once()
        finally:
            _STRETCH.reset(token)
    if outcome == "starved":
        raise MachineStarved(
            f"the machine was too busy to judge a run: the wall-clock backstop ended it twice "
            f"with its CPU time within {cpu_limit_s:g}s (last: {r.cpu_s:.2f}s CPU in "
            f"{r.wall_s:.2f}s); retry on a less loaded machine"
        )
    return r, outcome
