"""What a function check's program costs, outside the sandbox: the harness's share of a check.

    PYTHONPATH=src .venv/bin/python bench/harness_profile.py [--tasks T] [--samples S]
        [--rounds 5] [--profile out.prof] [--sandbox]

For every (task, gold completion) the program that ``FunctionVerifier`` would send to its sandbox
is captured (through a stand-in sandbox that runs nothing), then, in this one bare interpreter and
alternating with the task's own test (the floor: prompt + solution + test + ``check()``):

* ``compile``: the program's compile, as the fork server does it before forking;
* ``exec``: the program's run with the harness preloaded as ``referee_harness`` (its frames go to
  /dev/null), as the child does it: load, decode, calls, encode, frames, the repeated call.

CPU seconds for all samples, medians of ``--rounds``; ``--profile`` writes a cProfile of one round
of the programs. ``--sandbox`` instead runs every program through a one-worker harness sandbox
(the real fork server) and reports, per check, the worker cgroup's CPU (server + child: the
fork, the child's set-up, the program, exit, reap, sweep) next to an empty program's (``pass``)
in the same rounds, alternating.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import statistics
import sys
import time
import types
from typing import Any

from referee.errors import SandboxError
from referee.tasks.model import Task
from referee.verify import function as F


class _Capture:
    """A sandbox stand-in: keeps the program it is asked to run, runs nothing."""

    python_workers = 1

    def __init__(self) -> None:
        self.preload = {F.HARNESS_MODULE: F.HARNESS_SOURCE}
        self.program = ""

    def run_python(self, program: str, **_: Any) -> None:
        self.program = program
        raise SandboxError("captured")

    def close(self) -> None:
        pass


def programs(tasks_file: str, samples_file: str) -> list[tuple[str, str, str]]:
    tasks = {}
    for line in open(tasks_file):
        t = Task.model_validate_json(line)
        tasks[t.id] = t
    cap = _Capture()
    v = F.FunctionVerifier(sandbox=cap)  # type: ignore[arg-type]
    out = []
    for line in open(samples_file):
        s = json.loads(line)
        t = tasks[s["task_id"]]
        v.verify(t, s["completion"], seed=len(out))
        p = t.payload
        floor = (
            p["code_prompt"] + s["completion"] + "\n" + t.hidden["test"] + "\n"
            f"check({p['entry_point']})\n"
        )
        out.append((t.id, cap.program, floor))
    return out


def _preload() -> None:
    module = types.ModuleType(F.HARNESS_MODULE)
    exec(compile(F.HARNESS_SOURCE, "<preloaded>", "exec"), module.__dict__)
    sys.modules[F.HARNESS_MODULE] = module


def one_round(progs: list[tuple[str, str, str]]) -> dict[str, float]:
    c0 = time.process_time()
    codes = [compile(p, "/workspace/check.py", "exec") for _, p, _ in progs]
    c1 = time.process_time()
    for code in codes:
        exec(code, {"__name__": "__main__"})
    c2 = time.process_time()
    floors = [compile(f, "check.py", "exec") for _, _, f in progs]
    c3 = time.process_time()
    for code in floors:
        exec(code, {"__name__": "__main__"})
    c4 = time.process_time()
    return {
        "program_compile_s": c1 - c0,
        "program_exec_s": c2 - c1,
        "floor_compile_s": c3 - c2,
        "floor_exec_s": c4 - c3,
    }


def sandbox_rounds(progs: list[tuple[str, str, str]], rounds: int) -> dict[str, float]:
    """Per check: the worker cgroup's CPU for the real programs and for ``pass``, in ms."""
    checks: list[float] = []
    empty: list[float] = []
    wall: list[float] = []
    with F.harness_sandbox(python_workers=1) as sb:
        for _ in range(20):
            sb.run_python("pass")
        for _ in range(rounds):
            c = e = w = 0.0
            for _, program, _ in progs:
                r = sb.run_python(program, name="check.py")
                assert r.exit_code == 0, r
                c += r.cpu_s
                w += r.wall_s
                e += sb.run_python("pass").cpu_s
            checks.append(c / len(progs) * 1e3)
            empty.append(e / len(progs) * 1e3)
            wall.append(w / len(progs) * 1e3)
    return {
        "check_cgroup_cpu_ms": statistics.median(checks),
        "empty_cgroup_cpu_ms": statistics.median(empty),
        "check_fork_to_reap_ms": statistics.median(wall),
        "rounds_check_ms": checks,  # type: ignore[dict-item]
        "rounds_empty_ms": empty,  # type: ignore[dict-item]
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="/tmp/referee-verify-margin/he.jsonl")
    ap.add_argument("--samples", default="/tmp/referee-verify-margin/gold.jsonl")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", default="")
    ap.add_argument("--sandbox", action="store_true")
    args = ap.parse_args()
    progs = programs(args.tasks, args.samples)
    if args.sandbox:
        print(json.dumps(sandbox_rounds(progs, args.rounds), indent=1))
        return
    _preload()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    stdout, stderr = sys.stdout, sys.stderr
    os.dup2(devnull, 1)
    try:
        rounds = [one_round(progs) for _ in range(args.rounds)]
        if args.profile:
            codes = [compile(p, "/workspace/check.py", "exec") for _, p, _ in progs]
            prof = cProfile.Profile()
            prof.enable()
            for code in codes:
                exec(code, {"__name__": "__main__"})
            prof.disable()
            prof.dump_stats(args.profile)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        os.dup2(saved, 1)
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    med["n"] = len(progs)
    print(json.dumps(med, indent=1))


if __name__ == "__main__":
    main()
