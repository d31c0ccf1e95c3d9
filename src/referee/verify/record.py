"""Recording a function task's tests: the inputs its own test calls, the reference's outcomes.

Runs once per task, at import, in the sandbox (the reference and the test are code too). The
result goes into ``hidden.inputs`` and ``hidden.expected`` and into the task's content hash, so
verification never needs the reference again.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from referee.errors import TaskError
from referee.sandbox import Limits, Sandbox
from referee.tasks.model import Task
from referee.verify import _harness as H
from referee.verify.function import harness_program

__all__ = ["record_function_task", "record_function_tasks", "record_generated_task"]


def record_function_task(sandbox: Sandbox, task: Task, *, timeout_s: float = 60.0) -> Task:
    """``task`` with ``hidden.inputs`` and ``hidden.expected`` filled in from its own test."""
    p, h = task.payload, task.hidden
    for key, where in (("entry_point", p), ("code_prompt", p), ("reference", h), ("test", h)):
        if key not in where:
            raise TaskError(f"task {task.id!r}: cannot record tests without {key!r}")
    nonce = secrets.token_hex(8)
    program = harness_program(
        "record",
        source=p["code_prompt"] + h["reference"],
        test=h["test"],
        entry_point=p["entry_point"],
        seed=h.get("seed", 0),
        nonce=nonce,
    )
    r = sandbox.run_python(
        program, name="record.py", limits=Limits(timeout_s=timeout_s, memory_mb=2048)
    )
    frames = [f for f in H.frames(r.stdout, nonce) if "calls" in f]
    if not r.ok or not frames:
        raise TaskError(
            f"task {task.id!r}: its test does not pass with its reference solution "
            f"({r.summary()}): {r.stderr.strip()[-500:]}"
        )
    calls = frames[0]["calls"]
    if not calls:
        raise TaskError(f"task {task.id!r}: its test never calls {p['entry_point']!r}")
    hidden = {**h, "inputs": [[c[0], c[1]] for c in calls], "expected": [c[2] for c in calls]}
    return task.revised(hidden=hidden)


def record_function_tasks(
    sandbox: Sandbox, tasks: Sequence[Task], *, workers: int | None = None
) -> list[Task]:
    """Record every task: generated ones from their inputs, others from their own tests."""
    workers = workers or sandbox.python_workers

    def one(t: Task) -> Task:
        if "generated_inputs" in t.hidden:
            return record_generated_task(sandbox, t)
        return record_function_task(sandbox, t)

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, tasks))


def record_generated_task(sandbox: Sandbox, task: Task, *, examples: int = 2) -> Task:
    """A procedural task with its generated inputs' outcomes computed by the reference.

    The first ``examples`` input/outcome pairs are shown in the prompt; all of them are tests.
    """
    p, h = task.payload, task.hidden
    if "generated_inputs" not in h:
        raise TaskError(f"task {task.id!r} has no generated inputs to record")
    inputs = [[H.encode(list(args)), H.encode({})] for args in h["generated_inputs"]]
    nonce = secrets.token_hex(8)
    program = harness_program(
        "run",
        source=p["code_prompt"] + h["reference"],
        entry_point=p["entry_point"],
        inputs=inputs,
        order=list(range(len(inputs))),
        nonce=nonce,
        timeout=2.0,
    )
    r = sandbox.run_python(program, name="record.py", limits=Limits(timeout_s=60))
    outcomes = {f["i"]: f["out"] for f in H.frames(r.stdout, nonce) if "i" in f}
    kept = [
        (inputs[i], out) for i, out in sorted(outcomes.items()) if out and out[0] in ("ok", "raise")
    ]
    if len(kept) < len(inputs) // 2:
        raise TaskError(
            f"task {task.id!r}: its reference failed on most generated inputs "
            f"({r.summary()}): {r.stderr.strip()[-300:]}"
        )
    shown = []
    for (args, _kwargs), out in kept[:examples]:
        if out[0] == "ok":
            decoded = H.decode(args)
            assert isinstance(decoded, list)
            call = ", ".join(repr(a) for a in decoded)
            shown.append(f"{p['entry_point']}({call}) == {H.decode(out[1])!r}")
    prompt = task.user_prompt
    if shown:
        prompt += "\n\nExamples:\n" + "\n".join(shown)
    hidden = {k: v for k, v in h.items() if k != "generated_inputs"}
    hidden |= {"inputs": [k[0] for k in kept], "expected": [k[1] for k in kept]}
    return task.revised(hidden=hidden, prompt=prompt)
