"""How many wrong-but-plausible solutions slip through HumanEval's own tests, and how many the
augmented tests catch.

    .venv/bin/python bench/augmentation.py [--per-task 12] [--extra 40]

Wrong-but-plausible solutions are made mechanically: single-point mutations of each canonical
solution (``<`` <-> ``<=``, ``>`` <-> ``>=``, an integer constant +-1, ``+`` <-> ``-``,
``and`` <-> ``or``). Each mutant is verified against the task's own recorded tests, and those that
pass are verified again with the augmented tests. A mutant that passes both may be equivalent to
the original (no test can catch it) or a miss; the script reports both counts, and checks that all
164 canonical solutions still pass with augmentation (no false negatives).
"""

from __future__ import annotations

import argparse
import ast
import copy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.tasks.humaneval import humaneval_tasks
from referee.tasks.model import Task
from referee.verify.augment import augment_tasks
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.record import record_function_tasks

SWAPS: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.And: ast.Or,
    ast.Or: ast.And,
}


def _sites(func: ast.FunctionDef) -> list[tuple[int, str]]:
    sites = []
    for n, node in enumerate(ast.walk(func)):
        if isinstance(node, ast.Compare):
            sites += [(n, f"cmp{k}") for k, op in enumerate(node.ops) if type(op) in SWAPS]
        elif isinstance(node, ast.BinOp | ast.BoolOp) and type(node.op) in SWAPS:
            sites.append((n, "op"))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            sites += [(n, "+1"), (n, "-1")]
    return sites


def _apply(func: ast.FunctionDef, site: tuple[int, str]) -> ast.FunctionDef:
    func = copy.deepcopy(func)
    for n, node in enumerate(ast.walk(func)):
        if n != site[0]:
            continue
        kind = site[1]
        if kind.startswith("cmp"):
            k = int(kind[3:])
            node.ops[k] = SWAPS[type(node.ops[k])]()  # type: ignore[attr-defined]
        elif kind == "op":
            node.op = SWAPS[type(node.op)]()  # type: ignore[attr-defined]
        else:
            node.value += 1 if kind == "+1" else -1  # type: ignore[attr-defined]
    return func


def mutants(task: Task, limit: int) -> list[str]:
    """Completions that redefine the entry point with one mutation each."""
    source = task.payload["code_prompt"] + task.hidden["reference"]
    tree = ast.parse(source)
    func = next(
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == task.payload["entry_point"]
    )
    seen = {ast.unparse(func)}
    out = []
    for site in _sites(func):
        code = ast.unparse(_apply(func, site))
        if code not in seen:
            seen.add(code)
            out.append("    pass\n\n" + code + "\n")
        if len(out) >= limit:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-task", type=int, default=12)
    ap.add_argument("--extra", type=int, default=40)
    args = ap.parse_args()
    t0 = time.time()
    with harness_sandbox() as sb:
        base = record_function_tasks(sb, humaneval_tasks())
        augmented = augment_tasks(sb, base, extra=args.extra)
        aug_by_id = {t.id: t for t in augmented}
        v = FunctionVerifier(sb, call_timeout_s=1.0, run_timeout_s=10.0)
        canon = v.verify_many([(t, t.hidden["reference"]) for t in augmented])
        pairs = [(t, m) for t in base for m in mutants(t, args.per_task)]
        first = v.verify_many(pairs)
        survivors = [(t, m) for (t, m), vd in zip(pairs, first, strict=True) if vd.passed]
        second = v.verify_many([(aug_by_id[t.id], m) for t, m in survivors])
    caught = [(t.id, m) for (t, m), vd in zip(survivors, second, strict=True) if not vd.passed]
    added = sum(
        len(t.hidden["inputs"]) - t.hidden.get("n_original", len(t.hidden["inputs"]))
        for t in augmented
    )
    result = {
        "machine": machine(),
        "command": "python bench/augmentation.py " + " ".join(sys.argv[1:]),
        "tasks": len(base),
        "tasks_augmented": sum("n_original" in t.hidden for t in augmented),
        "generated_inputs_kept": added,
        "canonical_pass_with_augmentation": sum(x.passed for x in canon),
        "mutants": len(pairs),
        "killed_by_original_tests": len(pairs) - len(survivors),
        "survived_original_tests": len(survivors),
        "caught_by_augmented_tests": len(caught),
        "survived_both (equivalent or missed)": len(survivors) - len(caught),
        "caught_examples": [{"task_id": i, "completion": m} for i, m in caught[:5]],
        "seconds": round(time.time() - t0, 1),
    }
    path = save("augmentation", result)
    for k, val in result.items():
        if k not in ("caught_examples", "machine"):
            print(f"{k}: {val}")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
