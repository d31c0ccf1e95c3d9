"""Helpers for the service tests that start `referee serve` or kill its sandbox workers."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ServeProcess", "children", "fork_server_of", "serve_process"]


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (read from /proc; processes that exit meanwhile are
    skipped)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses; split after the last ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def fork_server_of(bwrap_pid: int) -> int:
    """The fork server inside the sandbox whose outer bubblewrap process is ``bwrap_pid``
    (bwrap -> bwrap's init -> the server)."""
    (init,) = children(bwrap_pid)
    (server,) = children(init)
    return server


class ServeProcess:
    def __init__(self, proc: subprocess.Popen[str], url: str, lines: queue.Queue[str]) -> None:
        self.proc = proc
        self.url = url
        self._lines = lines
        self.stderr: list[str] = []

    def drain_stderr(self) -> str:
        while True:
            try:
                self.stderr.append(self._lines.get_nowait())
            except queue.Empty:
                return "".join(self.stderr)


@contextmanager
def serve_process(args: Sequence[str], *, start_timeout_s: float = 30.0) -> Iterator[ServeProcess]:
    """`referee serve ARGS --port 0` in a subprocess; yields it once it listens (its URL read
    from the announcement on stderr). The process is killed at the end if it still runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", *args, "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "400"},
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        seen: list[str] = []
        deadline = time.monotonic() + start_timeout_s
        url = None
        while url is None:
            try:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"referee serve did not start: {''.join(seen)}") from None
            seen.append(line)
            m = re.search(r"http://127\.0\.0\.1:\d+", line)
            url = m.group(0) if m else None
        sp = ServeProcess(proc, url, lines)
        sp.stderr.extend(seen)
        yield sp
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
