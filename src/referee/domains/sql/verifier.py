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

import contextlib
import functools
import hashlib
import json
import os
import queue
import secrets
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from referee.domains.kit import SandboxedVerifier, runner_sandbox, runner_source
from referee.domains.sql.answer import MAX_QUERY_CHARS, query_of, scan_query
from referee.domains.sql.compare import same_columns, same_result
from referee.domains.sql.database import database_file
from referee.domains.sql.spec import SqlSpec
from referee.errors import RefereeError, TaskError
from referee.optional import installed
from referee.sandbox import ExecResult, Sandbox
from referee.sandbox.cputime import (
    STRETCH_ENV,
    cpu_limits,
    judged_run,
    stalls_outcome,
    stretched,
)
from referee.sandbox.limits import Limits
from referee.sandbox.resident import Resident
from referee.sandbox.workspace import Workspace
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSetup
from referee.verify.verdict import Flag, TestOutcome, TestStatus, Verdict, metered_verdict

__all__ = [
    "RUNNER_MODULE",
    "WARM_ENV",
    "ResidentRunner",
    "RunOutcome",
    "SqlVerifier",
    "make_verifier",
    "resident_limits",
    "resident_runner",
    "run_query",
    "run_query_resident",
    "sql_sandbox",
]

VERSION = "sql@1"
RUNNER_MODULE = "referee_sql_runner"
_RUNNER_SOURCE = runner_source("referee.domains.sql", "sandbox_runner.py")
#: At most this many rows a result; more is a failure (a cross join's output, say).
MAX_ROWS = 10_000
MAX_BYTES = 2 << 20
_EXT = {"sqlite": "sqlite", "duckdb": "duckdb"}
#: ``REFEREE_SQL_WARM=0`` judges each sample in a fork of its own (the path before issue 32)
#: instead of on a resident runner.
WARM_ENV = "REFEREE_SQL_WARM"
#: A resident runner is started again after this many samples (its heap stays small).
RESIDENT_REQUESTS = 1000
#: A resident runner's CPU seconds over its whole life (the hard RLIMIT_CPU): far above
#: ``RESIDENT_REQUESTS`` samples at their limits, so that no sample's limit is ever cut by it.
RESIDENT_LIFE_CPU_S = 200_000.0
_RESIDENT_SOURCE = f"import {RUNNER_MODULE}\n{RUNNER_MODULE}.serve()\n"
_LEN = struct.Struct(">I")


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
    request = _request(engine, query, names, tables, time_limit_s, memory_mb, max_rows, nonce)
    # The request crosses as a JSON string literal: nothing of the query is evaluated as code.
    program = (
        f"import json, {RUNNER_MODULE} as R\nR.run(json.loads({json.dumps(json.dumps(request))}))\n"
    )
    # Each query's limit is on CPU time, with a wall-clock backstop (the runner's), and so is
    # the run's (referee.sandbox.cputime): a loaded machine slows a query, never fails it.
    budget = _budget(len(databases), time_limit_s)
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


