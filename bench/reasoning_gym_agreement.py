"""Agreement of referee's reasoning judge with reasoning-gym's own ``score_answer``.

For every dataset referee offers (referee.domains.reasoning.catalog), tasks are generated at
difficulties 0, 0.5 and 1; each task's gold answer and a set of perturbed answers (empty, no
tags, case changed, a digit off, a token dropped, another task's answer, padding that earns
reasoning-gym's partial credit...) are judged twice: by referee's verifier (on the host: it
parses text, runs nothing) and by reasoning-gym's scorer, which runs **in the sandbox**
because several scorers ``eval()`` the answer. The two agree when referee passes exactly the
answers reasoning-gym scores 1.0.

    PYTHONPATH=src .venv/bin/python bench/reasoning_gym_agreement.py --per-dataset 9 \
        --out bench/results/imports/reasoning_gym_agreement.json
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from referee.domains import generate_family
from referee.domains.reasoning.catalog import DATASETS, EXCLUDED, family_name
from referee.domains.reasoning.judge import extract_answer
from referee.domains.reasoning.verifier import ReasoningVerifier
from referee.sandbox import Limits, Sandbox
from referee.tasks.model import Task, read_tasks, write_tasks

# Runs in the sandbox: reasoning-gym's own scorer on each completion, after its own extraction.
SCORER = r"""
import json, sys
sys.path[:0] = ["/opt/paths/0"]
import reasoning_gym
from reasoning_gym.utils import extract_answer
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    # the entry made again here from the task's curriculum levels (difficulty.features), as
    # referee.domains.reasoning.families.rg_config does (the gold answers are compared after)
    cls, config_cls = reasoning_gym.factory.DATASETS[job["dataset"]]
    if job["levels"] is None:
        config = config_cls(seed=job["seed"], size=1)
    else:
        curriculum = reasoning_gym.factory.create_curriculum(job["dataset"])
        for name, level in job["levels"].items():
            curriculum.set_attr_level(name, level)
        config = curriculum.generate_configuration({"seed": job["seed"], "size": 1})
    ds = cls(config=config)
    entry = ds[0]
    scores = []
    for completion in job["completions"]:
        try:
            scores.append(float(ds.score_answer(extract_answer(completion), entry)))
        except Exception as e:  # a scorer that raises: recorded, never a pass
            scores.append(repr(e)[:200])
    out.append({"gold": str(entry["answer"]), "scores": scores})
