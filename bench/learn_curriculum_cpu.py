"""Sample a process's CPU seconds (its own and its waited-for children's) every 10 s until it
ends: `python bench/learn_curriculum_cpu.py PID > FILE.tsv` (epoch, user+system seconds).

Wall time on a shared machine measures the neighbours; CPU seconds measure the work."""

from __future__ import annotations

import os
import sys
import time


def cpu_seconds(pid: int) -> float:
    # /proc/PID/stat fields 14-17: utime, stime, cutime, cstime in clock ticks; the command
    # name (field 2) may hold spaces, so split after its closing parenthesis.
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def main() -> None:
    pid = int(sys.argv[1])
    while True:
        try:
            cpu = cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            return
        print(f"{time.time():.0f}\t{cpu:.2f}", flush=True)
        time.sleep(10)


if __name__ == "__main__":
    main()
