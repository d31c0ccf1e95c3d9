"""The SQL verifier: the candidate's query on hidden databases, in the sandbox; rows judged here.

1. The query is taken from the answer (:func:`~referee.domains.sql.answer.query_of`) and
   scanned for suspicious constructs (flags: evidence, not the verdict).
2. Each hidden instance becomes an engine file on the host (:func:`database_file`); copies go
   into a fresh sandbox workspace only now, at verification time. The expected results never
   enter the sandbox.
3. The grader's runner (:mod:`.sandbox_runner`, preloaded in the sandbox's fork server) opens
   each copy read-only with writes, ATTACH, files, extensions and other tables shut off, runs
   the query under a per-database deadline and reports the rows as JSON frames; the sandbox
   kills the whole run if it overstays.
4. On the host, :func:`same_columns` compares each instance's columns with the reference's
   (their number always, even when both results are empty; their types where the engine reports
   them: DuckDB), and :func:`same_result` the rows (multiset, or in order when the question asks
   for one; numbers within a tolerance). A query that reads none of the task's tables fails
   (and is flagged ``constant-query``): its answer cannot depend on the data it is asked about,
   so it can only have been guessed or copied (``SELECT 2`` on a count whose hidden answers
   agree).

The reward is all or nothing: 1 when every hidden instance matches, else 0. A share would pay
a wrong query for the instances where it happens to agree (an empty group, a filter that
removes nothing), and a query hard-coding the sample's answer for the instances whose answer
happens to be the sample's. Per-instance outcomes are in ``tests``.

>>> with SqlVerifier() as v:                                            # doctest: +SKIP
...     v.verify(task, "SELECT name FROM customers ORDER BY name").reward
1.0
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from typing import Any

from referee.domains.kit import SandboxedVerifier, runner_sandbox, runner_source
from referee.domains.sql.answer import MAX_QUERY_CHARS, query_of, scan_query
from referee.domains.sql.compare import same_columns, same_result
from referee.domains.sql.database import database_file
from referee.domains.sql.spec import SqlSpec
from referee.errors import RefereeError, TaskError
from referee.optional import installed
from referee.sandbox import ExecResult, Sandbox
from referee.sandbox.cputime import cpu_limits, judged_run, stalls_outcome
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSetup
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict, metered_verdict

__all__ = [
    "RUNNER_MODULE",
    "RunOutcome",
    "SqlVerifier",
    "make_verifier",
    "run_query",
    "sql_sandbox",
]

VERSION = "sql@1"
RUNNER_MODULE = "referee_sql_runner"
_RUNNER_SOURCE = runner_source("referee.domains.sql", "sandbox_runner.py")
#: At most this many rows a result; more is a failure (a cross join's output, say).
MAX_ROWS = 10_000
MAX_BYTES = 2 << 20
_EXT = {"sqlite": "sqlite", "duckdb": "duckdb"}


def sql_sandbox(**kwargs: Any) -> Sandbox:
    """A sandbox whose fork-server workers have the query runner (and DuckDB) preloaded."""
    packages = tuple(kwargs.pop("python_packages", ()))
    kwargs.setdefault("python_workers", 2)
    # DuckDB's extension module where referee[sql] is installed; SQLite tasks need nothing more.
    duck = ("_duckdb",) if installed("_duckdb") else ()
    return runner_sandbox(
        {RUNNER_MODULE: _RUNNER_SOURCE}, python_packages=(*packages, *duck), **kwargs
    )


RunOutcome = dict[str, Any]


def _frames(r: ExecResult, nonce: str, n: int) -> list[RunOutcome | None]:
    outcomes: list[RunOutcome | None] = [None] * n
    prefix = nonce + " "
    for line in r.stdout.split("\n"):
        at = line.find(prefix)  # a frame starts anywhere on its line (after stray output)
        if at < 0:
            continue
        try:
            frame = json.loads(line[at + len(prefix) :])
        except ValueError:
            continue
        i = frame.get("i") if isinstance(frame, dict) else None
        if isinstance(i, int) and 0 <= i < len(outcomes) and outcomes[i] is None:
            outcomes[i] = frame
    return outcomes


def _stalls(outcomes: list[RunOutcome | None]) -> list[tuple[float, float, float | None]]:
    """``(cpu, wall, wait)`` of the queries their wall-clock backstop ended."""
    out = []
    for o in outcomes:
        st = o.get("stalled") if o is not None else None
        if isinstance(st, list) and len(st) == 3:
            cpu, wall, wait = st
            if isinstance(cpu, (int, float)) and isinstance(wall, (int, float)):
                out.append((float(cpu), float(wall), float(wait) if wait is not None else None))
    return out


def run_query(
    sandbox: Sandbox,
    engine: str,
    query: str,
    databases: list[bytes],
    tables: tuple[str, ...] | list[str],
    *,
    time_limit_s: float,
    memory_mb: int = 256,
    max_rows: int = MAX_ROWS,
) -> tuple[list[RunOutcome | None], ExecResult]:
    """Run ``query`` in ``sandbox`` on each database (engine files' bytes); one outcome each
    (``{"columns", "rows"}``, ``{"error"}``, ``{"timeout"}``, ``{"infra"}``), None where the
    run ended before reporting it. The :class:`ExecResult` says how the run ended."""
    nonce = secrets.token_hex(8)
    names = [f"db{i}.{_EXT[engine]}" for i in range(len(databases))]
    request = {
        "engine": engine,
        "query": query,
        "databases": names,
        "tables": list(tables),
        "timeout_s": time_limit_s,
        "memory_mb": memory_mb,
        "max_rows": max_rows,
        "max_bytes": MAX_BYTES,
        "nonce": nonce,
    }
    # The request crosses as a JSON string literal: nothing of the query is evaluated as code.
    program = (
        f"import json, {RUNNER_MODULE} as R\nR.run(json.loads({json.dumps(json.dumps(request))}))\n"
    )
    # Each query's limit is on CPU time, with a wall-clock backstop (the runner's), and so is
    # the run's (referee.sandbox.cputime): a loaded machine slows a query, never fails it.
    budget = len(databases) * (time_limit_s + 1.0) + 3.0
    limits = cpu_limits(
        budget,
        memory_mb=memory_mb + 384,
        max_processes=64,
        stdout_bytes=len(databases) * MAX_BYTES + 4096,
    )
    run = functools.partial(
        sandbox.run_python,
        program,
        name="run_query.py",
        files=dict(zip(names, databases, strict=True)),
        limits=limits,
    )
    r, spent = judged_run(
        run, budget, stalled=lambda r: stalls_outcome(_stalls(_frames(r, nonce, len(databases))))
    )
    if spent in ("time-limit", "idle") and not r.timed_out:
        r = r.model_copy(update={"timed_out": True})
    outcomes = _frames(r, nonce, len(databases))
    return outcomes, r


class SqlVerifier(SandboxedVerifier):
    """Judges answers to SQL tasks (:class:`~referee.tasks.kinds.TaskKind.SQL`).

    ``sandbox`` must come from :func:`sql_sandbox` (made, and closed with the verifier, when not
    given). ``memory_mb`` bounds the engine's working memory per query.
    """

    name = "sql"

    def __init__(self, sandbox: Sandbox | None = None, *, memory_mb: int = 256) -> None:
        super().__init__(sandbox, sql_sandbox)
        if RUNNER_MODULE not in getattr(self.sandbox, "preload", {}):
            raise TaskError("SqlVerifier needs a sandbox made by referee.domains.sql.sql_sandbox")
        self.memory_mb = memory_mb

    def verify(self, task: Task, answer: str) -> Verdict:
        """The verdict on ``answer``; never raises (a fault of the grader is an infra error)."""
        return metered_verdict(task.id, VERSION, lambda: self._verify(task, answer))

    def _verify(self, task: Task, answer: str) -> Verdict:
        t0 = time.perf_counter()
        try:
            spec = SqlSpec.of_task(task)
        except TaskError as e:
            return Verdict.infra(task.id, str(e), VERSION)
        query = query_of(answer)
        names = [f"instance {i}" for i in range(len(spec.instances))]
        if not query or len(query) > MAX_QUERY_CHARS:
            why = "no query in the answer" if not query else f"longer than {MAX_QUERY_CHARS} chars"
            status: TestStatus = "missing" if not query else "failed"
            return self._verdict(
                task, [TestOutcome(name=n, status=status, detail=why) for n in names], [], t0
            )
        flags = scan_query(query)
        files = [database_file(db, spec.engine) for db in spec.instances]
        try:
            outcomes, r = run_query(
                self.sandbox,
                spec.engine,
                query,
                files,
                spec.tables,
                time_limit_s=spec.time_limit_s,
                memory_mb=self.memory_mb,
            )
        except RefereeError as e:
            return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
        if "supervisor-lost" in r.violations:
            return Verdict.infra(task.id, "the sandbox's worker was lost during the run", VERSION)
        tests = []
        for name, out, exp in zip(names, outcomes, spec.expected, strict=True):
            if out is not None and "infra" in out:
                return Verdict.infra(task.id, f"query runner: {out['infra']}", VERSION)
            tests.append(self._judge(name, out, exp, spec, r))
        if any(out is not None and out.get("reads") is False for out in outcomes):
            flags.append(Flag(kind="constant-query", evidence=query[:80]))
        return self._verdict(task, tests, flags, t0, run_s=r.wall_s)

    @staticmethod
    def _judge(
        name: str, out: RunOutcome | None, expected: dict[str, Any], spec: SqlSpec, r: ExecResult
    ) -> TestOutcome:
        if out is None:
            if r.timed_out:
                return TestOutcome(
                    name=name, status="timeout", detail="the run was killed at its deadline"
                )
            why = "memory limit exceeded" if r.memory_exceeded else r.summary()
            return TestOutcome(name=name, status="missing", detail=f"no result ({why})")
        if out.get("skipped"):
            return TestOutcome(name=name, status="skipped", detail="not run: an earlier one failed")
        if out.get("timeout"):
            return TestOutcome(
                name=name, status="timeout", detail=f"query ran past {spec.time_limit_s:g}s"
            )
        if "error" in out:
            return TestOutcome(name=name, status="error", detail=str(out["error"])[:300])
        rows = out.get("rows")
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            return TestOutcome(name=name, status="failed", detail="malformed result")
        if out.get("reads") is False:
            return TestOutcome(
                name=name, status="failed", detail="the query reads none of the task's tables"
            )
        got_columns, want_columns = out.get("columns"), expected.get("columns")
        if isinstance(got_columns, list) and isinstance(want_columns, list):
            ok, why = same_columns(
                got_columns, want_columns, out.get("types"), expected.get("types")
            )
            if not ok:
                return TestOutcome(name=name, status="failed", detail=why)
        if spec.column_names_matter:
            got = [str(c).lower() for c in out.get("columns") or []]
            want = [str(c).lower() for c in expected.get("columns") or []]
            if got != want:
                return TestOutcome(
                    name=name, status="failed", detail=f"columns named {got}, expected {want}"
                )
        ok, why = same_result(rows, expected["rows"], ordered=spec.order_matters)
        return TestOutcome(name=name, status="passed" if ok else "failed", detail=why)

    @staticmethod
    def _verdict(
        task: Task, tests: list[TestOutcome], flags: list[Flag], t0: float, run_s: float = 0.0
    ) -> Verdict:
        passed = bool(tests) and all(t.status == "passed" for t in tests)
        return Verdict(
            task_id=task.id,
            reward=1.0 if passed else 0.0,
            passed=passed,
            tests=tests,
            flags=flags,
            timings={"run_s": run_s, "total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )


def make_verifier(setup: VerifierSetup) -> SqlVerifier:
    """The dispatch registry's factory: a verifier with its own sandbox (the query runner and
    DuckDB preloaded; the set's sandbox has neither)."""
    return SqlVerifier()
