"""SQL verdicts against their floors (issue 32): SQLite and DuckDB, one sample at a time.

    PYTHONPATH=src:bench python bench/floor_sql.py [--quick] [--costs] [--boundary] [--json OUT]

``rows(quick)`` is the interface of ``bench/floor.py`` (``make bench-floor``): one row per
engine, ``cost_ms`` the median time of ``SqlVerifier().verify(task, answer)`` (the public
verify path, as a user calls it; the same code measures the tree before issue 32 and after)
and ``floor_ms`` the median time of the same work done in-process on the host, with nothing
around it, measured in the same run, interleaved sample by sample:

* **SQLite floor**: for each of the sample's hidden databases, a fresh copy of its engine file
  opened (``sqlite3`` ``deserialize`` of the bytes into ``:memory:``), the reference query run
  and its rows fetched.
* **DuckDB floor**: DuckDB imported and one instance started once; for each hidden database, a
  fresh in-memory database attached to it and filled from the database's rows (the cheapest
  fresh copy measured, ``--costs``), the reference run and its rows fetched, the database
  dropped. ``extra.file_floor_ms`` is the other floor: each engine file opened read-only (a
  DuckDB instance each, what the tree before issue 32 did in the sandbox).

``extra`` also holds ``sandbox_run_ms`` (the median time the verdict says its sandbox run
took: ``timings.run_s``) and ``pipe_round_trip_ms`` (one request and reply with another process
on the host, no sandbox: what any process boundary costs on this machine at this load).

The sample is the task's reference (the gold answer, which must pass: a failed verdict
raises). Each task's first verification is not timed (it starts the verifier's workers).
``verdicts`` digests the verdicts (reward, each test's status) on every task's gold, empty
answer and first three mutants: equal in both trees when the verdicts are.

``--costs`` also prints DuckDB's own costs in isolation (its import, an instance's start, a
file opened read-only, a fresh in-memory database attached to a warm instance and filled with
a database's rows, the query alone): the measurement behind the DuckDB design (RESULTS §38).
``--boundary`` (this tree only) times an exchange with a resident that burns a given CPU time
against the same CPU burnt in this process: on a loaded machine, the wait for a core that
any work handed to another process pays.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.domains.sql.database import Database, database_file
from referee.domains.sql.families import FAMILY_NAMES, make_task
from referee.domains.sql.mutants import mutants
from referee.domains.sql.spec import SqlSpec
from referee.domains.sql.verifier import SqlVerifier
from referee.tasks.model import Task

DIFFICULTY = 0.5


def _tasks(engine: str, n_seeds: int) -> list[Task]:
    # even seeds SQLite, odd seeds DuckDB (families.py)
    first = 0 if engine == "sqlite" else 1
    return [make_task(f, DIFFICULTY, first + 2 * k) for k in range(n_seeds) for f in FAMILY_NAMES]


def _sqlite_floor(spec: SqlSpec, files: list[bytes]) -> float:
    t0 = time.perf_counter()
    for data in files:
        con = sqlite3.connect(":memory:")
        con.deserialize(data)
        con.execute(spec.reference).fetchall()
        con.close()
    return time.perf_counter() - t0


def _duckdb_file_floor(spec: SqlSpec, paths: list[str]) -> float:
    import duckdb

    t0 = time.perf_counter()
    for path in paths:
        con = duckdb.connect(path, read_only=True, config={"threads": 1})
        con.execute(spec.reference).fetchall()
        con.close()
    return time.perf_counter() - t0


_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR", "DATE": "VARCHAR"}
_WARM: dict[str, Any] = {}


def _fresh(con: Any, name: str, db: Database) -> None:
    """``db`` as a new in-memory database ``name`` attached to ``con``'s instance."""
    con.execute(f"ATTACH ':memory:' AS {name}")
    for t in db.tables:
        values = [list(c) for c in zip(*t.rows, strict=True)] if t.rows else [[] for _ in t.columns]
        picks = ", ".join(
            f"unnest(${k + 1}::{_TYPES[ty]}[])" + ("::DATE" if ty == "DATE" else "") + f' AS "{c}"'
            for k, (c, ty) in enumerate(t.columns)
        )
        con.execute(f'CREATE TABLE {name}."{t.name}" AS SELECT {picks}', values)


