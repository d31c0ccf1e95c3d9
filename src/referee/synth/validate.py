"""Validation: keep a candidate only if its starting state is a real, stable, testable task.

For every candidate, only the stable tests that execute the changed statement run (from the
baseline's line coverage, per test); the other tests of the changed function cannot observe the
change and join PASS_TO_PASS unrun. Where a changed line also ran at import time, every test of
the function runs instead. Never the whole suite. Kept only if all hold:

* the change is not a duplicate (normalised diff hash) and not equivalent (same AST: filtered
  when candidates are made; different behaviour: at least one test fails);
* the starting state fails at least one selected test (FAIL_TO_PASS) and the others pass
  (PASS_TO_PASS); the reference passes them all (the baseline's two runs);
* a second run of the state with exactly the tests the verifier will run: FAIL_TO_PASS fail
  again (not flaky; the reference's side is the baseline's two runs), PASS_TO_PASS pass (those
  that do not are dropped), and no test timed out;
* a stub patch (the changed functions' bodies replaced by ``raise NotImplementedError``) still
  fails a FAIL_TO_PASS test, as the empty patch does by construction.

Refactoring candidates (kind ``refactor``) preserve behaviour, so they have no FAIL_TO_PASS:
kept only if every function the inverse refactoring changed is run by a stable test, the
structural predicate (``extra["structure"]``, checked on the host) holds on the reference and
not on the starting state, and every selected test passes on the starting state (all of them
become PASS_TO_PASS).

Runs are batched: one sandbox run validates up to ``batch`` candidates (pytest imported once,
a fork per candidate state; see ``run_variants``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from referee.sandbox import Sandbox
from referee.synth.baseline import Baseline
from referee.synth.candidates import Candidate, stub_function
from referee.synth.repo import Repository
from referee.verify.repo_run import Variant, VariantRun, run_variants
from referee.verify.structure import check_structure

__all__ = ["Validated", "ValidationReport", "validate"]


@dataclass
class Validated:
    candidate: Candidate
    f2p: list[str]
    p2p: list[str]
    reports: dict[str, str]  # FAIL_TO_PASS test -> tail of its failure report


@dataclass
class ValidationReport:
    kept: list[Validated] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    test_time_s: float = 0.0  # wall time of the sandbox runs of validation
    runs: int = 0
    variants: int = 0  # repository states run (each candidate: first run, rerun, stub)
    timeout_s: float = 0.0  # of test_time_s, spent on states that hit their timeout
    p2p_dropped: int = 0  # PASS_TO_PASS candidates that failed in the final composition
    timeouts: int = 0
    #: Where the timed-out states were stopped: "collection", "a test's budget", "deadline".
    timeouts_where: Counter[str] = field(default_factory=Counter)
    candidates: int = 0

    def record_timeout(self, run: VariantRun) -> None:
        self.rejected["timeout"] += 1
        self.timeout_s += run.wall_s
        self.timeouts += 1
        where = run.timed_out_in
        self.timeouts_where[
            "collection" if where == "collection" else "a test's budget" if where else "deadline"
        ] += 1


def _timeout(baseline: Baseline, tests: list[str]) -> float:
    # Runs fork a warm pytest, so the budget is the tests' own time (from the baseline) with a
    # wide margin, plus a floor for collection. A mutant that loops forever costs this much.
    return 2.0 + 3.0 * sum(baseline.durations.get(t, 0.1) for t in tests)


def _collect_budget(baseline: Baseline) -> float:
    # A forked child imports the changed module and collects its tests' files; the whole suite's
    # collection (measured on the reference, cold) bounds that, with a wide margin for a noisy
    # machine and for the first child of a batch, which also writes the bytecode caches.
    return 1.5 + 3.0 * baseline.collect_s


class _Runner:
    def __init__(self, sandbox: Sandbox, repo: Repository, report: ValidationReport, batch: int):
        self.sandbox, self.repo, self.report, self.batch = sandbox, repo, report, batch

    def run(self, variants: list[Variant]) -> dict[str, VariantRun]:
        out: dict[str, VariantRun] = {}
        for i in range(0, len(variants), self.batch):
            chunk = variants[i : i + self.batch]
            t0 = time.perf_counter()
            got, _ = run_variants(
                self.sandbox,
                self.repo.files,
                chunk,
                source_roots=self.repo.source_roots,
                conftests=list(self.repo.conftests),
            )
            self.report.test_time_s += time.perf_counter() - t0
            self.report.runs += 1
            self.report.variants += len(chunk)
            out.update(got)
        return out


def validate(
    sandbox: Sandbox,
    repo: Repository,
    baseline: Baseline,
    candidates: list[Candidate],
    *,
    batch: int = 40,
    report: ValidationReport | None = None,
) -> ValidationReport:
    report = report or ValidationReport()
    runner = _Runner(sandbox, repo, report, batch)
    report.candidates += len(candidates)
    seen: set[str] = set()
    todo: list[Candidate] = []
    for c in candidates:
        key = c.diff_key(repo.text(c.path))
        if key in seen:
            report.rejected["duplicate"] += 1
        elif not c.selected:
            report.rejected["no covering test"] += 1
        else:
            seen.add(key)
            todo.append(c)

    def variant(
        c: Candidate, tag: str, files: dict[str, str], ids: list[str], first: bool = False
    ) -> Variant:
        return Variant(
            id=f"{tag}|{c.id}",
            files=files,
            ids=ids,
            timeout_s=_timeout(baseline, ids),
            first_failure=first,
            budgets={t: 1.0 + 10.0 * baseline.durations.get(t, 0.1) for t in ids},
            collect_budget_s=_collect_budget(baseline),
        )  # fmt: skip

    preserving = [c for c in todo if c.kind == "refactor"]
    todo = [c for c in todo if c.kind != "refactor"]
    _validate_preserving(repo, baseline, runner, preserving, variant, report)
    first = runner.run([variant(c, "a", c.broken, c.selected) for c in todo])
    screened: list[tuple[Candidate, list[str], list[str]]] = []
    for c in todo:
        run = first.get(f"a|{c.id}")
        if run is None:
            report.rejected["infrastructure failure"] += 1
            continue
        if run.timed_out or any(run.status(t) == "timeout" for t in c.selected):
            report.record_timeout(run)
            continue
        f2p = [t for t in c.selected if run.status(t) != "passed"]
        p2p = [t for t in c.selected if run.status(t) == "passed"]
        if not f2p:
            report.rejected["no failing test (equivalent or untested)"] += 1
            continue
        screened.append((c, f2p, p2p))

    # Second pass, run exactly as the verifier will run the task: FAIL_TO_PASS and every
    # PASS_TO_PASS candidate together (the tests that passed, and the function's tests that
    # never reach the changed statement). FAIL_TO_PASS must fail again (not flaky; the
    # reference's side is the baseline's two runs); a PASS_TO_PASS candidate that does not pass
    # here (tests share a process: an earlier failing test can leave state behind) is dropped.
    # Then the stub patch, stopping at its first failure.
    second_variants = []
    for c, f2p, _ in screened:
        # The verifier's order: FAIL_TO_PASS, then PASS_TO_PASS sorted.
        final = [*f2p, *sorted({*c.selected, *c.implicit_p2p} - set(f2p))]
        second_variants.append(variant(c, "b", c.broken, final))
        stub = dict(c.broken)
        for key in c.functions:
            qual = key.split("::", 1)[1]
            stubbed = stub_function(stub[c.path], qual, "stub")
            if stubbed is not None:
                stub[c.path] = stubbed
        second_variants.append(variant(c, "s", stub, f2p, first=True))
    second = runner.run(second_variants)
    for c, f2p, p2p in screened:
        again, stub_run = second.get(f"b|{c.id}"), second.get(f"s|{c.id}")
        if again is None or stub_run is None:
            report.rejected["infrastructure failure"] += 1
            continue
        if again.timed_out:
            report.record_timeout(again)
            continue
        if any(again.status(t) == "passed" for t in f2p):
            report.rejected["flaky"] += 1
            continue
        # The stub run stops at its first failure: a test never reached counts as not passed,
        # so the stub "passes" only when every FAIL_TO_PASS test ran and passed.
        if all(stub_run.status(t) == "passed" for t in f2p):
            report.rejected["a stub patch passes"] += 1
            continue
        results = first[f"a|{c.id}"].results
        reports = {t: results[t].report for t in f2p if t in results}
        candidates_p2p = sorted({*p2p, *c.implicit_p2p})
        kept_p2p = [t for t in candidates_p2p if again.status(t) == "passed"]
        report.p2p_dropped += len(candidates_p2p) - len(kept_p2p)
        report.kept.append(Validated(c, f2p, kept_p2p, reports))
    return report


def _validate_preserving(
    repo: Repository,
    baseline: Baseline,
    runner: _Runner,
    candidates: list[Candidate],
    variant: Callable[[Candidate, str, dict[str, str], list[str]], Variant],
    report: ValidationReport,
) -> None:
    """Refactoring candidates: every function the inverse refactoring changed is run by a test
    (else deleting its code would go unnoticed), the predicate tells the reference from the
    starting state, and every selected test passes on the starting state (behaviour kept)."""
    todo = []
    for c in candidates:
        spec = c.extra["structure"]
        assert isinstance(spec, dict)
        path, rules = spec["path"], spec["rules"]
        changed = c.extra.get("callers", [])
        assert isinstance(changed, list)
        if not all(baseline.covering(f"{path}::{q}") for q in changed):
            report.rejected["refactor: a changed function no test runs"] += 1
        elif not all(r.ok for r in check_structure(repo.text(path), rules)):
            report.rejected["refactor: the predicate fails on the reference"] += 1
        elif all(r.ok for r in check_structure(c.broken.get(path, repo.text(path)), rules)):
            report.rejected["refactor: the predicate holds on the starting state"] += 1
        else:
            todo.append(c)
    runs = runner.run([variant(c, "r", c.broken, c.selected) for c in todo])
    for c in todo:
        run = runs.get(f"r|{c.id}")
        if run is None:
            report.rejected["infrastructure failure"] += 1
        elif run.timed_out or any(run.status(t) == "timeout" for t in c.selected):
            report.record_timeout(run)
        elif any(run.status(t) != "passed" for t in c.selected):
            report.rejected["refactor: a test fails on the starting state"] += 1
        else:
            report.kept.append(Validated(c, [], list(c.selected), {}))