# after a marker: some generators print to stdout
sys.stdout.write("\n@@SCORES@@" + json.dumps(out))
"""


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def perturbations(gold: str, other: str | None) -> list[tuple[str, str]]:
    """(label, completion) pairs: the gold answer first, then wrong or reformatted ones."""
    tag = "<answer>{}</answer>".format
    answers: dict[str, str] = {
        "gold": tag(gold),
        "empty": "",
        "no-tags": gold,
        "blank": tag(""),
        "trailing-period": tag(gold + "."),
        "prefixed": tag("The answer is " + gold),
        "doubled": tag(gold + " " + gold),
        "reversed": tag(gold[::-1]),
        "upper": tag(gold.upper()),
        "lower": tag(gold.lower()),
        "spaces-doubled": tag(gold.replace(" ", "  ")),
        "newlines-to-spaces": tag(gold.replace("\n", " ")),
        "drop-last": tag(gold[:-1]),
        "drop-first": tag(gold[1:]),
    }
    tokens = gold.split()
    if len(tokens) >= 2:
        answers["swap-tokens"] = tag(" ".join([tokens[1], tokens[0], *tokens[2:]]))
        answers["python-list"] = tag(str(tokens))
    number = _number(gold.replace(",", ""))
    if number is not None:
        answers["plus-one"] = tag(str(number + 1))
        answers["negated"] = tag(str(-number))
        answers["point-zero"] = tag(gold + ".0" if "." not in gold else gold + "0")
        if number == number.to_integral_value() and abs(number) >= 1000:
            answers["thousands"] = tag(f"{int(number):,}")
    try:
        value = json.loads(gold)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if isinstance(value, list) and len(value) >= 2:
        answers["json-reversed"] = tag(json.dumps(value[::-1]))
        answers["json-compact"] = tag(json.dumps(value, separators=(",", ":")))
    if other is not None and other != gold:
        answers["other-task"] = tag(other)
        answers["two-tags-last-gold"] = tag(other) + " no, " + tag(gold)
        answers["two-tags-last-other"] = tag(gold) + " no, " + tag(other)
    # de-duplicate completions, keeping the first label
    seen: dict[str, str] = {}
    for label, completion in answers.items():
        seen.setdefault(completion, label)
    return [(label, completion) for completion, label in seen.items()]


def rg_scores(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """reasoning-gym's scores of every job's completions, in one sandboxed run."""
    site = next(p for p in sys.path if p.endswith("site-packages"))
    with Sandbox(python_workers=1, python_paths=(site,)) as box:
        result = box.run_python(
            SCORER,
            stdin=json.dumps(jobs).encode(),
            limits=Limits(timeout_s=1800, memory_mb=4096, stdout_bytes=64 << 20),
        )
    marker = result.stdout.rfind("@@SCORES@@")
    if result.exit_code != 0 or result.timed_out or result.stdout_truncated or marker < 0:
        raise SystemExit(f"the sandboxed scorer failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout[marker + len("@@SCORES@@") :])  # type: ignore[no-any-return]


def _too_slow(signum: int, frame: Any) -> None:
    raise TimeoutError("generation did not finish in time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-dataset", type=int, default=9, help="tasks per dataset (3 levels)")
    ap.add_argument("--datasets", nargs="*", default=None)
    ap.add_argument("--tasks-cache", default=None, help="JSONL of generated tasks to reuse")
    ap.add_argument("--generate-timeout", type=int, default=120, help="seconds per dataset")
    ap.add_argument("--out", default="bench/results/imports/reasoning_gym_agreement.json")
    args = ap.parse_args()
    started = time.time()
    names = args.datasets or list(DATASETS)
    tasks: dict[str, list[Task]] = {}
    failed: dict[str, str] = {}
    cached: dict[str, list[Task]] = {}
    if args.tasks_cache and Path(args.tasks_cache).exists():
        for t in read_tasks(args.tasks_cache):
            cached.setdefault(t.payload["dataset"], []).append(t)
    for name in names:
        if name in cached:
            tasks[name] = cached[name]
            continue
        per_level = max(1, args.per_dataset // 3)
        began = time.time()
        # A generator that loops on some seed (seen: number_sequence at level 3) is stopped
        # and reported; SIGALRM interrupts pure-Python loops.
        signal.signal(signal.SIGALRM, _too_slow)
        signal.alarm(args.generate_timeout)
        try:
            tasks[name] = [
                t
                for i, d in enumerate((0.0, 0.5, 1.0))
                for t in generate_family(
                    family_name(name), count=per_level, difficulty=d, seed=1000 * i
                )
            ]
        except Exception as e:  # a generator that fails is reported, not hidden
            failed[name] = f"{type(e).__name__}: {e}"[:300]
        finally:
            signal.alarm(0)
        print(f"{name}: generated in {time.time() - began:.1f} s", file=sys.stderr, flush=True)
    if args.tasks_cache:
        write_tasks(args.tasks_cache, [t for ts in tasks.values() for t in ts])
    jobs, meta = [], []
    for name, ts in tasks.items():
        golds = [str(t.hidden["answer"]) for t in ts]
        for i, t in enumerate(ts):
            other = golds[(i + 1) % len(golds)] if len(golds) > 1 else None
            pairs = perturbations(extract_answer(t.hidden["reference"]) or "", other)
            jobs.append({
                "dataset": name,
                "levels": {k.removeprefix("level_"): int(v)
                           for k, v in t.difficulty.features.items()} or None,
                "seed": t.provenance.seed,
                "completions": [c for _, c in pairs],
            })  # fmt: skip
            meta.append((name, t, pairs))
    scored = rg_scores(jobs)
    verifier = ReasoningVerifier()
    per: dict[str, dict[str, Any]] = {}
    for (name, task, pairs), result in zip(meta, scored, strict=True):
        row = per.setdefault(name, {
            "mode": DATASETS[name], "tasks": 0, "answers": 0, "agree": 0, "gold_pass": 0,
            "gold_rg_1": 0, "empty_fail": 0, "regenerated_same": 0, "disagreements": [],
        })  # fmt: skip
        row["tasks"] += 1
        row["regenerated_same"] += result["gold"] == str(task.hidden["answer"])
        for (label, completion), score in zip(pairs, result["scores"], strict=True):
            verdict = verifier.verify(task, completion)
            rg_pass = isinstance(score, float) and score >= 1.0
            row["answers"] += 1
            row["agree"] += verdict.passed == rg_pass
            if label == "gold":
                row["gold_pass"] += verdict.passed
                row["gold_rg_1"] += rg_pass
            if label == "empty":
                row["empty_fail"] += not verdict.passed
            if verdict.passed != rg_pass:
                row["disagreements"].append({
                    "task": task.id, "label": label, "answer": extract_answer(completion),
                    "gold": task.hidden["answer"], "referee": verdict.passed, "rg_score": score,
                })  # fmt: skip
    total = sum(r["answers"] for r in per.values())
    agree = sum(r["agree"] for r in per.values())
    out = {
        "command": "PYTHONPATH=src .venv/bin/python bench/reasoning_gym_agreement.py "
        f"--per-dataset {args.per_dataset}",
        "machine": machine(),
        "seconds": round(time.time() - started, 1),
        "offered": len(DATASETS),
        "excluded": EXCLUDED,
        "generation_failed": failed,
        "answers": total,
        "agree": agree,
        "agreement": agree / total if total else None,
        "per_dataset": per,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{agree}/{total} agree ({100 * agree / max(total, 1):.2f} %); "
          f"{sum(len(r['disagreements']) for r in per.values())} disagreements; "
          f"generation failed: {sorted(failed)}")  # fmt: skip
    for name, r in sorted(per.items()):
        if r["disagreements"] or r["gold_pass"] != r["tasks"]:
            print(
                name,
                r["mode"],
                f"{r['agree']}/{r['answers']}",
                f"gold {r['gold_pass']}/{r['tasks']}",
                [(d["label"], d["rg_score"]) for d in r["disagreements"][:4]],
            )


if __name__ == "__main__":
    main()