def _duckdb_floor(spec: SqlSpec) -> float:
    """One warm DuckDB instance; per hidden database a fresh in-memory database filled from its
    rows, the reference run on it, the database dropped."""
    import duckdb

    if "con" not in _WARM:
        _WARM["con"] = duckdb.connect(":memory:", config={"threads": 1})
        _WARM["n"] = 0
    con = _WARM["con"]
    t0 = time.perf_counter()
    for db in spec.instances:
        _WARM["n"] += 1
        name = f"fresh_{_WARM['n']}"
        _fresh(con, name, db)
        cur = con.cursor()
        cur.execute(f"USE {name}")
        cur.execute(spec.reference).fetchall()
        cur.close()
        con.execute(f"DETACH {name}")
    return time.perf_counter() - t0


_ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"


def pipe_round_trip(n: int = 200) -> float:
    """Median ms of one request and its reply between this process and another one on the
    host (a line echoed through two pipes, no sandbox): what crossing into any other process
    costs on this machine now, two wake-ups."""
    p = subprocess.Popen(
        [sys.executable, "-c", _ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert p.stdin is not None and p.stdout is not None
    times = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            p.stdin.write(b"x\n")
            p.stdin.flush()
            p.stdout.readline()
            times.append(time.perf_counter() - t0)
    finally:
        p.stdin.close()
        p.wait()
    return statistics.median(times) * 1000


def measure(engine: str, rounds: int, n_seeds: int) -> dict[str, Any]:
    """Median ms of a verification and of its floor, interleaved, over ``rounds`` rounds of
    every task."""
    tasks = _tasks(engine, n_seeds)
    cost, floor, file_floor, run_s = [], [], [], []
    verdicts = []
    with SqlVerifier() as v, tempfile.TemporaryDirectory() as tmp:
        prepared = []
        for j, task in enumerate(tasks):
            spec = SqlSpec.of_task(task)
            files = [database_file(db, spec.engine) for db in spec.instances]
            paths = []
            for i, data in enumerate(files):
                path = os.path.join(tmp, f"{j}-{i}.{engine}")
                Path(path).write_bytes(data)
                paths.append(path)
            first = v.verify(task, spec.reference)  # untimed: starts workers, fills caches
            if not first.passed:
                raise SystemExit(f"{task.id}: the gold failed: {first.model_dump_json()[:400]}")
            for answer in (spec.reference, "", *(m.sql for m in mutants(spec.reference)[:3])):
                got = v.verify(task, answer)
                verdicts.append([task.id, got.reward, [t.status for t in got.tests]])
            prepared.append((task, spec, files, paths))
        for _ in range(rounds):
            for task, spec, files, paths in prepared:
                t0 = time.perf_counter()
                verdict = v.verify(task, spec.reference)
                cost.append(time.perf_counter() - t0)
                run_s.append(verdict.timings.get("run_s", 0.0))
                if not verdict.passed:
                    raise SystemExit(f"{task.id}: the gold failed: {verdict.infra_error}")
                if engine == "sqlite":
                    floor.append(_sqlite_floor(spec, files))
                else:
                    floor.append(_duckdb_floor(spec))
                    file_floor.append(_duckdb_file_floor(spec, paths))
    return {
        "cost_ms": statistics.median(cost) * 1000,
        "floor_ms": statistics.median(floor) * 1000,
        "file_floor_ms": statistics.median(file_floor) * 1000 if file_floor else None,
        "sandbox_run_ms": statistics.median(run_s) * 1000,
        "pipe_round_trip_ms": pipe_round_trip(),
        "samples": len(cost),
        "verdicts": hashlib.sha256(json.dumps(verdicts).encode()).hexdigest()[:16],
    }


def rows(quick: bool) -> list[dict[str, Any]]:
    """The rows of ``make bench-floor``: SQL on SQLite and on DuckDB, per sample."""
    lite = measure("sqlite", rounds=4 if quick else 20, n_seeds=1 if quick else 2)
    duck = measure("duckdb", rounds=1 if quick else 4, n_seeds=1)
    return [
        {
            "kind": "SQL on SQLite",
            "unit": "sample",
            "cost_ms": lite["cost_ms"],
            "floor_ms": lite["floor_ms"],
            "note": (
                "floor: the reference in-process on the host, on a fresh copy of each of the 4 "
                "hidden databases (sqlite3 deserialize), rows fetched"
            ),
            "verdicts": lite["verdicts"],
            "extra": {k: lite[k] for k in ("samples", "sandbox_run_ms", "pipe_round_trip_ms")},
        },
        {
            "kind": "SQL on DuckDB",
            "unit": "sample",
            "cost_ms": duck["cost_ms"],
            "floor_ms": duck["floor_ms"],
            "note": (
                "floor: the reference in-process on the host, one warm DuckDB instance, a fresh "
                "in-memory database per hidden database filled from its rows, rows fetched "
                "(each file opened read-only instead: extra.file_floor_ms)"
            ),
            "verdicts": duck["verdicts"],
            "extra": {
                k: duck[k]
                for k in ("samples", "file_floor_ms", "sandbox_run_ms", "pipe_round_trip_ms")
            },
        },
    ]


def duckdb_costs(repeats: int = 9) -> dict[str, float]:
    """DuckDB's costs in isolation, median ms (one of a task's hidden databases)."""
    import duckdb

    # the import in a fresh interpreter (this one may have imported it already)
    probe = "import time; t = time.perf_counter(); import duckdb; print(time.perf_counter() - t)"
    imported = 1000 * float(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout
    )
    task = _tasks("duckdb", 1)[1]
    spec = SqlSpec.of_task(task)
    db = spec.instances[0]
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "db.duckdb")
    Path(path).write_bytes(database_file(db, "duckdb"))
    cfg: dict[str, Any] = {"threads": 1}
    types = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR", "DATE": "DATE"}
    warm = duckdb.connect(":memory:", config=cfg)
    counter = [0]

    def fill() -> str:
        counter[0] += 1
        name = f"fresh{counter[0]}"
        warm.execute(f"ATTACH ':memory:' AS {name}")
        for t in db.tables:
            cols = ", ".join(f'"{c}" {types[ty]}' for c, ty in t.columns)
            warm.execute(f'CREATE TABLE {name}."{t.name}" ({cols})')
            if t.rows:
                values = [list(col) for col in zip(*t.rows, strict=True)]
                pick = ", ".join(f"unnest(${i + 1})" for i in range(len(values)))
                warm.execute(f'INSERT INTO {name}."{t.name}" SELECT {pick}', values)
        return name

    def attach_fill_query() -> None:
        name = fill()
        warm.execute(f"USE {name}")
        warm.execute(spec.reference).fetchall()
        warm.execute("USE memory")
        warm.execute(f"DETACH {name}")

    def file_query() -> None:
        con = duckdb.connect(path, read_only=True, config=cfg)
        con.execute(spec.reference).fetchall()
        con.close()

    def alone() -> None:
        # the query on a database already open: a connection that outlives the timing (and
        # closed after it, so that no other step finds its instance in DuckDB's cache)
        con = duckdb.connect(path, read_only=True, config=cfg)
        con.execute(spec.reference).fetchall()
        t = time.perf_counter()
        con.execute(spec.reference).fetchall()
        times["the reference alone (database open)"].append((time.perf_counter() - t) * 1000)
        con.close()

    steps = {
        "instance start and close (:memory:)": lambda: duckdb.connect(
            ":memory:", config=cfg
        ).close(),
        "file opened read-only and closed": lambda: duckdb.connect(
            path, read_only=True, config=cfg
        ).close(),
        "file opened read-only + the reference": file_query,
        "warm instance: fresh in-memory database attached, filled, reference, detached": (
            attach_fill_query
        ),
    }
    out = {"import duckdb (once)": imported}
    times: dict[str, list[float]] = {k: [] for k in steps}
    times["the reference alone (database open)"] = []
    for _ in range(repeats):
        for name, step in steps.items():
            t = time.perf_counter()
            step()
            times[name].append((time.perf_counter() - t) * 1000)
        alone()
    out.update({k: statistics.median(v) for k, v in times.items()})
    return out


_BURN = r"""
import os, struct, time
def read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise SystemExit(0)
        data += chunk
    return data
while True:
    seconds = float(read(struct.unpack(">I", read(4))[0]).decode())
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        pass
    os.write(1, struct.pack(">I", 1) + b"." + struct.pack(">I", 0))
"""


def boundary_costs(rounds: int = 60) -> dict[str, float]:
    """Median ms of one exchange with a resident that burns ``x`` ms of CPU per request (this
    tree only: ``Sandbox.resident`` is new), and of the same CPU burnt in this process: what
    handing CPU work to another process costs on this machine at its present load."""
    from referee.sandbox import Limits, Sandbox

    out: dict[str, float] = {}
    limits = Limits(timeout_s=3600, cpu_s=600, memory_mb=128)
    with Sandbox() as sb, sb.resident(_BURN, limits=limits) as r:
        r.exchange(b"0", timeout_s=30)
        for burn_ms in (0.0, 1.5, 5.0):
            there, here = [], []
            for _ in range(rounds):
                t0 = time.perf_counter()
                r.exchange(str(burn_ms / 1000).encode(), timeout_s=30)
                there.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                c0 = time.process_time()
                while time.process_time() - c0 < burn_ms / 1000:
                    pass
                here.append(time.perf_counter() - t0)
            out[f"resident exchange, {burn_ms:g} ms CPU"] = statistics.median(there) * 1000
            out[f"in this process, {burn_ms:g} ms CPU"] = statistics.median(here) * 1000
    return out


def cpu_costs(rounds: int = 10, n_seeds: int = 2) -> dict[str, float]:
    """SQLite, per sample, in CPU time (what the load moves least): this process's CPU (every
    thread) around ``SqlVerifier().verify`` on the gold, the resident runner's CPU (its worker
    cgroup's, as each exchange reports it: the result's ``cpu_s``), and the floor's CPU (its
    in-process work), interleaved sample by sample; medians in ms. Both trees have
    ``Resident.exchange``; it is wrapped here to read each exchange's CPU."""
    from referee.sandbox import resident as resident_module

    seen: list[float] = []
    original = resident_module.Resident.exchange

    def exchange(self: Any, data: bytes, *, timeout_s: float) -> Any:
        r = original(self, data, timeout_s=timeout_s)
        seen.append(r.cpu_s)
        return r

    resident_module.Resident.exchange = exchange  # type: ignore[method-assign]
    tasks = _tasks("sqlite", n_seeds)
    host, worker, floor, wall = [], [], [], []
    with SqlVerifier() as v:
        prepared = []
        for task in tasks:
            spec = SqlSpec.of_task(task)
            files = [database_file(db, spec.engine) for db in spec.instances]
            assert v.verify(task, spec.reference).passed  # untimed: workers, caches
            prepared.append((task, spec, files))
        for _ in range(rounds):
            for task, spec, files in prepared:
                seen.clear()
                t0, c0 = time.perf_counter(), time.process_time()
                verdict = v.verify(task, spec.reference)
                host.append(time.process_time() - c0)
                wall.append(time.perf_counter() - t0)
                if not verdict.passed or len(seen) != 1:
                    raise SystemExit(f"{task.id}: {verdict.infra_error} ({len(seen)} exchanges)")
                worker.append(seen[0])
                c0 = time.process_time()
                _sqlite_floor(spec, files)
                floor.append(time.process_time() - c0)
    resident_module.Resident.exchange = original  # type: ignore[method-assign]
    med = {
        "host_cpu_ms": statistics.median(host) * 1000,
        "runner_cpu_ms": statistics.median(worker) * 1000,
        "floor_cpu_ms": statistics.median(floor) * 1000,
        "wall_ms": statistics.median(wall) * 1000,
        "samples": float(len(host)),
    }
    med["cpu_ratio"] = (med["host_cpu_ms"] + med["runner_cpu_ms"]) / med["floor_cpu_ms"]
    return med


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--costs", action="store_true", help="DuckDB's costs in isolation too")
    ap.add_argument(
        "--boundary", action="store_true", help="a resident's exchange against CPU burnt here"
    )
    ap.add_argument(
        "--cpu", action="store_true", help="only SQLite's CPU per sample: host, runner, floor"
    )
    ap.add_argument("--json", help="write the rows (and costs) here")
    args = ap.parse_args()
    if args.cpu:
        print(json.dumps({"load": os.getloadavg()[0], **cpu_costs()}))
        return
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    result: dict[str, Any] = {"rows": rows(args.quick)}
    if args.costs:
        result["duckdb_costs_ms"] = duckdb_costs()
    if args.boundary:
        result["boundary_ms"] = boundary_costs()
    result["loadavg"] = [load0, Path("/proc/loadavg").read_text().split()[:3]]
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["python"] = sys.version.split()[0]
    for r in result["rows"]:
        print(
            f"{r['kind']:<16} {r['cost_ms']:9.2f} ms  floor {r['floor_ms']:8.2f} ms  "
            f"{r['cost_ms'] / r['floor_ms']:6.1f}x  ({r['note']})"
        )
    for k, v in result.get("duckdb_costs_ms", {}).items():
        print(f"  duckdb: {k}: {v:.2f} ms")
    for k, v in result.get("boundary_ms", {}).items():
        print(f"  boundary: {k}: {v:.3f} ms")
    print("load", result["loadavg"])
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
