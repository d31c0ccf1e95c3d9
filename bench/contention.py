"""Verdicts under deliberate contention: gold answers judged with every core busy.

    PYTHONPATH=src python bench/contention.py [--per-family 2] [--out bench/results/contention.json]

For each condition (quiet; busy loops at 2x and 4x the cores; 4x the cores plus a memory hog)
it judges, with one :class:`~referee.verify.dispatch.VerifierSet`:

* **gold**: the sum task's reference in every language this machine has a toolchain for, two
  "heavy" right answers (a C++ program and a Python function that spin 0.3 s on their own CPU
  clock against a 0.6 s limit: the load-sensitive case), and the references of ``--per-family``
  generated tasks of one family per domain (function, SQL, dataframe, numeric, shell, Verilog);
* **wrong**: an infinite loop (C++, Python, a function), an answer off by one, and the empty
  answer of each generated task.

A gold judged failed is a false negative (split into failed tests and infra errors: an infra
error is retried or dropped by a trainer, never trained on as 0); a wrong answer judged passed
is a false positive. The busy loops are ``while True: pass`` processes, each in a session of its
own (with autogroup scheduling, the kernel shares CPU between sessions first) and at the
bench's own priority (niceness inherited: no extra nice); the memory hog touches 25% of the
machine's memory page by page, over and over.

The code under test is whatever ``referee`` the path gives: point ``PYTHONPATH`` at another
checkout to measure it (the bench uses no API newer than ``VerifierSet``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from referee.domains.registry import discover_domains, generate_family
from referee.sandbox.toolchains import available_toolchains
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSet
from referee.verify.program.redteam import GOLD, SUM_TASK
from referee.verify.samples import gold_samples

FAMILIES = ("list-ops", "sql-filter", "df-clean", "num-root", "ops-permissions", "v-counter")
HOG = "while True: pass"
MEMORY_HOG = (
    "import mmap, sys\nn = int(sys.argv[1])\nm = mmap.mmap(-1, n)\n"
    "while True:\n    for i in range(0, n, 4096):\n        m[i] = (m[i] + 1) % 256\n"
)


def _program_task(name: str, cases: list[dict[str, str]], **payload: Any) -> Task:
    return Task.create(
        name=f"bench/contention-{name}-v1",
        prompt=name,
        kind="program",
        answer_format="code",
        payload={"io": "stdin", "examples": [], **payload},
        hidden={"cases": cases, "compare": "tokens"},
    )


HEAVY = _program_task(
    "heavy",
    [{"input": "2 3\n", "output": "5\n"}, {"input": "-1 1\n", "output": "0\n"}],
    time_limit_s=0.6,
)
HEAVY_CPP = (
    "```cpp\n#include <cstdio>\n#include <ctime>\nint main(){long a,b;"
    'if(scanf("%ld %ld",&a,&b)!=2)return 1;while(clock()<0.3*CLOCKS_PER_SEC){}'
    'printf("%ld\\n",a+b);}\n```\n'
)
HEAVY_FN = _program_task(
    "heavy-fn",
    [{"input": "[2, 3]", "output": "5"}, {"input": "[-1, 1]", "output": "0"}],
    io="function",
    fn_name="add",
    languages=["python"],
    time_limit_s=0.6,
)
HEAVY_PY = (
    "```python\nimport time\n\ndef add(a, b):\n    t = time.process_time()\n"
    "    while time.process_time() - t < 0.3:\n        pass\n    return a + b\n```\n"
)
LOOP_FN = "```python\ndef add(a, b):\n    while True:\n        pass\n```\n"


def corpus(per_family: int) -> tuple[list[tuple[str, Task, str]], list[tuple[str, Task, str]]]:
    """(label, task, answer) of the gold answers and of the wrong ones."""
    gold: list[tuple[str, Task, str]] = []
    wrong: list[tuple[str, Task, str]] = []
    for lang in available_toolchains():
        if lang in GOLD:
            gold.append((f"program-{lang}", SUM_TASK, f"```{lang}\n{GOLD[lang]}```\n"))
    gold.append(("program-heavy-cpp", HEAVY, HEAVY_CPP))
    gold.append(("program-heavy-fn", HEAVY_FN, HEAVY_PY))
    wrong.append(("loop-cpp", SUM_TASK, "```cpp\nint main(){for(;;){}}\n```\n"))
    wrong.append(("loop-python", SUM_TASK, "```python\nwhile True:\n    pass\n```\n"))
    wrong.append(("loop-fn", HEAVY_FN, LOOP_FN))
    off = "n = int(input())\nprint(sum(map(int, input().split()[:n])) + 1)\n"
    wrong.append(("off-by-one-python", SUM_TASK, f"```python\n{off}```\n"))
    discover_domains()
    for family in FAMILIES:
        tasks = generate_family(family, count=per_family, seed=0)
        by_id = {t.id: t for t in tasks}
        for s in gold_samples(tasks):
            gold.append((family, by_id[s["task_id"]], s["completion"]))
        wrong += [(f"{family}-empty", t, "") for t in tasks]
    return gold, wrong


@contextmanager
def contention(busy: int, memory_mb: int) -> Iterator[None]:
    procs = [
        subprocess.Popen([sys.executable, "-c", HOG], start_new_session=True) for _ in range(busy)
    ]
    if memory_mb:
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", MEMORY_HOG, str(memory_mb << 20)], start_new_session=True
            )
        )
    try:
        time.sleep(0.5 if procs else 0)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def judge(verifiers: VerifierSet, items: list[tuple[str, Task, str]]) -> list[dict[str, Any]]:
    rows = []
    for label, task, answer in items:
        t0 = time.perf_counter()
        v = verifiers.verify(task, answer)
        rows.append(
            {
                "label": label,
                "task": task.id,
                "passed": v.passed,
                "reward": round(v.reward, 3),
                "infra_error": v.infra_error,
                "statuses": v.counts(),
                "detail": next((t.detail for t in v.tests if t.status != "passed"), "")[:160],
                "s": round(time.perf_counter() - t0, 3),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-family", type=int, default=2)
    ap.add_argument("--conditions", default="quiet,busy2x,busy4x,busy4x+memory")
    ap.add_argument("--out", default="bench/results/contention.json")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    mem_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    setups = {
        "quiet": (0, 0),
        "busy2x": (2 * cores, 0),
        "busy4x": (4 * cores, 0),
        "busy4x+memory": (4 * cores, mem_mb // 4),
    }
    gold, wrong = corpus(args.per_family)
    results: dict[str, Any] = {
        "machine": {"cores": cores, "memory_mb": mem_mb, "python": platform.python_version()},
        "referee": str(Path(sys.modules["referee"].__file__ or "").parent),
        "conditions": {},
    }
    with VerifierSet() as verifiers:
        judge(verifiers, gold[:3])  # warm: sandboxes and workers started before any condition
        for name in args.conditions.split(","):
            busy, memory = setups[name]
            t0 = time.perf_counter()
            with contention(busy, memory):
                load0 = os.getloadavg()[0]
                g = judge(verifiers, gold)
                w = judge(verifiers, wrong)
            fn = [r for r in g if not r["passed"]]
            fp = [r for r in w if r["passed"]]
            summary = {
                "busy_processes": busy,
                "memory_hog_mb": memory,
                "load_at_start": round(load0, 2),
                "gold": len(g),
                "false_negatives": len(fn),
                "false_negatives_failed": sum(r["infra_error"] is None for r in fn),
                "false_negatives_infra": sum(r["infra_error"] is not None for r in fn),
                "wrong": len(w),
                "wrong_passed": len(fp),
                "wrong_infra": sum(r["infra_error"] is not None for r in w),
                "seconds": round(time.perf_counter() - t0, 1),
            }
            results["conditions"][name] = {"summary": summary, "gold": g, "wrong": w}
            print(name, json.dumps(summary), flush=True)
            for r in fn:
                print("  false negative:", r["label"], r["task"], r["detail"], r["infra_error"])
            for r in fp:
                print("  wrong passed:", r["label"], r["task"])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
