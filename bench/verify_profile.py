"""Where one `referee verify` sample's time goes: host side, per step, and the sandbox's share.

    .venv/bin/python bench/verify_profile.py [--n 164] [--rounds 3] [--cprofile]

In one process, one worker, one sample at a time (so that no step waits on another sample), the
164 canonical HumanEval solutions go through ``VerifierSet.verify`` as the CLI's do, with the
steps of the path timed by wrappers: wall (``perf_counter``) and this thread's CPU
(``thread_time``). The sandbox side comes from each run's result: ``wall_s`` (fork to reap, as the
server measures it) and ``cpu_s`` (the worker cgroup's CPU for the run: the check itself, its
fork and exit). Steps nest (the round trip contains the cgroup reads); the table says which.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save

_acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
_local = threading.local()


def wrap(owner: Any, attr: str, label: str) -> None:
    fn = getattr(owner, attr)

    def timed(*a: Any, **k: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            s = _acc[label]
            s[0] += time.perf_counter() - t
            s[1] += time.thread_time() - c
            s[2] += 1

    setattr(owner, attr, timed)


def instrument() -> None:
    from referee.sandbox import cgroups, forkserver, workspace
    from referee.sandbox import core as sbcore
    from referee.verify import dispatch, function, verdict

    wrap(dispatch.VerifierSet, "verify", "0 VerifierSet.verify (all of a sample, host side)")
    wrap(function, "scan", "1 guard scan (ast)")
    wrap(function, "_spec", "1 task spec")
    wrap(function, "_check_program", "2 program assembly")
    wrap(sbcore.Sandbox, "run_python", "3 Sandbox.run_python (round trip)")
    wrap(forkserver.ForkWorker, "_set_limits", "3a  cgroup limits + peak reset + cpu mark")
    wrap(forkserver.ForkWorker, "_exchange", "3b  request, wait, reply, output")
    wrap(forkserver, "to_result", "3c  result object")
    wrap(workspace.Workspace, "clear", "3d  workspace clear")
    for cls in (getattr(cgroups, n) for n in dir(cgroups)):
        if isinstance(cls, type) and "stats" in vars(cls):
            wrap(cls, "stats", "3e  cgroup stats read")
    wrap(function.FunctionVerifier, "_judge", "4 comparison (judge)")
    wrap(function.H, "frames", "4a  frames parse")
    wrap(verdict.Verdict, "model_copy", "5 verdict copy (metering)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=164)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", default="/tmp/referee-verify-margin/he.jsonl")
    ap.add_argument("--samples", default="/tmp/referee-verify-margin/gold.jsonl")
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--name", default="verify_profile")
    args = ap.parse_args()

    t0 = time.perf_counter()
    from referee.tasks.model import read_tasks
    from referee.verify.dispatch import VerifierSet
    from referee.verify.function import harness_sandbox
    from referee.verify.pytest_verifier import PYTEST_PACKAGES
    from referee.verify.samples import read_samples

    t_import = time.perf_counter() - t0
    instrument()
    t = time.perf_counter()
    tasks = read_tasks(args.tasks)
    t_tasks = time.perf_counter() - t
    t = time.perf_counter()
    pairs = read_samples(Path(args.samples), tasks, tasks_name=args.tasks)[: args.n]
    t_samples = time.perf_counter() - t
    t = time.perf_counter()
    sandbox = harness_sandbox(python_workers=1, python_packages=PYTEST_PACKAGES)
    t_sandbox = time.perf_counter() - t
    # The CLI's sandbox (two workers): until its first worker takes runs, and its first verdict.
    with harness_sandbox(python_workers=2, python_packages=PYTEST_PACKAGES) as sb2:
        t = time.perf_counter()
        sb2.pool  # noqa: B018 - starts the workers
        t_pool = time.perf_counter() - t
        with VerifierSet(sb2) as vs2:
            t = time.perf_counter()
            vs2.verify(*pairs[0])
            t_first = time.perf_counter() - t
    rounds = []
    prof = cProfile.Profile() if args.cprofile else None
    with sandbox, VerifierSet(sandbox) as vs:
        for task, ans in pairs[:5]:
            vs.verify(task, ans)  # warm
        for _ in range(args.rounds):
            _acc.clear()
            run_wall = run_cpu = out_s = 0.0
            t = time.perf_counter()
            c = time.thread_time()
            if prof:
                prof.enable()
            for task, ans in pairs:
                v = vs.verify(task, ans)
                o = time.perf_counter()
                json.dumps(v.model_dump(mode="json"))
                out_s += time.perf_counter() - o
                run_wall += v.timings.get("run_s", 0.0)
                run_cpu += v.sandbox.cpu_s if v.sandbox else 0.0
            if prof:
                prof.disable()
            wall = time.perf_counter() - t
            cpu = time.thread_time() - c
            n = len(pairs)
            steps = {k: [s[0] / n * 1e3, s[1] / n * 1e3, s[2] / n] for k, s in sorted(_acc.items())}
            steps["6 output (model_dump + json)"] = [out_s / n * 1e3, out_s / n * 1e3, 1]
            rounds.append(
                {
                    "per_sample_wall_ms": wall / n * 1e3,
                    "per_sample_host_cpu_ms": cpu / n * 1e3,
                    "per_sample_sandbox_fork_to_reap_ms": run_wall / n * 1e3,
                    "per_sample_sandbox_cpu_ms": run_cpu / n * 1e3,
                    "steps_ms_wall_cpu_calls": steps,
                }
            )
            print(json.dumps(rounds[-1]), flush=True)
    med = {
        k: statistics.median(r[k] for r in rounds)
        for k in rounds[0]
        if k != "steps_ms_wall_cpu_calls"
    }
    step_med = {
        k: [statistics.median(r["steps_ms_wall_cpu_calls"][k][i] for r in rounds) for i in (0, 1)]
        for k in rounds[0]["steps_ms_wall_cpu_calls"]
    }
    result = {
        "machine": machine(),
        "command": "python bench/verify_profile.py " + " ".join(sys.argv[1:]),
        "startup_s": {
            "imports": t_import,
            "read_tasks": t_tasks,
            "read_samples": t_samples,
            "sandbox_object": t_sandbox,
            "pool_first_worker_ready": t_pool,
            "first_verdict_after_ready": t_first,
        },
        "median": med,
        "steps_median_ms_wall_cpu": step_med,
        "rounds": rounds,
    }
    save(args.name, result)
    print(json.dumps(result["startup_s"]))
    print("| step | wall ms/sample | host CPU ms/sample |\n|---|---|---|")
    for k, (w, c) in step_med.items():
        print(f"| {k} | {w:.3f} | {c:.3f} |")
    for k, v in med.items():
        print(f"{k}: {v:.3f}")
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
        print(s.getvalue())


if __name__ == "__main__":
    main()