def _request(
    engine: str,
    query: str,
    names: list[str],
    tables: tuple[str, ...] | list[str],
    time_limit_s: float,
    memory_mb: int,
    max_rows: int,
    nonce: str,
) -> dict[str, Any]:
    return {
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


def _budget(n: int, time_limit_s: float) -> float:
    """CPU seconds for a whole sample: every database's limit plus a second, plus three."""
    return n * (time_limit_s + 1.0) + 3.0


def resident_limits(memory_mb: int = 256) -> Limits:
    """The limits of a resident runner's whole life: each sample's memory and processes as on
    the fork path (:func:`run_query`); CPU and wall clock bounded per sample by the runner and
    the host, and here only by the life's cap (:data:`RESIDENT_LIFE_CPU_S`)."""
    return Limits(
        timeout_s=RESIDENT_LIFE_CPU_S * 10,
        cpu_s=RESIDENT_LIFE_CPU_S,
        memory_mb=memory_mb + 384,
        max_processes=64,
    )


def run_query_resident(
    runner: ResidentRunner,
    engine: str,
    query: str,
    databases: list[bytes],
    tables: tuple[str, ...] | list[str],
    *,
    time_limit_s: float,
    memory_mb: int = 256,
    max_rows: int = MAX_ROWS,
) -> tuple[list[RunOutcome | None], ExecResult]:
    """:func:`run_query` on a resident runner (:meth:`Sandbox.resident`, made with
    :func:`resident_limits`): the same outcomes, without a fork per sample.

    ``databases``: for SQLite the engine files' bytes, of which the runner makes a fresh
    in-memory copy per database and sample, each with a fresh connection (where its SQLite
    cannot, it copies the file and opens it read-only, as the fork path does);
    for DuckDB each database's JSON (:meth:`Database.to_json`), from which the runner fills a
    fresh in-memory database per database, attached to its one DuckDB instance (an instance
    costs more to start than a query: RESULTS §38), with no file access at all. The sample's
    CPU limit is the same (its soft RLIMIT_CPU, set by the runner), and so is its wall-clock
    backstop (the host's: past it the runner's worker is killed and replaced). A retry of a
    starved sample stretches both backstops, as on the fork path."""
    nonce = secrets.token_hex(8)
    budget = _budget(len(databases), time_limit_s)
    limits = cpu_limits(budget)
    names = runner.place("json" if engine == "duckdb" else _EXT[engine], databases)

    def run() -> ExecResult:
        wall, env = stretched(limits, None)
        request = _request(engine, query, names, tables, time_limit_s, memory_mb, max_rows, nonce)
        request["cpu_s"] = limits.cpu_seconds
        if env is not None:
            request["stretch"] = float(env[STRETCH_ENV])
        return runner.resident.exchange(json.dumps(request).encode(), timeout_s=wall.timeout_s)

    parsed: list[tuple[str, list[RunOutcome | None]]] = []

    def frames(r: ExecResult) -> list[RunOutcome | None]:
        # The reply is parsed once: the stall check reads the same frames as the verdict.
        if not parsed or parsed[0][0] is not r.stdout:
            parsed[:] = [(r.stdout, _frames(r, nonce, len(databases)))]
        return parsed[0][1]

    r, spent = judged_run(run, budget, stalled=lambda r: stalls_outcome(_stalls(frames(r))))
    if spent in ("time-limit", "idle") and not r.timed_out:
        r = r.model_copy(update={"timed_out": True})
    return frames(r), r


_SPECS_KEPT = 64
#: Engine files a resident runner's workspace keeps (the oldest go first).
RESIDENT_FILES = 256


class ResidentRunner:
    """A resident query runner (:meth:`Sandbox.resident` running the runner's ``serve``, with
    :func:`resident_limits`) and the engine files it keeps in its workspace."""

    def __init__(self, resident: Resident) -> None:
        self.resident = resident
        self._workspace: Workspace | None = None
        self._files: OrderedDict[str, None] = OrderedDict()
        self._names: OrderedDict[int, tuple[bytes, str]] = OrderedDict()

    def _name(self, data: bytes, ext: str) -> str:
        """``data``'s file name, by content; hashed once per bytes object (a task's databases
        are the same objects sample after sample: the verifier keeps them)."""
        hit = self._names.get(id(data))
        if hit is not None and hit[0] is data:  # the entry holds data: its id is its own
            return hit[1]
        name = f"db/{hashlib.sha256(data).hexdigest()[:32]}.{ext}"
        self._names[id(data)] = (data, name)
        while len(self._names) > RESIDENT_FILES:
            self._names.popitem(last=False)
        return name

    def place(self, ext: str, databases: list[bytes]) -> list[str]:
        """The databases (engine files, or JSON: ``ext``) as files in the runner's workspace
        (named by content, written once per worker life, the oldest of more than
        :data:`RESIDENT_FILES` deleted), as paths relative to ``/workspace``. The runner copies
        or reads them for each sample: a file here is only ever read."""
        ws = self.resident.workspace
        if ws is not self._workspace:  # a new worker: nothing of the old one's is there
            self._workspace, self._files = ws, OrderedDict()
        names = []
        for data in databases:
            name = self._name(data, ext)
            if name in self._files and (ws.root / name).exists():
                self._files.move_to_end(name)
            else:
                ws.write({name: data}, mode=0o444)
                self._files[name] = None
                while len(self._files) > RESIDENT_FILES:
                    old, _ = self._files.popitem(last=False)
                    with contextlib.suppress(OSError):
                        (ws.root / old).unlink()
            names.append(name)
        return names


def resident_runner(sandbox: Sandbox, memory_mb: int = 256) -> ResidentRunner:
    """A new resident query runner in ``sandbox`` (one made by :func:`sql_sandbox`), for
    :func:`run_query_resident`; closed with the sandbox or by ``runner.resident.close()``."""
    return ResidentRunner(
        sandbox.resident(
            _RESIDENT_SOURCE,
            limits=resident_limits(memory_mb),
            name="referee_sql_resident.py",
            max_requests=RESIDENT_REQUESTS,
        )
    )


class _Residents:
    """Resident runners for one verifier: one per concurrent verification, up to ``cap``,
    each made when first needed."""

    def __init__(self, sandbox: Sandbox, memory_mb: int, cap: int) -> None:
        self.sandbox = sandbox
        self.memory_mb = memory_mb
        self.cap = max(1, cap)
        self._idle: queue.SimpleQueue[ResidentRunner] = queue.SimpleQueue()
        self._made: list[ResidentRunner] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def held(self) -> Iterator[ResidentRunner]:
        try:
            resident = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                made = None
                if len(self._made) < self.cap:
                    made = resident_runner(self.sandbox, self.memory_mb)
                    self._made.append(made)
            resident = made if made is not None else self._idle.get()
        try:
            yield resident
        finally:
            self._idle.put(resident)

    def made(self) -> list[Resident]:
        with self._lock:
            return [runner.resident for runner in self._made]

    def close(self) -> None:
        with self._lock:
            made, self._made = self._made, []
        for runner in made:
            runner.resident.close()


class SqlVerifier(SandboxedVerifier):
    """Judges answers to SQL tasks (:class:`~referee.tasks.kinds.TaskKind.SQL`).

    ``sandbox`` must come from :func:`sql_sandbox` (made, and closed with the verifier, when not
    given). ``memory_mb`` bounds the engine's working memory per query.
    """

    name = "sql"

    def __init__(
        self, sandbox: Sandbox | None = None, *, memory_mb: int = 256, warm: bool | None = None
    ) -> None:
        super().__init__(sandbox, sql_sandbox)
        if RUNNER_MODULE not in getattr(self.sandbox, "preload", {}):
            raise TaskError("SqlVerifier needs a sandbox made by referee.domains.sql.sql_sandbox")
        self.memory_mb = memory_mb
        if warm is None:
            warm = os.environ.get(WARM_ENV, "1") != "0"
        #: Whether samples are judged on resident runners (else one fork each).
        self.warm = warm and self.sandbox.backend == "bwrap"
        self._residents = _Residents(self.sandbox, memory_mb, self.sandbox.python_workers)
        # The spec and engine files of the tasks judged last: a task (a frozen model) is judged
        # for many samples in a row, and reading its databases costs more than judging one.
        self._specs: OrderedDict[int, tuple[Task, SqlSpec, list[bytes]]] = OrderedDict()
        self._specs_lock = threading.Lock()

    def _spec(self, task: Task) -> tuple[SqlSpec, list[bytes]]:
        """The task's spec, and what its databases travel as: engine files, or on the warm
        path for DuckDB the databases' JSON (the runner fills fresh databases from it)."""
        with self._specs_lock:
            hit = self._specs.get(id(task))
            if hit is not None and hit[0] is task:
                self._specs.move_to_end(id(task))
                return hit[1], hit[2]
        spec = SqlSpec.of_task(task)
        if self.warm and spec.engine == "duckdb":
            data = [json.dumps(db.to_json(), default=str).encode() for db in spec.instances]
        else:
            data = [database_file(db, spec.engine) for db in spec.instances]
        with self._specs_lock:
            self._specs[id(task)] = (task, spec, data)  # the task held: its id stays its own
            while len(self._specs) > _SPECS_KEPT:
                self._specs.popitem(last=False)
        return spec, data

    @property
    def residents(self) -> list[Resident]:
        """The resident runners made so far (one per concurrent verification at most)."""
        return self._residents.made()

    def close(self) -> None:
        self._residents.close()
        super().close()

    def verify(self, task: Task, answer: str) -> Verdict:
        """The verdict on ``answer``; never raises (a fault of the grader is an infra error)."""
        return metered_verdict(task.id, VERSION, lambda: self._verify(task, answer))

    def _verify(self, task: Task, answer: str) -> Verdict:
        t0 = time.perf_counter()
        try:
            spec, data = self._spec(task)
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
        try:
            r = None
            if self.warm:
                with self._residents.held() as resident:
                    outcomes, r = run_query_resident(
                        resident,
                        spec.engine,
                        query,
                        data,
                        spec.tables,
                        time_limit_s=spec.time_limit_s,
                        memory_mb=self.memory_mb,
                    )
                if r.exit_code != 0:
                    # The runner died or overstayed (a limit, an exploit) without its reply:
                    # the sample is judged again on the fork path, whose verdict on a run that
                    # dies is the reference (the queries it finished before dying count).
                    r = None
            if r is None:
                files = [database_file(db, spec.engine) for db in spec.instances]
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
