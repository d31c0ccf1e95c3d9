"""Metering: the sandbox runs of a context, summed, on both paths and across threads."""

import asyncio
import contextvars
from concurrent.futures import ThreadPoolExecutor

from referee.sandbox import Limits
from referee.sandbox.metering import SandboxUsage, metering

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\n"
SLEEP = "import time\ntime.sleep(0.4)\n"
# A child the program does not wait for: its CPU time is in no rusage the program gets back.
# The parent returns without waiting for its child, once the child has burnt its CPU (a pipe,
# not a sleep: on a busy machine 0.3 s of CPU can take longer than any fixed nap).
ORPHAN_BURN = (
    "import os, time\n"
    "r, w = os.pipe()\n"
    "if os.fork() == 0:\n"
    "    t = time.process_time()\n"
    "    while time.process_time() - t < 0.3:\n"
    "        pass\n"
    "    os.write(w, b'x')\n"
    "    os._exit(0)\n"
    "os.read(r, 1)\n"
)


def test_cpu_burn_and_sleep_are_told_apart(run_py):
    with metering() as burn:
        r = run_py(BURN, limits=Limits(timeout_s=10))
    assert r.exit_code == 0 and r.cpu_s >= 0.25
    u = burn.usage()
    assert u.runs == 1 and u.cpu_s == r.cpu_s and u.wall_s == r.wall_s
    assert u.peak_memory_mb > 0
    with metering() as sleep:
        r = run_py(SLEEP, limits=Limits(timeout_s=10))
    u = sleep.usage()
    assert u.runs == 1 and u.wall_s >= 0.35 and u.cpu_s < 0.2


def test_a_forked_childs_cpu_is_counted(run_py):
    # The fork server counts the worker's cgroup, the fresh path its run's cgroup.
    r = run_py(ORPHAN_BURN, limits=Limits(timeout_s=10))
    assert r.exit_code == 0 and r.cpu_s >= 0.2, r


def test_meters_nest_and_end_with_their_block(sandbox):
    with metering() as outer:
        sandbox.run_python("pass")
        with metering() as inner:
            sandbox.run_python("pass")
        sandbox.run_python("pass")
    sandbox.run_python("pass")  # after both blocks: counted nowhere
    assert (outer.usage().runs, inner.usage().runs) == (3, 1)


def test_threads_with_the_context_copied_are_metered(sandbox):
    with metering() as meter:
        with ThreadPoolExecutor(2) as pool:
            jobs = [
                pool.submit(contextvars.copy_context().run, sandbox.run_python, BURN)
                for _ in range(2)
            ]
            results = [j.result() for j in jobs]

        async def in_thread() -> None:
            await asyncio.to_thread(sandbox.run_python, "pass")

        asyncio.run(in_thread())
    u = meter.usage()
    assert u.runs == 3
    assert u.cpu_s >= sum(r.cpu_s for r in results) >= 0.5


def test_a_verifiers_verdict_carries_its_sandbox_cost(verifier, humaneval):
    task = humaneval["HumanEval/0"]
    with metering() as meter:
        verdicts = verifier.verify_many([(task, task.hidden["reference"])] * 2)
    assert all(v.passed and v.sandbox is not None and v.sandbox.runs >= 1 for v in verdicts)
    # verify_many's threads carry the caller's meter.
    assert meter.usage().runs == sum(v.sandbox.runs for v in verdicts if v.sandbox)
    assert meter.usage().cpu_s > 0


def test_usage_adds_sums_and_keeps_the_highest_peak():
    a = SandboxUsage(cpu_s=1.0, wall_s=2.0, peak_memory_mb=30.0, runs=1)
    b = SandboxUsage(cpu_s=0.5, wall_s=1.0, peak_memory_mb=10.0, runs=2)
    assert a + b == SandboxUsage(cpu_s=1.5, wall_s=3.0, peak_memory_mb=30.0, runs=3)
