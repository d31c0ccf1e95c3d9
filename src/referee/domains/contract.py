"""The contract every domain keeps, checked: ``referee domains check NAME``.

1. **loads**: its ``register()`` ran without error (:mod:`referee.discovery`);
2. **gold passes**: every reference answer (``referee tasks gold``) of a few tasks of each of
   its families passes its verifier;
3. **empty fails**: the empty answer passes none of them, and earns nothing;
4. **exploits held**: no exploit of its red-team corpus passes or earns more than doing nothing
   on the same task (:class:`~referee.domains.registry.ExploitOutcome`);
5. **hidden not in view**: what the model is shown (the prompt, and the first messages and
   tool schemas of the environment named by the task's kind) holds neither the reference nor
   any other string of the task's ``hidden`` data (16 characters or more) that its payload and
   prompt do not state themselves (:func:`hidden_in_view`).

A check that cannot run (no families, no corpus) fails: it is part of the contract.

>>> results = check_domain("sql", per_family=1)                         # doctest: +SKIP
>>> [(r.name, r.ok) for r in results][:2]                               # doctest: +SKIP
[('loads', True), ('gold passes', True)]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.discovery import DomainRecord, domain_record
from referee.domains.registry import corpus_names, generate_family, run_corpus
from referee.tasks.model import Task

__all__ = ["SECRET_MIN_CHARS", "CheckResult", "check_domain", "hidden_in_view"]

#: Hidden strings shorter than this are not looked for in the view (a column name, a number).
SECRET_MIN_CHARS = 16


@dataclass(frozen=True)
class CheckResult:
    """One clause of the contract: whether it holds, one line of evidence, and its time."""

    name: str
    ok: bool
    detail: str
    seconds: float


def check_domain(name: str, *, per_family: int = 2, seed: int = 0) -> list[CheckResult]:
    """Check the contract on domain ``name``, ``per_family`` tasks of each family (seeds from
    ``seed``). An unknown name is a :class:`~referee.errors.ConfigError`."""
    record = domain_record(name)
    results = [_timed("loads", lambda: _loads(record))]
    if not record.ok:
        return results
    tasks: list[Task] = []

    def generate() -> tuple[bool, str]:
        families = record.parts.get("family", [])
        for family in families:
            tasks.extend(generate_family(family, count=per_family, seed=seed))
        return bool(tasks), f"{len(tasks)} tasks of {len(families)} families"

    made = _timed("tasks made", generate)
    results.append(made)
    if not made.ok:
        return results
    results += [
        _timed("gold passes", lambda: _gold(tasks)),
        _timed("empty fails", lambda: _empty(tasks)),
        _timed("exploits held", lambda: _corpus(name)),
        _timed("hidden not in view", lambda: _view(tasks)),
    ]
    return results


def _timed(name: str, check: Callable[[], tuple[bool, str]]) -> CheckResult:
    start = time.perf_counter()
    try:
        ok, detail = check()
    except Exception as e:  # a check that raises fails, with the reason: one line
        ok, detail = False, " ".join(f"{type(e).__name__}: {e}".split())[:300]
    return CheckResult(name, ok, detail, time.perf_counter() - start)


def _loads(record: DomainRecord) -> tuple[bool, str]:
    if record.error:
        return False, record.error
    return True, f"{record.distribution} {record.version} ({record.target})"


def _judge(pairs: list[tuple[Task, str]]) -> list[Any]:
    from referee.verify.dispatch import VerifierSet

    with VerifierSet() as verifiers:
        return list(verifiers.verify_many(pairs, workers=2))


def _gold(tasks: list[Task]) -> tuple[bool, str]:
    from referee.verify.samples import gold_samples

    by_id = {t.id: t for t in tasks}
    pairs = [(by_id[s["task_id"]], s["completion"]) for s in gold_samples(tasks)]
    if not pairs:
        return False, "no task has a reference answer (hidden['reference'])"
    verdicts = _judge(pairs)
    bad = [f"{v.task_id}: {v.infra_error or f'reward {v.reward:.2f}'}" for v in verdicts]
    bad = [b for b, v in zip(bad, verdicts, strict=True) if not v.passed]
    missing = len(tasks) - len(pairs)
    note = f"; {missing} without a reference" if missing else ""
    if bad:
        return False, f"{len(bad)}/{len(pairs)} failed: {bad[0]}{note}"
    return missing == 0, f"{len(pairs)}/{len(pairs)} passed{note}"


def _empty(tasks: list[Task]) -> tuple[bool, str]:
    verdicts = _judge([(t, "") for t in tasks])
    bad = [v for v in verdicts if v.passed or v.reward > 0 or v.infra_error]
    if bad:
        v = bad[0]
        why = v.infra_error or f"passed={v.passed}, reward {v.reward:.2f}"
        return False, f"{len(bad)}/{len(tasks)} not failed cleanly: {v.task_id}: {why}"
    return True, f"{len(tasks)}/{len(tasks)} failed with reward 0"


def _corpus(name: str) -> tuple[bool, str]:
    if name not in corpus_names():
        return False, f"no red-team corpus registered for {name!r} (register_corpus)"
    outcomes = run_corpus(name)
    if not outcomes:
        return False, "the corpus has no exploits"
    through = [o.name for o in outcomes if not o.held]
    if through:
        return False, f"{len(through)}/{len(outcomes)} got through: {', '.join(through[:5])}"
    return True, f"{len(outcomes)}/{len(outcomes)} held"


def _view(tasks: list[Task]) -> tuple[bool, str]:
    leaks: list[str] = []
    for task in tasks:
        leaks += [f"{task.id}: {leak}" for leak in hidden_in_view(task, _model_view(task))]
    if leaks:
        return False, f"{len(leaks)} leaks: {leaks[0]}"
    return True, f"{len(tasks)} tasks' prompts and environments clean"


def _model_view(task: Task) -> str:
    """What the model is shown of ``task``: its prompt, and the first messages and tools of the
    environment its kind names (if one is registered)."""
    from referee.envs.base import SyncEnvironment
    from referee.envs.registry import env_names, make_env

    shown: list[Any] = [m.model_dump() for m in task.prompt]
    if task.kind.value in env_names():
        with SyncEnvironment(make_env(task.kind.value)) as env:
            shown += [env.reset(task), env.tools()]
    return "\n".join(text for _, text in _strings(shown, ""))


def hidden_in_view(task: Task, view: str) -> list[str]:
    """What of ``task.hidden`` appears in ``view``, each cut to 60 characters: its reference
    (``reference``, ``reference_patch``), and its other strings and their lines at least
    :data:`SECRET_MIN_CHARS` long that neither the payload nor the prompt states (a path the
    task names, a subject its goal asks for: those are the task, not a leak).

    >>> t = Task.create(name="d/x-v1", prompt="p", hidden={"reference": "return a + b  # x"})
    >>> hidden_in_view(t, "...return a + b  # x..."), hidden_in_view(t, "return a + b")
    (['reference: return a + b  # x'], [])
    """
    stated = [task.payload, [m.content for m in task.prompt]]
    public = "\n".join(text for _, text in _strings(stated, ""))
    found = []
    for key in ("reference", "reference_patch"):
        ref = task.hidden.get(key)
        if isinstance(ref, str) and len(ref.strip()) >= SECRET_MIN_CHARS and ref.strip() in view:
            found.append(f"{key}: {ref.strip()[:60]}")
    for where, text in _strings(task.hidden, ""):
        if where in ("reference", "reference_patch"):
            continue
        for secret in dict.fromkeys([text.strip(), *(line.strip() for line in text.splitlines())]):
            if len(secret) >= SECRET_MIN_CHARS and secret not in public and secret in view:
                found.append(f"{where}: {secret[:60]}")
                break
    return found


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
