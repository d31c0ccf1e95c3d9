"""Shared helpers for the service benchmarks: the recorded HumanEval tasks, a `referee serve`
subprocess, and the memory of a process tree."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def humaneval_file(workers: int = 2) -> tuple[Path, list[Any], list[dict[str, str]]]:
    """All 164 HumanEval tasks recorded (in the sandbox) into a temporary task file, the
    tasks, and their canonical solutions as samples."""
    from referee.tasks.humaneval import humaneval_tasks
    from referee.tasks.model import write_tasks
    from referee.verify.function import harness_sandbox
    from referee.verify.record import record_function_tasks
    from referee.verify.samples import gold_samples

    with harness_sandbox(python_workers=workers) as sb:
        tasks = record_function_tasks(sb, humaneval_tasks())
    # One file, replaced whole by each run (runs side by side write the same tasks).
    path = Path(tempfile.gettempdir()) / "referee-bench-he164.jsonl"
    part = path.with_name(f"{path.name}.{os.getpid()}")
    write_tasks(part, tasks)
    os.replace(part, path)
    return path, tasks, list(gold_samples(tasks))


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc = proc
        self.url = url
        self.pid = proc.pid


@contextmanager
def serve(
    args: Sequence[str], *, timeout_s: float = 60.0, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """`referee serve ARGS --no-auth --port 0` in a subprocess (its own interpreter, so client
    and server share no GIL), ``env`` added to its environment; yields it once it listens.
    SIGTERM (drain) at the end, SIGKILL if it has not exited 30 s later."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", *args, "--no-auth", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "400", **(env or {})},
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
            if os.environ.get("BENCH_SERVER_LOG"):
                sys.stderr.write("[server] " + line)

    threading.Thread(target=read, daemon=True).start()
    try:
        end = time.monotonic() + timeout_s
        url = None
        seen = []
        while url is None:
            try:
                line = lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                raise RuntimeError("referee serve did not start: " + "".join(seen)) from None
            seen.append(line)
            m = re.search(r"http://127\.0\.0\.1:\d+", line)
            url = m.group(0) if m else None
        yield Served(proc, url)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from /proc)."""
    parent_of: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent_of[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out: list[int] = []
    frontier = [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent_of.items() if pp == p]
        out.extend(kids)
        frontier.extend(kids)
    return out


def rss_mb(pid: int) -> float:
    """Resident memory of one process (VmRSS), MB; 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def anon_mb(pid: int) -> float:
    """Anonymous resident memory of one process (RssAnon: its heaps), MB; 0 if it is gone.
    VmRSS also counts its libraries' file pages, which the kernel drops and reloads under
    memory pressure: on a shared machine that moves it by megabytes either way."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def pss_mb(pid: int) -> float:
    """Proportional set size of one process, MB (shared pages split among their users)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def memory(pid: int) -> dict[str, float]:
    """The server's own RSS and open files, and its whole tree's PSS (sandbox workers
    included), MB."""
    tree = [pid, *descendants(pid)]
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = 0
    return {
        "server_rss_mb": round(rss_mb(pid), 1),
        "server_fds": fds,
        "tree_pss_mb": round(sum(pss_mb(p) for p in tree), 1),
        "processes": len(tree),
    }


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and every live process below it, each with the children it has
    reaped (the fork servers reap their runs), so the sandboxed programs count too."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick
