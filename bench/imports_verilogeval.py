"""VerilogEval imported (``referee tasks import verilogeval``): what is refused and why, gold and
empty answers, and agreement with VerilogEval's own judge on the references and on mutants.

    PYTHONPATH=src .venv/bin/python bench/imports_verilogeval.py [--mutants 4] [--workers 3]
        [--limit N] [--out bench/results/imports/verilogeval.json]

Every problem of both sets (human, machine) of the installed ``nvidia-bigcode-eval`` is
imported as the source does it (a refused one is reported with its reason). Candidates per
problem: the reference, the empty module (the header, nothing inside), and up to ``--mutants``
mutants of the canonical body (one operator at one site, sites drawn with a seed per problem:
a binary operator swapped, a comparison changed, a constant's last digit changed, a bit index
moved, a ``~`` dropped, an ``if`` condition negated, ``posedge`` made ``negedge``).

Each candidate is judged twice:

* **referee**: :class:`~referee.domains.verilog.verifier.VerilogVerifier` on the imported task;
* **VerilogEval**: the benchmark's own test, as ``bigcode_eval``'s ``check_correctness`` builds
  and reads it (the problem's ``test`` then the candidate module in one file; ``iverilog -Wall
  -Winfloop -Wno-timescale -g2012 -s tb -o test.vvp F.sv; vvp -n test.vvp``; failed on
  ``syntax error`` or any stderr, passed on ``Mismatches: 0 in N samples``, else failed; 30 s),
  run **in referee's sandbox** (the candidate is model-shaped code). The shipped
  ``check_correctness`` itself (which runs iverilog on the host) is run only on the references,
  trusted code, to show that the sandboxed replica reads them the same (``--no-host-check``
  skips it).

A third verdict is referee's with formal equivalence on (``bmc:20``: a SAT proof for a
combinational design, bounded model checking to 20 cycles for a sequential one), which runs
only where simulation passed: what the proof catches that simulation let through, and what
it costs.

Reported: imported/refused, gold pass, empty fail, and agreement on references and mutants,
with each disagreement (task, operator, both verdicts, referee's failing test and VerilogEval's
result string), with and without the proof. ``--forge`` only judges a module with no logic
that prints ``Mismatches: 0 in 1 samples`` itself.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from referee.domains.verilog.imports import check_row
from referee.domains.verilog.simulate import verilog_sandbox
from referee.domains.verilog.verifier import VerilogVerifier
from referee.domains.verilog.verilogeval import BENCHMARK, SUBSETS, row_task, verilogeval_rows
from referee.sandbox import Sandbox
from referee.sandbox.cputime import cpu_limits
from referee.tasks.imports.rows import Row, RowError
from referee.tasks.model import Task

OUT = Path(__file__).parent / "results" / "imports" / "verilogeval.json"
#: bigcode_eval/tasks/custom_metrics/verilog_execute.py: the command and its time limit.
VE_COMMAND = (
    "iverilog -Wall -Winfloop -Wno-timescale -g2012 -s tb -o test.vvp {f}.sv; vvp -n test.vvp"
)
VE_TIMEOUT_S = 30.0
#: referee's formal setting for the second verdict: bounded model checking to 20 cycles (a SAT
#: proof for a combinational design), run where simulation passed.
FORMAL = "bmc:20"
_MISMATCHES = re.compile(r"Mismatches: ([0-9]*) in ([0-9]*) samples")

#: (operator, pattern, replacement) over the canonical body; one mutant per (operator, site).
OPERATORS: list[tuple[str, str, Any]] = [
    ("binary-op", r"(?<=[\w\)\]\}] )&(?= [\w\(\{~!])", "|"),
    ("binary-op", r"(?<=[\w\)\]\}] )\|(?= [\w\(\{~!])", "&"),
    ("binary-op", r"(?<=[\w\)\]\}] )\^(?= [\w\(\{~!])", "|"),
    ("binary-op", r"&&", "||"),
    ("binary-op", r"\|\|", "&&"),
    ("arith-op", r"(?<=[\w\)\]] )\+(?= [\w\(])", "-"),
    ("arith-op", r"(?<=[\w\)\]] )-(?= [\w\(])", "+"),
    ("compare", r"==", "!="),
    ("compare", r"!=", "=="),
    ("compare", r"(?<=[\w\)\]] )<(?= [\w\(])", "<="),
    ("compare", r"(?<=[\w\)\]] )>(?= [\w\(])", ">="),
    ("constant", r"(\d+'[bB])([01_]*)([01])\b",
     lambda m: f"{m.group(1)}{m.group(2)}{'1' if m.group(3) == '0' else '0'}"),
    ("constant", r"(\d+'[dD])(\d+)\b", lambda m: f"{m.group(1)}{int(m.group(2)) + 1}"),
    ("constant", r"(\d+'[hH])([0-9a-fA-F_]*)([0-9a-fA-F])\b",
     lambda m: f"{m.group(1)}{m.group(2)}{format(int(m.group(3), 16) ^ 1, 'x')}"),
    ("bit-index", r"(?<=[A-Za-z_]\[)(\d+)(?=\])", lambda m: str(int(m.group(1)) ^ 1)),
    ("drop-not", r"~(?=[A-Za-z_(])", ""),
    ("negate-if", r"\bif\s*\((.*?)\)(?=\s*(?:begin|[A-Za-z_]))", lambda m: f"if (!({m.group(1)}))"),
    ("clock-edge", r"posedge clk", "negedge clk"),
]  # fmt: skip


def mutants(body: str, seed: str, count: int) -> list[tuple[str, str, str]]:
    """Up to ``count`` (operator, mutated body, what changed), sites drawn with ``seed``; each
    operator is tried before any is used twice."""
    sites: list[tuple[str, str, str]] = []
    seen = {body}
    for op, pattern, repl in OPERATORS:
        for m in re.finditer(pattern, body):
            new = m.expand(repl) if isinstance(repl, str) else repl(m)
            source = body[: m.start()] + new + body[m.end() :]
            if source not in seen:
                seen.add(source)
                sites.append((op, source, f"`{m.group(0).strip()}` -> `{new.strip()}`"))
    rng = random.Random(seed)
    rng.shuffle(sites)
    chosen: list[tuple[str, str, str]] = []
    used: Counter[str] = Counter()
    for round_ in range(count):
        for site in sites:
            if len(chosen) == count:
                break
            if used[site[0]] == round_ and site not in chosen:
                chosen.append(site)
                used[site[0]] += 1
    return chosen


def ve_judge(sandbox: Sandbox, test: str, module: str, name: str) -> str:
    """VerilogEval's result string for ``module`` (check_correctness's rules), in the sandbox."""
    limits = cpu_limits(
        VE_TIMEOUT_S, memory_mb=1024, max_processes=8, stdout_bytes=1 << 20, stderr_bytes=1 << 16
    )
    r = sandbox.run(
        ["sh", "-c", VE_COMMAND.format(f=name)],
        files={f"{name}.sv": f"{test}\n{module}"},
        limits=limits,
    )
    if r.timed_out or "cpu-limit" in r.violations:
        return "timed out"
    out, err = r.stdout, r.stderr
    match = _MISMATCHES.search(out)
    if "syntax error" in err:
        return "failed: syntax error."
    if len(err) > 0:
        return "failed: compile error."
    if match:
        cor, tot = (int(i) for i in match.groups())
        return "passed" if cor == 0 else f"failed: {cor} out of {tot} samples."
    return "failed: info string not matched."


def forge() -> None:
    """A module with no logic that prints the line VerilogEval's judge reads, on ``gatesv``:
    both judges' verdicts (VerilogEval's replica in the sandbox)."""
    row = next(r for r in verilogeval_rows("human") if r.data["task_id"] == "gatesv")
    header = str(row.data["prompt"]).rstrip()
    forged = f'{header}\n  initial $display("Mismatches: 0 in 1 samples");\nendmodule\n'
    with verilog_sandbox() as box, VerilogVerifier() as verifier:
        ve = ve_judge(box, row.data["test"], forged, "gatesv")
        ours = verifier.verify(row_task(row, "human"), f"```verilog\n{forged}```")
    print(json.dumps({"verilogeval": ve, "referee": ours.passed, "referee_flags":
                      [f.kind for f in ours.flags]}))  # fmt: skip


def reprove(path: Path, workers: int) -> None:
    """The proof's verdicts again (after a change to it) on the candidates of an earlier run
    that simulation passed, rebuilt from their problem, operator and change (the mutants are
    drawn with a seed per problem); the summary is made again and the file rewritten."""
    data = json.loads(path.read_text())
    records = data["candidates"]
    count = int(data["summary"]["mutants_per_task"])  # the same draw as the run's
    rows = {f"{s}/{r.data['task_id']}": (s, r) for s in SUBSETS for r in verilogeval_rows(s)}
    prover = VerilogVerifier(formal=FORMAL)

    def one(rec: dict[str, Any]) -> None:
        subset, row = rows[rec["task"]]
        task = row_task(row, subset)
        header = str(row.data["prompt"]).rstrip()
        if rec["candidate"] == "reference":
            module = task.hidden["reference"]
        else:
            body = str(row.data["canonical_solution"])
            module = next(f"{header}\n{m}" for op, m, what in mutants(body, rec["task"], count)
                          if op == rec["candidate"] and what == rec["change"])  # fmt: skip
        t0 = time.perf_counter()
        f = prover.verify(task, f"```verilog\n{module}\n```")
        proof = next((t for t in f.tests if t.name == "formal"), None)
        rec.update(referee_formal=f.passed, formal=proof.status if proof else None,
                   formal_detail=proof.detail[:200] if proof else "",
                   formal_s=round(time.perf_counter() - t0, 3))  # fmt: skip

    try:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, [r for r in records if r["referee"]]))
    finally:
        prover.close()
    old = data["summary"]
    report = summarize(records, old["refused"], old["host_check"].get("runs", []))
    report["host_check"] = old["host_check"]
    report.update(machine=old["machine"], seconds=old["seconds"], version=old["version"],
                  mutants_per_task=old["mutants_per_task"], reproved=machine()["date"])  # fmt: skip
    path.write_text(json.dumps({"summary": report, "candidates": records}, indent=1) + "\n")
    keys = ("table", "agreement", "agreement_formal", "formal_runs", "formal_s_median")
    print(json.dumps({k: report[k] for k in keys}, indent=1))


def host_judge() -> Any:
    """The shipped check_correctness, loaded from its file alone (bigcode_eval's package
    __init__ imports transformers; this module imports the standard library only)."""
    path = BENCHMARK.file("bigcode_eval/tasks/custom_metrics/verilog_execute.py")
    spec = importlib.util.spec_from_file_location("verilogeval_execute", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.check_correctness


def _failing(verdict: Any) -> str:
    bad = [t for t in verdict.tests if t.status != "passed"]
    return (verdict.infra_error or (f"{bad[0].name}: {bad[0].detail}" if bad else ""))[:240]


def problems(limit: int | None) -> Iterator[tuple[str, Row]]:
    n = 0
    for subset in SUBSETS:
        for row in verilogeval_rows(subset):
            if limit is not None and n >= limit:
                return
            n += 1
            yield subset, row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mutants", type=int, default=4)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="the first N problems only")
    ap.add_argument("--no-host-check", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--forge", action="store_true", help="only the forged-line check (below)")
    ap.add_argument(
        "--reprove", action="store_true", help="only the proof again, on --out's simulated passes"
    )
    args = ap.parse_args()
    if args.forge:
        forge()
        return
    if args.reprove:
        reprove(args.out, args.workers)
        return
    t_start = time.time()
    verifier = VerilogVerifier()
    prover = VerilogVerifier(formal=FORMAL)
    ve_box = verilog_sandbox()
    lock = threading.Lock()
    refused: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    host: list[dict[str, Any]] = []
    check_host = None if args.no_host_check else host_judge()

    def one(item: tuple[str, Row]) -> None:
        subset, row = item
        rid = str(row.data["task_id"])
        try:
            task: Task = row_task(row, subset)
            check_row(verifier, row, task)
        except RowError as e:
            ve_gold = ve_judge(ve_box, row.data["test"], task_reference(row), rid)
            with lock:
                refused.append({"task": f"{subset}/{rid}", "reason": str(e).split(": ", 1)[-1],
                                "verilogeval_on_reference": ve_gold})  # fmt: skip
            return
        body = str(row.data["canonical_solution"])
        header = str(row.data["prompt"]).rstrip()
        cands = [("reference", task.hidden["reference"], ""), ("empty", f"{header}\nendmodule", "")]
        for op, mutated, what in mutants(body, f"{subset}/{rid}", args.mutants):
            cands.append((op, f"{header}\n{mutated}", what))
        out = []
        for kind, module, what in cands:
            answer = f"```verilog\n{module}\n```"
            v = verifier.verify(task, answer)
            # The proof runs only where simulation passed (as the verifier does with it on).
            t0 = time.perf_counter()
            f = prover.verify(task, answer) if v.passed else None
            proof = next((t for t in f.tests if t.name == "formal"), None) if f else None
            ve = ve_judge(ve_box, row.data["test"], module, rid)
            out.append({
                "task": f"{subset}/{rid}", "candidate": kind, "change": what,
                "referee": v.passed, "referee_infra": bool(v.infra_error),
                "referee_detail": "" if v.passed else _failing(v),
                "referee_formal": bool(f and f.passed),
                "formal": proof.status if proof else None,
                "formal_detail": proof.detail[:200] if proof else "",
                "formal_s": round(time.perf_counter() - t0, 3) if f else None,
                "verilogeval": ve == "passed", "verilogeval_result": ve,
            })  # fmt: skip
        if check_host is not None:
            shipped = check_host(f"{row.data['test']}\n{task.hidden['reference']}", VE_TIMEOUT_S,
                                 rid, 0)  # fmt: skip
            with lock:
                host.append({"task": f"{subset}/{rid}", "shipped": shipped["result"],
                             "sandboxed": out[0]["verilogeval_result"]})  # fmt: skip
        with lock:
            records.extend(out)
            if len(records) % 50 < len(out):
                print(f"{len(records)} candidates, {len(refused)} refused, "
                      f"{time.time() - t_start:.0f} s", file=sys.stderr, flush=True)  # fmt: skip

    def task_reference(row: Row) -> str:
        return f"{str(row.data['prompt']).rstrip()}\n{row.data['canonical_solution']}"

    try:
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(one, problems(args.limit)))
    finally:
        verifier.close()
        prover.close()
        ve_box.close()
    report = summarize(records, refused, host)
    report.update(machine=machine(), seconds=round(time.time() - t_start, 1),
                  version=BENCHMARK.version(), mutants_per_task=args.mutants)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": report, "candidates": records}, indent=1) + "\n")
    print(json.dumps(report, indent=1))


def summarize(
    records: list[dict[str, Any]], refused: list[dict[str, Any]], host: list[dict[str, Any]]
) -> dict[str, Any]:
    """The table's numbers and every disagreement."""

    def of(kind: str) -> list[dict[str, Any]]:
        if kind == "mutant":
            return [r for r in records if r["candidate"] not in ("reference", "empty")]
        return [r for r in records if r["candidate"] == kind]

    rows = {}
    for kind in ("reference", "empty", "mutant"):
        rs = of(kind)
        rows[kind] = {
            "n": len(rs),
            "referee_pass": sum(r["referee"] for r in rs),
            "referee_formal_pass": sum(r["referee_formal"] for r in rs),
            "verilogeval_pass": sum(r["verilogeval"] for r in rs),
            "agree": sum(r["referee"] == r["verilogeval"] for r in rs),
            "agree_formal": sum(r["referee_formal"] == r["verilogeval"] for r in rs),
        }
    disagreements = [r for r in records if r["referee"] != r["verilogeval"]]
    n = max(1, len(records))
    proved = [r["formal_s"] for r in records if r["formal_s"] is not None]
    return {
        "imported": len(of("reference")),
        "refused": refused,
        "table": rows,
        "agreement": sum(r["referee"] == r["verilogeval"] for r in records) / n,
        "agreement_formal": sum(r["referee_formal"] == r["verilogeval"] for r in records) / n,
        "disagreements": disagreements,
        "disagreements_formal": [r for r in records if r["referee_formal"] != r["verilogeval"]],
        "caught_by_formal": [r for r in records if r["referee"] and not r["referee_formal"]],
        "formal_s_median": sorted(proved)[len(proved) // 2] if proved else None,
        "formal_runs": len(proved),
        "by_operator": dict(Counter(r["candidate"] for r in disagreements)),
        "host_check": {
            "n": len(host),
            "same": sum(h["shipped"] == h["sandboxed"] for h in host),
            "differ": [h for h in host if h["shipped"] != h["sandboxed"]],
        },
    }


if __name__ == "__main__":
    main()
