"""A resident: one sandboxed program that answers requests, replaced when it dies."""

import pytest

from referee.errors import SandboxError
from referee.sandbox import Limits, Sandbox

# Reads a frame, answers "<request> <pid>" (then the empty frame that ends a reply); some
# requests make it misbehave.
ECHO = r"""
import os, resource, struct, time

def read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise SystemExit(0)
        data += chunk
    return data

def reply(data):
    os.write(1, struct.pack(">I", len(data)) + data + struct.pack(">I", 0))

while True:
    request = read(struct.unpack(">I", read(4))[0])
    if request == b"exit":
        os._exit(3)
    if request == b"sleep":
        time.sleep(60)
    if request == b"spin":
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(used.ru_utime + used.ru_stime) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))
        while True:
            pass
    if request == b"secret":
        try:
            open("/etc/shadow").read()
            request = b"read it"
        except OSError as e:
            request = type(e).__name__.encode()
    reply(request + b" " + str(os.getpid()).encode())
"""

LIMITS = Limits(timeout_s=3600, cpu_s=600, memory_mb=128)


def _pid(r):  # type: ignore[no-untyped-def]
    assert r.exit_code == 0, r
    return r.stdout.split()[-1]


def test_one_process_answers_request_after_request_in_the_sandbox(sandbox: Sandbox) -> None:
    with sandbox.resident(ECHO, limits=LIMITS) as resident:
        first = resident.exchange(b"a", timeout_s=30)
        second = resident.exchange(b"b" * 200_000, timeout_s=30)  # more than a pipe holds
        assert first.stdout.startswith("a ") and second.stdout.startswith("b" * 200_000 + " ")
        assert _pid(first) == _pid(second) and resident.starts == 1
        assert first.backend == "bwrap-resident"
        assert {"seccomp-child", "fork-server", "bwrap"} <= set(first.isolation)
        assert resident.exchange(b"secret", timeout_s=30).stdout.startswith(
            ("FileNotFoundError", "PermissionError")
        )


def test_a_program_that_dies_is_reported_and_started_again(sandbox: Sandbox) -> None:
    with sandbox.resident(ECHO, limits=LIMITS) as resident:
        before = _pid(resident.exchange(b"a", timeout_s=30))
        died = resident.exchange(b"exit", timeout_s=30)
        assert died.exit_code == 3 and died.stdout == "", died
        after = resident.exchange(b"a", timeout_s=30)
        assert after.stdout.startswith("a ") and resident.starts == 2
        assert _pid(after) != before or resident.starts == 2


def test_a_cpu_limit_it_sets_itself_kills_it_and_the_next_request_is_answered(
    sandbox: Sandbox,
) -> None:
    with sandbox.resident(ECHO, limits=LIMITS) as resident:
        spun = resident.exchange(b"spin", timeout_s=120)
        assert "cpu-limit" in spun.violations and not spun.timed_out, spun
        assert spun.cpu_s >= 0.5, spun  # it spun to its limit (a whole second of its life)
        assert resident.exchange(b"a", timeout_s=30).stdout.startswith("a ")


def test_past_its_wall_clock_the_worker_is_replaced(sandbox: Sandbox) -> None:
    with sandbox.resident(ECHO, limits=LIMITS) as resident:
        old = resident.workspace
        slept = resident.exchange(b"sleep", timeout_s=0.5)
        assert slept.timed_out and "timeout" in slept.violations, slept
        assert resident.workspace is not old  # a new worker, with a new workspace
        assert resident.exchange(b"a", timeout_s=30).stdout.startswith("a ")


def test_the_local_backend_has_no_residents() -> None:
    with (
        pytest.warns(Warning),
        Sandbox(backend="local") as sb,
        pytest.raises(SandboxError, match="no fork-server workers"),
    ):
        sb.resident(ECHO, limits=LIMITS)
