"""Which sandbox processes outlive their run: the red team's after-check and its tests share it."""

from __future__ import annotations

import os

SANDBOX_UID_BASE = 61000


def _pids_cgroup(pid: str) -> str | None:
    for line in open(f"/proc/{pid}/cgroup").read().splitlines():
        _, ctrls, path = line.split(":", 2)
        if "pids" in ctrls.split(","):
            return path
    return None


def stray_sandbox_processes() -> list[tuple[int, str, bytes]]:
    """Live processes of sandbox uids other than the fork-server workers and their bwraps.

    Only this test run's own: every process it starts, escaped or not, stays inside the pids
    cgroup that tests/conftest.py puts the run in (sandboxes nest their groups there), while a
    sandbox of another job on the same machine (a second test run, a benchmark) is outside it.
    Without that guard (not root), every sandbox uid on the machine counts.
    """
    own = _pids_cgroup("self") or "/"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = open(f"/proc/{name}/status").read()
            cmd = open(f"/proc/{name}/cmdline", "rb").read()
            group = _pids_cgroup(name)
        except OSError:
            continue
        if own != "/" and not (group or "/").startswith(own.rstrip("/") + "/") and group != own:
            continue  # another job's sandbox
        uid = int(status.split("Uid:")[1].split()[0])
        state = status.split("State:")[1].split()[0]
        if uid < SANDBOX_UID_BASE or state == "Z":
            continue
        if cmd.startswith(b"bwrap") or b"\x00-I\x00-c\x00" in cmd:
            continue  # a worker's bwrap or its fork server, which live between runs
        found.append((int(name), state, cmd[:80]))
    return found
