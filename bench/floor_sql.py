"""SQL verdicts against their floors (issue 32): SQLite and DuckDB, one sample at a time.

    PYTHONPATH=src:bench python bench/floor_sql.py [--quick] [--costs] [--json OUT]

``rows(quick)`` is the interface of ``bench/floor.py`` (``make bench-floor``): one row per
engine, ``cost_ms`` the median time of ``SqlVerifier().verify(task, answer)`` (the public
verify path, as a user calls it; the same code measures the tree before issue 32 and after)
and ``floor_ms`` the median time of the same work done in-process on the host, with nothing
around it, measured in the same run, interleaved sample by sample:

* **SQLite floor**: for each of the sample's hidden databases, a fresh copy of its engine file
  opened (``sqlite3`` ``deserialize`` of the bytes into ``:memory:``), the reference query run
  and its rows fetched.
* **DuckDB floor**: DuckDB imported once; for each hidden database, its engine file opened
  read-only (DuckDB opens a file as a database instance of its own), the reference run and its
  rows fetched.

The sample is the task's reference (the gold answer, which must pass: a failed verdict
raises). Each task's first verification is not timed (it starts the verifier's workers).
``verdicts`` digests the verdicts (reward, each test's status) on every task's gold, empty
answer and first three mutants: equal in both trees when the verdicts are.

``--costs`` also prints DuckDB's own costs in isolation (its import, an instance's start, a
file opened read-only, a fresh in-memory database attached to a warm instance and filled with
a database's rows, the query alone): the measurement behind the DuckDB design (RESULTS §38).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.domains.sql.database import database_file
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


def _duckdb_floor(spec: SqlSpec, paths: list[str]) -> float:
    import duckdb

    t0 = time.perf_counter()
    for path in paths:
        con = duckdb.connect(path, read_only=True, config={"threads": 1})
        con.execute(spec.reference).fetchall()
        con.close()
    return time.perf_counter() - t0


def measure(engine: str, rounds: int, n_seeds: int) -> dict[str, Any]:
    """Median ms of a verification and of its floor, interleaved, over ``rounds`` rounds of
    every task."""
    tasks = _tasks(engine, n_seeds)
    cost, floor = [], []
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
                if not verdict.passed:
                    raise SystemExit(f"{task.id}: the gold failed: {verdict.infra_error}")
                if engine == "sqlite":
                    floor.append(_sqlite_floor(spec, files))
                else:
                    floor.append(_duckdb_floor(spec, paths))
    return {
        "cost_ms": statistics.median(cost) * 1000,
        "floor_ms": statistics.median(floor) * 1000,
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
            "extra": {"samples": lite["samples"]},
        },
        {
            "kind": "SQL on DuckDB",
            "unit": "sample",
            "cost_ms": duck["cost_ms"],
            "floor_ms": duck["floor_ms"],
            "note": (
                "floor: the reference in-process on the host, duckdb imported, each of the 4 "
                "hidden database files opened read-only (an instance each), rows fetched"
            ),
            "verdicts": duck["verdicts"],
            "extra": {"samples": duck["samples"]},
        },
    ]


def duckdb_costs(repeats: int = 9) -> dict[str, float]:
    """DuckDB's costs in isolation, median ms (one of a task's hidden databases)."""
    t0 = time.perf_counter()
    import duckdb

    imported = (time.perf_counter() - t0) * 1000
    task = _tasks("duckdb", 1)[1]
    spec = SqlSpec.of_task(task)
    db = spec.instances[0]
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "db.duckdb")
    Path(path).write_bytes(database_file(db, "duckdb"))
    cfg = {"threads": 1}
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--costs", action="store_true", help="DuckDB's costs in isolation too")
    ap.add_argument("--json", help="write the rows (and costs) here")
    args = ap.parse_args()
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    result: dict[str, Any] = {"rows": rows(args.quick)}
    if args.costs:
        result["duckdb_costs_ms"] = duckdb_costs()
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
    print("load", result["loadavg"])
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
