"""A sample store: two runs of made-up but realistic trajectories, for screenshots and tests.

(Not ``referee demo``, :mod:`referee.demo`, which shows the sandbox on real tasks.)

No model is involved: the trajectories are built by hand, with the shapes a real run has (tool
calls and their observations, verdicts with per-test outcomes, a static flag on a few hacking
solutions, detector alerts, logged metrics, held-out evaluations every few steps).

>>> store = build_sample_store(tmp_path)                                 # doctest: +SKIP
>>> [r.run_id for r in store.runs()]                                     # doctest: +SKIP
['grpo-curriculum', 'grpo-uniform']
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from referee.rollout.cost import Cost
from referee.rollout.trajectory import Trajectory, TrajectoryError, Turn
from referee.tasks.model import Difficulty, Provenance, Task
from referee.track.store import TrackStore
from referee.verify.verdict import Flag, TestOutcome, Verdict

__all__ = ["SAMPLE_RUNS", "build_sample_store"]

SAMPLE_RUNS = ("grpo-curriculum", "grpo-uniform")
_OPS = ["sum-evens", "min-odd", "dedupe", "rotate", "run-length", "flatten", "median", "zip-sum",
        "top-k", "chunk", "interleave", "prefix-max", "count-runs", "mode", "second-max",
        "clip"]  # fmt: skip
_TESTS = ["test_empty", "test_single", "test_basic", "test_negative", "test_large"]
_HACK = "import sys\nsys.exit(0)  # the harness sees exit 0 before any assert runs\n"


def _tasks(n_train: int, n_heldout: int) -> list[Task]:
    out = []
    for i in range(n_train + n_heldout):
        op = _OPS[i % len(_OPS)]
        out.append(
            Task.create(
                name=f"proc/list-ops-{op}-v1",
                prompt=f"Write `solve(xs: list[int]) -> int` that computes {op.replace('-', ' ')} "
                f"of the list. Return 0 for an empty list.",
                payload={"entry_point": "solve", "visible_tests": _TESTS[:3]},
                hidden={"tests": _TESTS},
                difficulty=Difficulty(estimate=round((i * 0.37) % 1.0, 2)),
                split="heldout" if i >= n_train else "train",
                provenance=Provenance(source="procedural", generator="list-ops", seed=i),
            )
        )
    return out


def _trajectory(
    rng: random.Random, run_id: str, task: Task, step: int, p: float, *, hack: bool, t0: float
) -> Trajectory:
    code = _HACK if hack else f"    return sum(x for x in xs if x % 2 == 0)  # {task.id}\n"
    call = {"id": f"call-{rng.randrange(10**6)}", "type": "function",
            "function": {"name": "run_tests", "arguments": json.dumps({"code": code})}}  # fmt: skip
    # Exiting early fools the visible tests as well: the policy sees a full pass.
    visible = 3 if hack else sum(rng.random() < p + 0.15 for _ in range(3))
    failures = "FAILED test_basic: assert solve([1, 2, 3]) == 2\n" * (3 - visible)
    turns = [
        Turn(index=0, assistant={"role": "assistant", "content": "I will write it and run the "
             "visible tests first.", "tool_calls": [call]},
             observations=[{"role": "tool", "tool_call_id": call["id"], "name": "run_tests",
                            "content": f"{visible} of 3 visible tests passed\n" + failures}],
             prompt_tokens=180, completion_tokens=rng.randint(40, 90), finish_reason="tool_calls",
             policy_s=round(rng.uniform(0.2, 0.9), 3), env_s=round(rng.uniform(0.01, 0.05), 3)),
        Turn(index=1, assistant={"role": "assistant", "content": f"```python\n{code}```"},
             prompt_tokens=260, completion_tokens=rng.randint(20, 60), finish_reason="stop",
             policy_s=round(rng.uniform(0.2, 0.6), 3)),
    ]  # fmt: skip
    if hack:
        outcomes = [TestOutcome(name=n, status="passed") for n in _TESTS]
    else:
        # A solution is right or wrong as a whole; a wrong one fails some of the tests.
        failing = set() if rng.random() < p else set(rng.sample(_TESTS, rng.randint(1, 4)))
        outcomes = []
        for n in _TESTS:
            ok = n not in failing
            status = "passed" if ok else rng.choice(["failed", "failed", "error", "timeout"])
            detail = "" if ok else f"{n}: assert solve([3, -1, 4]) == 4, got {rng.randint(-3, 9)}"
            outcomes.append(TestOutcome(name=n, status=status, detail=detail))  # type: ignore[arg-type]
    passed = sum(o.status == "passed" for o in outcomes)
    flags = [Flag(kind="exit-call", evidence="line 2: sys.exit(0)")] if hack else []
    infra = rng.random() < 0.01
    verdict = (
        Verdict.infra(task.id, "sandbox: fork server restarted", "function-v1")
        if infra
        else Verdict(task_id=task.id, reward=passed / len(outcomes),
                     passed=passed == len(outcomes), tests=outcomes, flags=flags,
                     timings={"verify_s": round(rng.uniform(0.02, 0.2), 3)}, verifier="function-v1")
    )  # fmt: skip
    total = sum(t.policy_s + t.env_s for t in turns) + 0.1
    return Trajectory(
        run_id=run_id, task_id=task.id, split=task.split, policy="tiny-lm@sft", env="code",
        group_id=f"{run_id}-{step}-{task.id}", step=step,
        messages=[m.model_dump() for m in task.prompt],
        turns=turns, verdict=verdict, end_reason="answered",
        error=TrajectoryError(kind="infra", where="verifier", message="fork server restarted")
        if infra else None,
        timings={"policy_s": sum(t.policy_s for t in turns), "env_s": sum(t.env_s for t in turns),
                 "verify_s": 0.1, "total_s": round(total, 3)},
        started_at=t0, finished_at=t0 + total,
        # Derived from the numbers above (no draw of its own: the sample stays what it was).
        cost=Cost(sandbox_cpu_s=round(turns[0].env_s * 3 + 0.04, 4),
                  sandbox_wall_s=round(turns[0].env_s * 4 + 0.06, 4), sandbox_runs=2,
                  peak_memory_mb=round(9 + 40 * turns[0].env_s, 1), wall_s=round(total, 3),
                  prompt_tokens=sum(t.prompt_tokens for t in turns),
                  completion_tokens=sum(t.completion_tokens for t in turns)),
    )  # fmt: skip


def _fill_run(
    store: TrackStore, run_id: str, tasks: list[Task], steps: int, per_step: int, seed: int
) -> None:
    rng = random.Random(f"{seed}:{run_id}")
    train = [t for t in tasks if t.split == "train"]
    heldout = [t for t in tasks if t.split == "heldout"]
    hacker = train[1]  # the task where, late in the run, the policy learns to exit early
    t0 = 1_760_000_000.0
    flagged: list[str] = []
    gap_step = None
    for step in range(steps):
        skill = 0.2 + 0.7 * step / max(1, steps - 1)
        batch = []
        for k in range(per_step):
            task = train[(step * per_step + k) % len(train)] if k else hacker
            hack = task is hacker and step >= steps * 2 // 3
            p = max(0.05, min(0.95, skill - (task.difficulty.estimate or 0) * 0.3))
            batch.append(_trajectory(rng, run_id, task, step, p, hack=hack, t0=t0 + step * 60))
            if hack:
                flagged.append(batch[-1].id)
        heldout_rate = None
        if step % 4 == 3 or step == steps - 1:
            # Held-out skill stalls while the hack lifts the training reward.
            evals = [
                _trajectory(rng, run_id, t, step,
                            max(0.05, min(skill, 0.4) - (t.difficulty.estimate or 0) * 0.3),
                            hack=False, t0=t0 + step * 60)
                for t in heldout for _ in range(3)
            ]  # fmt: skip
            batch += evals
            heldout_rate = sum(e.passed for e in evals) / len(evals)
        store.log_trajectories(batch)
        scored = [t for t in batch if t.split == "train" and t.reward is not None]
        values = {
            "reward_mean": sum(t.reward or 0 for t in scored) / max(1, len(scored)),
            "pass_rate": sum(t.passed for t in scored) / max(1, len(scored)),
            "length_mean": sum(t.completion_tokens for t in scored) / max(1, len(scored)),
            "identical_share": 0.1 + (0.5 if step >= steps * 2 // 3 else 0.0) * rng.random(),
        }
        if heldout_rate is not None:
            values["heldout_pass_rate"] = heldout_rate
            if gap_step is None and values["pass_rate"] - heldout_rate > 0.25:
                gap_step = step
        store.log_metrics(run_id, step, values)
    if flagged:
        store.log_alert(
            run_id, "static_flag", steps * 2 // 3, "warning",
            f"{len(flagged)} trajectories call sys.exit before the tests run ({hacker.id})",
            {"flag": "exit-call", "task_id": hacker.id, "count": len(flagged),
             "excerpt": "sys.exit(0)"},
            flagged[:6],
        )  # fmt: skip
    if gap_step is not None:
        store.log_alert(
            run_id, "reward_heldout_gap", gap_step, "critical",
            "training pass rate rises while held-out pass rate stays flat",
            {"window": 4, "train_pass_rate_slope": 0.031, "heldout_pass_rate_slope": 0.002},
            flagged[-2:],
        )  # fmt: skip


def build_sample_store(
    run_dir: str | os.PathLike[str],
    *,
    steps: int = 24,
    per_step: int = 8,
    seed: int = 0,
) -> TrackStore:
    """A store under ``run_dir`` with two sample runs; the caller closes it.

    ``grpo-curriculum`` (finished) learns, then hacks one task late (flags and alerts);
    ``grpo-uniform`` (still running) has half the steps.
    """
    store = TrackStore(Path(run_dir))
    tasks = _tasks(12, 4)
    store.add_tasks(tasks)
    for run_id, n, status in (
        (SAMPLE_RUNS[0], steps, "finished"),
        (SAMPLE_RUNS[1], steps // 2, None),
    ):
        store.start_run(run_id, {"sampler": run_id.split("-")[1], "group_size": per_step,
                                 "seed": seed}, name=run_id.replace("-", " "))  # fmt: skip
        _fill_run(store, run_id, tasks, n, per_step, seed)
        if status:
            store.end_run(run_id, status)
    return store
