"""Test-writing tasks: a function's tests removed; new tests are scored by the mutants they kill.

For a function ``f`` with validated bug-fix mutants, "its tests" are the stable tests of one test
file whose name names it (``test_groupby*`` for ``groupby``). They are removed from the file
(the starting state) and kept as the reference. The hidden mutants are the validated mutants of
``f`` that the removed tests kill *and the rest of the file does not*: the reference scores 1 and
the starting state (an empty answer) 0 by construction, both checked in the sandbox; a task
needs at least two such mutants. An *equivalent variant* of the original (a no-op statement
added to ``f``: other source text, line numbers and bytecode, same behaviour) is also hidden:
tests must pass on it too, which defeats tests that fingerprint the source instead of checking
behaviour.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass

import libcst as cst

from referee.sandbox import Sandbox
from referee.synth.baseline import Baseline
from referee.synth.build import GENERATOR_VERSION, RepoRef, short_hash, slug, unified_diff
from referee.synth.functions import ScopedTransformer, is_docstring
from referee.synth.validate import Validated, ValidationReport
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Difficulty, Provenance, Task
from referee.tasks.split import assign_split
from referee.verify.repo_run import Variant, run_variants

__all__ = ["equivalent_variant", "remove_tests", "testgen_tasks"]

MIN_MUTANTS = 2


@dataclass(frozen=True)
class _Plan:
    """A test-writing task before its last checks: the function, its tests and its mutants."""

    key: str  # path::Qualified.name
    test_file: str
    removed: list[str]
    killers: list[Validated]
    stripped: str  # the test file without the removed tests
    equivalent: str  # the function's module with the behaviour-preserving change


class _Remove(ScopedTransformer):
    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names, self.removed = names, 0

    def on_function(
        self, qual: str, node: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        if qual in self.names:
            self.removed += 1
            return cst.RemoveFromParent()
        return node


def remove_tests(source: str, nodeids: list[str]) -> str | None:
    """``source`` without the test functions of ``nodeids``; None if one was not found."""
    names = {".".join(n.split("::", 1)[1].split("[", 1)[0].split("::")) for n in nodeids}
    t = _Remove(names)
    out = cst.parse_module(source).visit(t).code
    return out if t.removed == len(names) else None


class _Equivalent(ScopedTransformer):
    def __init__(self, qual: str) -> None:
        super().__init__()
        self.target, self.done = qual, False

    def on_function(self, qual: str, node: cst.FunctionDef) -> cst.FunctionDef:
        if qual != self.target or not isinstance(node.body, cst.IndentedBlock):
            return node
        body = list(node.body.body)
        at = 1 if body and is_docstring(body[0]) else 0
        noop = cst.parse_statement("_referee_equivalent = None  # behaves the same\n")
        self.done = True
        return node.with_changes(body=node.body.with_changes(body=[*body[:at], noop, *body[at:]]))


def equivalent_variant(source: str, qual: str) -> str | None:
    t = _Equivalent(qual)
    out = cst.parse_module(source).visit(t).code
    return out if t.done else None


def _own_tests(function_key: str, covering: list[str]) -> tuple[str, list[str]] | None:
    """The test file and tests that name the function, from those covering it."""
    short = function_key.split("::", 1)[1].rsplit(".", 1)[-1].strip("_").lower()
    if len(short) < 3:
        return None
    by_file: dict[str, list[str]] = {}
    for t in covering:
        leaf = t.rsplit("::", 1)[-1].split("[", 1)[0].lower()
        if leaf.startswith("test") and short in leaf:
            by_file.setdefault(t.split("::", 1)[0], []).append(t)
    if not by_file:
        return None
    path = max(sorted(by_file), key=lambda p: len(by_file[p]))
    return path, by_file[path]


def testgen_tasks(
    sandbox: Sandbox,
    ref: RepoRef,
    baseline: Baseline,
    singles: list[Validated],
    *,
    seed: int,
    heldout_fraction: float,
    split_by: str,
    validation: ValidationReport,
    limit: int | None = None,
) -> tuple[list[Task], int, Counter[str]]:
    """Returns (tasks, candidates considered, rejections by reason); ``limit`` caps the
    functions whose tests are validated (the candidates)."""
    repo = ref.repo
    rejected: Counter[str] = Counter()
    by_function: dict[str, list[Validated]] = {}
    for v in singles:
        by_function.setdefault(v.candidate.functions[0], []).append(v)
    plans: list[_Plan] = []
    considered = 0
    for key, mutants in sorted(by_function.items()):
        if limit is not None and len(plans) >= limit:
            break
        considered += 1
        own = _own_tests(key, baseline.covering(key))
        if own is None:
            rejected["no test names the function"] += 1
            continue
        test_file, removed = own
        killers = [m for m in mutants if set(m.f2p) & set(removed)]
        if len(killers) < MIN_MUTANTS:
            rejected[f"fewer than {MIN_MUTANTS} mutants killed by its tests"] += 1
            continue
        stripped = remove_tests(repo.text(test_file), removed)
        path, qual = key.split("::", 1)
        equivalent = equivalent_variant(repo.text(path), qual)
        if stripped is None or equivalent is None:
            rejected["tests or function could not be rewritten"] += 1
            continue
        plans.append(_Plan(key, test_file, removed, killers, stripped, equivalent))
    # The reference tests must pass on the equivalent variant; the rest of the file, without
    # them, must still pass on the original; and each mutant counts only if the rest of the file
    # lets it through (otherwise an empty answer would already be rewarded for it).
    variants = []
    for plan in plans:
        path = plan.key.split("::", 1)[0]
        variants.append(
            Variant(id=f"eq|{plan.key}", files={path: plan.equivalent}, ids=plan.removed)
        )
        variants.append(
            Variant(
                id=f"rest|{plan.key}", files={plan.test_file: plan.stripped}, ids=[plan.test_file]
            )
        )
        for m in plan.killers:
            files = {m.candidate.path: m.candidate.broken[m.candidate.path]}
            variants.append(
                Variant(
                    id=f"m|{plan.key}|{m.candidate.id}",
                    files={**files, plan.test_file: plan.stripped},
                    ids=[plan.test_file],
                    first_failure=True,
                )
            )
    t0 = time.perf_counter()
    got, _ = (
        run_variants(
            sandbox,
            repo.files,
            variants,
            source_roots=repo.source_roots,
            conftests=list(repo.conftests),
        )
        if variants
        else ({}, None)
    )
    validation.test_time_s += time.perf_counter() - t0
    validation.runs += 1 if variants else 0
    validation.variants += len(variants)
    tasks = []
    for plan in plans:
        eq, rest = got.get(f"eq|{plan.key}"), got.get(f"rest|{plan.key}")
        if eq is None or rest is None:
            rejected["infrastructure failure"] += 1
            continue
        if not all(eq.status(t) == "passed" for t in plan.removed):
            rejected["reference fails on the equivalent variant"] += 1
            continue
        if any(r.status != "passed" for t, r in rest.results.items() if t not in baseline.excluded):
            rejected["remaining tests fail without the removed ones"] += 1
            continue
        ignored = sorted(t for t in baseline.excluded if t.startswith(plan.test_file + "::"))
        survivors = []
        for m in plan.killers:
            run = got.get(f"m|{plan.key}|{m.candidate.id}")
            if run is None or run.timed_out:
                continue  # unknown: not a mutant an empty answer is known to let through
            caught = any(
                r.status != "passed" for t, r in run.results.items() if t not in baseline.excluded
            )
            if not caught and run.results:
                survivors.append(m)
        if len(survivors) < MIN_MUTANTS:
            rejected[f"fewer than {MIN_MUTANTS} mutants left uncaught by the rest of the file"] += 1
            continue
        plan = dataclasses.replace(plan, killers=survivors)
        tasks.append(_task(ref, plan, ignored, seed, heldout_fraction, split_by))
    return tasks, considered, rejected


def _task(
    ref: RepoRef, plan: _Plan, ignored: list[str], seed: int, fraction: float, split_by: str
) -> Task:
    repo = ref.repo
    key, test_file, removed, killers = plan.key, plan.test_file, plan.removed, plan.killers
    stripped, equivalent = plan.stripped, plan.equivalent
    path, qual = key.split("::", 1)
    prompt = (
        f"The repository {repo.label} is in your workspace. The function `{qual}` in `{path}` "
        f"has lost its tests. Write tests for it in `{test_file}`. They must pass on the "
        "current code, and they are scored by how many plausible bugs in the function they "
        "catch, so test its behaviour thoroughly (edge cases included); do not inspect its "
        "source. Answer with a unified diff (as `git diff` prints it) that adds the tests; "
        "changes to other files are ignored."
    )
    unit = f"{repo.name}:{path if split_by == 'module' else key}"
    original_tests = repo.text(test_file)
    feats = {"mutants": float(len(killers)), "removed_tests": float(len(removed))}
    return Task.create(
        name=f"synth/{slug(repo.name)}/testgen-{slug(key.replace('::', '.'))[:60]}"
        f"-{short_hash(key)}-v{GENERATOR_VERSION}",
        prompt=prompt,
        kind=TaskKind.TEST_WRITING,
        answer_format="patch",
        payload={"repo": ref.payload(), "overrides": {test_file: stripped}, "kind": "testgen"},
        hidden={
            "function": key,
            "target_test_file": test_file,
            "removed_tests": removed,
            # Tests of the file that fail or skip on the reference (the baseline's exclusions).
            "ignored_tests": ignored,
            "mutants": [
                {
                    "id": m.candidate.id,
                    "path": m.candidate.path,
                    "text": m.candidate.broken[m.candidate.path],
                }
                for m in killers
            ],
            "equivalent": {"path": path, "text": equivalent},
            "reference_patch": unified_diff(test_file, stripped, original_tests),
        },
        difficulty=Difficulty(estimate=min(1.0, 0.3 + 0.05 * len(killers)), features=feats),
        split=assign_split(unit, fraction),
        provenance=Provenance(
            source=repo.origin,
            generator=f"referee.synth.testgen@{GENERATOR_VERSION}",
            seed=seed,
            versions={repo.name: repo.version},
            unit=unit,
        ),
    )
