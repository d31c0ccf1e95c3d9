"""How many wrong-but-plausible solutions slip through HumanEval's own tests, and how many the
augmented tests catch.

    .venv/bin/python bench/augmentation.py [--per-task 12] [--extra 40]

Wrong-but-plausible solutions are made mechanically: single-point mutations of each canonical
solution by ``referee.synth.mutate`` (comparisons, arithmetic and boolean operators, negated
conditions, integer constants +-1, dropped return values). Each mutant is verified against the
task's own recorded tests, and those that pass are verified again with the augmented tests. A
mutant that passes both may be equivalent to the original (no test can catch it) or a miss; the
script reports both counts, and checks that all 164 canonical solutions still pass with
augmentation (no false negatives).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.synth.mutate import apply_mutation, find_mutations
from referee.tasks.humaneval import humaneval_tasks
from referee.tasks.model import Task
from referee.verify.augment import augment_tasks
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.record import record_function_tasks


def mutants(task: Task, limit: int) -> list[str]:
    """Completions that redefine the module with one mutation of the entry point each."""
    source = task.payload["code_prompt"] + task.hidden["reference"]
    out = []
    for m in find_mutations(source, function=task.payload["entry_point"]):
        # The completion continues the prompt's stub, then redefines everything mutated.
        out.append("    pass\n\n" + apply_mutation(source, m))
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
