"""Page faults and CPU per run of a fork server, split between the server and its children.

    PYTHONPATH=src .venv/bin/python bench/forkserver_faults.py [--tasks T] [--samples S]
        [--rounds 3]

One harness sandbox with one worker; from the host's ``/proc`` of that worker's fork server, over
``--rounds`` passes of (a) the empty program ``pass`` and (b) the function-check programs of the
164 (task, gold completion) pairs (as ``bench/harness_profile.py`` captures them): the server's
own minor faults and CPU per run (``minflt``, ``utime + stime``) and its reaped children's
(``cminflt``, ``cutime + cstime``). CPU is in clock ticks (10 ms), so only many runs resolve
it; the fault counts are exact and do not depend on the machine's load, which makes them the
steady measure of "pages a run writes" (a fork write-protects every page of the server: each
page the server or the child then writes costs one fault, a copy while both share it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness_profile import programs
from referee.verify import function as F


def _children(pid: int) -> list[int]:
    return [
        int(c)
        for t in os.listdir(f"/proc/{pid}/task")
        for c in open(f"/proc/{pid}/task/{t}/children").read().split()
    ]


def server_pid() -> int:
    """This process's one sandbox: bwrap, its init, then the fork server."""
    (outer,) = _children(os.getpid())
    (init,) = _children(outer)
    (server,) = _children(init)
    return server


def counters(pid: int) -> tuple[int, int, int, int]:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    # after the command: state, ppid, ..., minflt (7), cminflt (8), utime..cstime (11-14)
    return int(f[7]), int(f[8]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="/tmp/referee-verify-margin/he.jsonl")
    ap.add_argument("--samples", default="/tmp/referee-verify-margin/gold.jsonl")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    checks = [p for _, p, _ in programs(args.tasks, args.samples)]
    tick_ms = 1e3 / os.sysconf("SC_CLK_TCK")
    out = {}
    with F.harness_sandbox(python_workers=1) as sb:
        for _ in range(20):
            sb.run_python("pass")
        pid = server_pid()
        for label, progs in (("empty", ["pass"] * len(checks)), ("checks", checks)):
            a = counters(pid)
            for _ in range(args.rounds):
                for p in progs:
                    sb.run_python(p, name="check.py")
            b = counters(pid)
            n = args.rounds * len(progs)
            out[label] = {
                "server_faults_per_run": (b[0] - a[0]) / n,
                "child_faults_per_run": (b[1] - a[1]) / n,
                "server_cpu_ms_per_run": (b[2] - a[2]) * tick_ms / n,
                "child_cpu_ms_per_run": (b[3] - a[3]) * tick_ms / n,
            }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
