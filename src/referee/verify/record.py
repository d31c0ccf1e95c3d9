"""Recording a function task's tests: the inputs its own test calls, the reference's outcomes.

Runs once per task, at import, in the sandbox (the reference and the test are code too). The
result goes into ``hidden.inputs`` and ``hidden.expected`` and into the task's content hash, so
verification never needs the reference again.

:func:`import_recorded` and :func:`generate_recorded` are what ``referee tasks import`` and
``referee tasks generate`` do: draft tasks from a registered source or a procedural family,
recorded in one harness sandbox.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from referee.errors import ConfigError, TaskError
from referee.sandbox import Limits, Sandbox
from referee.tasks.model import Task
from referee.tasks.procedural import generate_many
from referee.tasks.sources import load_source
from referee.verify import harness as H
from referee.verify.augment import augment_tasks
from referee.verify.function import harness_program, harness_sandbox

__all__ = [
    "generate_recorded",
    "import_recorded",
    "record_function_task",
    "record_function_tasks",
    "record_generated_task",
]


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


def import_recorded(source: str, *, split: str = "heldout", augment: int = 0) -> list[Task]:
    """The tasks of a registered source (:mod:`referee.tasks.sources`), recorded in the sandbox.

    ``augment`` adds that many generated test inputs per task, with expected outcomes from the
    reference (:func:`referee.verify.augment.augment_tasks`); 0 keeps the task's own inputs only.
    """
    if augment < 0:
        raise ConfigError(f"augment must be 0 or more, got {augment}")
    drafts = load_source(source, split=split)
    with harness_sandbox() as sb:
        tasks = record_function_tasks(sb, drafts)
        if augment:
            tasks = augment_tasks(sb, tasks, extra=augment)
    return tasks


def generate_recorded(
    family: str, *, count: int, difficulty: float | None = None, seed: int = 0
) -> list[Task]:
    """``count`` procedural tasks of ``family`` (seeds ``seed``, ``seed + 1``...), recorded."""
    if count < 1:
        raise ConfigError(f"count must be at least 1, got {count}")
    drafts = list(generate_many(family, count=count, difficulty=difficulty, seed=seed))
    with harness_sandbox() as sb:
        return record_function_tasks(sb, drafts)
