"""Test augmentation (the EvalPlus idea): more inputs, expected outcomes from the reference.

The tests that ship with a task are often weak: an off-by-one or a missing case passes them. From
each recorded input we derive nearby inputs by type-aware mutation (numbers nudged, strings and
lists shortened, lengthened, reordered), run the *reference* on them in the sandbox, and keep
those it answers quickly and without raising. They are appended to the task's hidden inputs;
``hidden.n_original`` says where the task's own calls end, since only those can be re-checked
by the task's own test.

Mutations stay close to the recorded inputs (same types, signs kept) because an input outside the
problem's domain would punish correct alternatives that differ from the reference only there.
Tasks whose answers are not unique (several valid outputs) must not be augmented: mark them with
``hidden.augment = False``.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from typing import Any

from referee.errors import TaskError
from referee.sandbox import Limits, Sandbox
from referee.tasks.model import Task
from referee.verify import harness as H
from referee.verify.function import harness_program

__all__ = ["augment_task", "augment_tasks", "mutate_value"]


def mutate_value(v: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value near ``v`` of the same type."""
    t = type(v)
    if t is bool:
        return not v
    if t is int:
        choices = [v + 1, v - 1, v * 2, v + rng.randint(2, 10)]
        if v >= 0:
            choices = [c for c in choices if c >= 0] or [v]
        return rng.choice(choices)
    if t is float:
        choices = [v + 0.5, v * 2, v - 0.25, round(v, 1)]
        if v >= 0:
            choices = [c for c in choices if c >= 0] or [v]
        return rng.choice(choices)
    if t is str:
        if not v:
            return rng.choice(["a", " ", "0"])
        i = rng.randrange(len(v))
        ops = [v[:i] + v[i + 1 :], v[:i] + v[i] + v[i:], v[::-1], v + v[i], v[i:] + v[:i]]
        return rng.choice(ops)
    if t is list or t is tuple:
        items = list(v)
        if not items:
            return v
        i = rng.randrange(len(items))
        op = rng.randrange(5)
        if op == 0:
            items.pop(i)
        elif op == 1:
            items.insert(i, items[i])
        elif op == 2:
            rng.shuffle(items)
        elif op == 3 and depth < 3:
            items[i] = mutate_value(items[i], rng, depth + 1)
        else:
            items.append(mutate_value(items[i], rng, depth + 1) if depth < 3 else items[i])
        return t(items)
    if t is dict and v:
        k = rng.choice(list(v))
        out = dict(v)
        out[k] = mutate_value(v[k], rng, depth + 1) if depth < 3 else v[k]
        return out
    return v


def _candidates(inputs: list[list[Any]], rng: random.Random, per_input: int) -> Iterator[Any]:
    for enc_args, enc_kwargs in inputs:
        args = H.decode(enc_args)
        kwargs = H.decode(enc_kwargs)
        assert isinstance(args, list) and isinstance(kwargs, dict)
        for _ in range(per_input):
            new = list(args)
            for _ in range(rng.choice([1, 1, 2])):
                if new:
                    j = rng.randrange(len(new))
                    new[j] = mutate_value(new[j], rng)
            yield [H.encode(new), H.encode(kwargs)]


def augment_task(
    sandbox: Sandbox,
    task: Task,
    *,
    extra: int = 40,
    seed: int = 0,
    call_timeout_s: float = 1.0,
) -> Task:
    """``task`` with up to ``extra`` generated inputs appended to its hidden tests."""
    h = task.hidden
    if "inputs" not in h or "reference" not in h:
        raise TaskError(f"task {task.id!r}: record its tests before augmenting them")
    if h.get("augment") is False or "n_original" in h:
        return task
    rng = random.Random(f"{seed}:{task.id}")
    seen = {H.encode(H.decode(i[0])).__repr__() + repr(i[1]) for i in h["inputs"]}
    fresh: list[list[Any]] = []
    for cand in _candidates(h["inputs"], rng, per_input=max(2, 3 * extra // len(h["inputs"]))):
        key = repr(cand[0]) + repr(cand[1])
        if key not in seen:
            seen.add(key)
            fresh.append(cand)
        if len(fresh) >= 3 * extra:
            break
    if not fresh:
        return task
    nonce = secrets.token_hex(8)
    order = list(range(len(fresh)))
    program = harness_program(
        "run",
        source=task.payload["code_prompt"] + h["reference"],
        entry_point=task.payload["entry_point"],
        inputs=fresh,
        order=order,
        nonce=nonce,
        timeout=call_timeout_s,
    )
    r = sandbox.run_python(program, name="augment.py", limits=Limits(timeout_s=60))
    outcomes = {f["i"]: f["out"] for f in H.frames(r.stdout, nonce) if "i" in f}
    # Keep what the reference answers plainly: raising or timing out suggests an input outside the
    # problem's domain. Twice-run determinism is checked by the recheck of the first input.
    kept = [(fresh[i], out) for i, out in sorted(outcomes.items()) if out and out[0] == "ok"]
    kept = kept[:extra]
    if not kept:
        return task
    hidden = {
        **h,
        "n_original": len(h["inputs"]),
        "inputs": h["inputs"] + [k[0] for k in kept],
        "expected": h["expected"] + [k[1] for k in kept],
        "augmented_seed": seed,
    }
    return task.revised(hidden=hidden)


def augment_tasks(
    sandbox: Sandbox, tasks: list[Task], *, extra: int = 40, seed: int = 0
) -> list[Task]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(sandbox.python_workers) as pool:
        return list(pool.map(lambda t: augment_task(sandbox, t, extra=extra, seed=seed), tasks))
