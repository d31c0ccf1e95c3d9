"""After every hostile test: the host is unharmed and the next run, on both paths, is unaffected."""

from __future__ import annotations

import os
import time

import pytest

SANDBOX_UID_BASE = 61000


def _stray_sandbox_processes() -> list[tuple[int, str, bytes]]:
    """Live processes of sandbox uids other than the fork-server workers and their bwraps."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = open(f"/proc/{name}/status").read()
            cmd = open(f"/proc/{name}/cmdline", "rb").read()
        except OSError:
            continue
        uid = int(status.split("Uid:")[1].split()[0])
        state = status.split("State:")[1].split()[0]
        if uid < SANDBOX_UID_BASE or state == "Z":
            continue
        if cmd.startswith(b"bwrap") or b"\x00-I\x00-c\x00" in cmd:
            continue  # a worker's bwrap or its fork server, which live between runs
        found.append((int(name), state, cmd[:80]))
    return found


@pytest.fixture(autouse=True)
def next_run_is_unaffected(sandbox):  # type: ignore[no-untyped-def]
    yield
    fast = sandbox.run_python("print('ok')")
    fresh = sandbox.run(["python3", "-c", "print('ok')"])
    assert fast.ok and fast.stdout == "ok\n", fast
    assert fresh.ok and fresh.stdout == "ok\n", fresh
    deadline = time.monotonic() + 3
    while (strays := _stray_sandbox_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)  # a killed namespace takes a moment to be torn down
    assert strays == [], f"processes of a finished run survive on the host: {strays}"
