"""The grader's query runner: runs *inside* the sandbox (preloaded into its fork server).

Standard library and DuckDB's extension module only (no referee, no duckdb wrapper package,
which needs its metadata). ``run(request)`` opens each database file of the request read-only,
with everything a query could use to reach beyond it shut off, runs the candidate's query on
it under a deadline, and prints one frame per database: a line ``<nonce> <json>`` holding the
result's columns (and their types where the engine reports them: DuckDB does, SQLite does not),
its rows as plain JSON values and whether it read any of the task's tables (or why there is no
result). The host judges the
frames; nothing printed here is trusted beyond being data.

SQLite: a ``mode=ro&immutable=1`` URI, and an authorizer that allows only reading the task's
tables (not ``sqlite_master``), calling functions other than file and extension ones, and the
few harmless pragmas; ATTACH, writes, schema changes, transactions and other pragmas are
denied; one statement only (the driver refuses more). A progress handler stops the query at
its deadline.

DuckDB: ``read_only=True``, external access off (no files, no URLs, no extensions), the
configuration locked, one thread, a memory limit; the text must be exactly one SELECT
statement reading only the task's tables. A timer interrupts the query at its deadline.

Either way the sandbox kills the whole run if the runner itself overstays.
"""

import ctypes
import datetime
import decimal
import json
import math
import os
import resource
import sqlite3
import struct
import sys
import threading
import time
from typing import Any

if "/opt/packages" not in sys.path:
    sys.path.insert(0, "/opt/packages")
_duckdb: Any
try:
    import _duckdb
except ImportError:  # a sandbox without DuckDB: its tasks report it, SQLite ones still run
    _duckdb = None

try:
    _LIBC: Any = ctypes.CDLL(None)
except OSError:
    _LIBC = None
#: Whether this SQLite can open a database from bytes (3.11's ``deserialize``, SQLite built
#: with it): the resident runner's fresh copy is then made in memory, without a file's write,
#: open and unlink (RESULTS §44); else it copies the file, as the fork path opens one.
_DESERIALIZE = hasattr(sqlite3.Connection, "deserialize")
SAFE_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "foreign_key_list"}
DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def plain(value: Any) -> Any:
    """A JSON value for one cell: numbers, strings and None as they are, dates as ISO text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "x'" + bytes(value).hex() + "'"
    return str(value)


def _sqlite_authorizer(tables: list[str], existing: list[str], reads: set[str]) -> Any:
    allowed = {t.lower() for t in tables}
    # A READ names a table or a CTE; a CTE is any name the database does not hold.
    forbidden = {t.lower() for t in existing} - allowed
    held = {t.lower() for t in existing} & allowed

    def authorize(
        action: int, arg1: str | None, arg2: str | None, db_name: str | None, source: Any
    ) -> int:
        if action == sqlite3.SQLITE_SELECT or action == sqlite3.SQLITE_RECURSIVE:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            name = (arg1 or "").lower()
            ok = name not in forbidden and not name.startswith("sqlite_")
            ok = ok and db_name in ("main", None)
            if ok and name in held:
                reads.add(name)  # the task's tables the query reads (a CTE is not one)
            return sqlite3.SQLITE_OK if ok else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION:
            ok = (arg2 or "").lower() not in DENIED_FUNCTIONS
            return sqlite3.SQLITE_OK if ok else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA:
            ok = (arg1 or "").lower() in SAFE_PRAGMAS  # read the schema only, never set
            return sqlite3.SQLITE_OK if ok else sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_DENY

    return authorize


class _Clock:
    """A query's limit on CPU time (the process's, every thread), with a wall-clock backstop
    at three times the limit plus a second (as referee.sandbox.cputime)."""

    def __init__(self, limit_s: float, stretch: float | None = None) -> None:
        self.limit = limit_s
        self.cpu0 = time.process_time()
        self.wall0 = time.monotonic()
        if stretch is None:  # a retry of a starved run stretches the backstop (.cputime)
            try:
                stretch = float(os.environ.get("REFEREE_BACKSTOP_STRETCH", "1"))
            except ValueError:
                stretch = 1.0
        self.backstop = (3.0 * limit_s + 1.0) * stretch

    def over(self) -> bool:
        return (
            time.process_time() - self.cpu0 > self.limit
            or time.monotonic() - self.wall0 > self.backstop
        )

    def outcome(self) -> dict[str, Any]:
        """``{"timeout": True}``, with ``stalled: [cpu, wall, wait]`` where the backstop, not
        the CPU limit, ended the query (the host decides: starved or idle)."""
        cpu = time.process_time() - self.cpu0
        if cpu > self.limit:
            return {"timeout": True}
        wait = None
        try:
            with open("/proc/self/schedstat", "rb") as f:
                wait = int(f.read().split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
        return {"timeout": True, "stalled": [cpu, time.monotonic() - self.wall0, wait]}


def _run_sqlite(
    source: str | bytes,
    query: str,
    tables: list[str],
    timeout_s: float,
    max_rows: int,
    stretch: float | None = None,
) -> dict[str, Any]:
    """The query on one database: ``source`` an engine file's path (opened read-only), or its
    bytes (the resident runner's: a private in-memory copy of them, made for this query alone
    and gone with its connection; the authorizer refuses writes either way)."""
    if isinstance(source, bytes):
        con = sqlite3.connect(":memory:", isolation_level=None)
        try:
            con.deserialize(source)
        except BaseException:
            con.close()
            raise
    else:
        con = sqlite3.connect(f"file:{source}?mode=ro&immutable=1", uri=True, isolation_level=None)
    try:
        existing = [r[0] for r in con.execute("SELECT name FROM sqlite_master")]
        reads: set[str] = set()
        con.set_authorizer(_sqlite_authorizer(tables, existing, reads))
        clock = _Clock(timeout_s, stretch)
        state = {"timed_out": False}

        def progress() -> int:
            if clock.over():
                state["timed_out"] = True
                return 1
            return 0

        con.set_progress_handler(progress, 2000)
        try:
            cur = con.execute(query)
            if cur.description is None:
                return {"error": "not a query: it returns no result set"}
            columns = [d[0] for d in cur.description]
            rows = cur.fetchmany(max_rows + 1)
        except Exception as e:
            if state["timed_out"]:
                return clock.outcome()
            return {"error": f"{type(e).__name__}: {e}"}
        # SQLite reports no column types (a value has a type, a column has none)
        return {"columns": columns, "rows": rows, "reads": bool(reads)}
    finally:
        con.close()


def _run_duckdb(
    source: str | dict[str, Any],
    query: str,
    tables: list[str],
    timeout_s: float,
    max_rows: int,
    memory_mb: int,
    stretch: float | None = None,
) -> dict[str, Any]:
    if _duckdb is None:
        return {"infra": "DuckDB is not available in this sandbox"}
    try:
        statements = _duckdb.extract_statements(query)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    if len(statements) != 1:
        return {"error": f"one SELECT statement is allowed, got {len(statements)} statements"}
    if statements[0].type != _duckdb.StatementType.SELECT:
        return {"error": f"only a SELECT statement is allowed, got {statements[0].type}"}
    if isinstance(source, dict):
        con, close = _fresh_database(source, memory_mb)
    else:
        con = _duckdb_instance(source, memory_mb, read_only=True)
        close = con.close
    try:
        try:
            used = {t.lower() for t in con.get_table_names(query)}
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}"}
        others = sorted(used - {t.lower() for t in tables})
        if others:
            return {"error": f"the query reads tables outside the task: {', '.join(others)}"}
        state = {"timed_out": False}
        clock = _Clock(timeout_s, stretch)
        done = threading.Event()

        def watch() -> None:
            # DuckDB runs a query on threads of its own: its CPU is the process's, polled.
            while not done.wait(0.01):
                if clock.over():
                    state["timed_out"] = True
                    con.interrupt()
                    return

        timer = threading.Thread(target=watch, daemon=True)
        timer.start()
        try:
            con.execute(query)
            columns = [d[0] for d in con.description or ()]
            types = [str(d[1]) for d in con.description or ()]
            rows = con.fetchmany(max_rows + 1)
        except Exception as e:
            if state["timed_out"]:
                return clock.outcome()
            return {"error": f"{type(e).__name__}: {e}"}
        finally:
            done.set()
        if state["timed_out"]:
            return clock.outcome()
        return {"columns": columns, "types": types, "rows": rows, "reads": bool(used)}
    finally:
        close()


def _duckdb_instance(path: str, memory_mb: int, *, read_only: bool) -> Any:
    """A DuckDB instance on ``path`` with everything beyond its own data shut off: no files,
    no URLs, no extensions, one thread, a memory limit, the configuration locked."""
    config: dict[str, Any] = {
        "enable_external_access": False,
        "autoload_known_extensions": False,
        "autoinstall_known_extensions": False,
        "allow_community_extensions": False,
        "threads": 1,
        "memory_limit": f"{memory_mb}MB",
        "max_temp_directory_size": "0B",
    }
    con = _duckdb.connect(path, read_only=read_only, config=config)
    # The progress bar draws on stdout (into the frames); then nothing may change.
    con.execute("SET enable_progress_bar = false")
    con.execute("SET lock_configuration = true")
    return con


#: The resident runner's DuckDB instance (``serve`` only; made at its first DuckDB request,
#: in the runner's own process, never in the fork server): starting an instance costs more
#: than a query, so each database is a fresh in-memory database attached to this one instead.
_WARM: dict[str, Any] = {}
_LIST_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR", "DATE": "VARCHAR"}


def _fresh_database(db: dict[str, Any], memory_mb: int) -> tuple[Any, Any]:
    """A new, empty in-memory database attached to the warm instance, filled with ``db``'s
    tables (``{"tables": [{"name", "columns": [[name, type]], "rows"}]}``, the task's own
    form), and a fresh connection whose default it is; with the function that closes the
    connection and detaches (drops) the database. The instance is :func:`_duckdb_instance`'s
    (no file access at all: the rows come as values), its memory limit the query's."""
    instance = _WARM.get("instance")
    if instance is None or _WARM.get("memory_mb") != memory_mb:
        instance = _WARM["instance"] = _duckdb_instance(":memory:", memory_mb, read_only=False)
        _WARM["memory_mb"] = memory_mb
        _WARM["n"] = 0
    _WARM["n"] += 1
    name = f"referee_db_{_WARM['n']}"
    instance.execute(f"ATTACH ':memory:' AS {name}")
    try:
        for table in db["tables"]:
            columns, rows = table["columns"], table["rows"]
            values = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in columns]
            picks = ", ".join(
                f"unnest(${k + 1}::{_LIST_TYPES[ty]}[])"
                + ("::DATE" if ty == "DATE" else "")
                + f" AS {_quoted(col)}"
                for k, (col, ty) in enumerate(columns)
            )
            instance.execute(
                f"CREATE TABLE {name}.{_quoted(table['name'])} AS SELECT {picks}", values
            )
        con = instance.cursor()
        con.execute(f"USE {name}")
    except BaseException:
        instance.execute(f"DETACH {name}")
        raise

    def close() -> None:
        con.close()
        instance.execute(f"DETACH {name}")

    return con, close


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run(request: dict[str, Any], write: Any = None) -> None:
    """Run ``request["query"]`` on every database of ``request["databases"]``; one frame each,
    written by ``write`` (the standard output's by default)."""
    out_line = write or _print_line
    nonce = request["nonce"]
    max_rows = request["max_rows"]
    stretch = request.get("stretch")
    failed = False
    for i, source in enumerate(request["databases"]):
        if failed:  # the reward is all or nothing: after a failed database, the rest are moot
            out_line(f"{nonce} {json.dumps({'i': i, 'skipped': True})}\n")
            continue
        t0 = time.perf_counter()
        try:
            if request["engine"] == "duckdb":
                out = _run_duckdb(
                    source,
                    request["query"],
                    request["tables"],
                    request["timeout_s"],
                    max_rows,
                    request["memory_mb"],
                    stretch,
                )
            else:
                out = _run_sqlite(
                    source,
                    request["query"],
                    request["tables"],
                    request["timeout_s"],
                    max_rows,
                    stretch,
                )
        except Exception as e:  # opening the database failed: the grader's fault
            out = {"infra": f"{type(e).__name__}: {e}"}
        if "rows" in out:
            if len(out["rows"]) > max_rows:
                out = {"error": f"more than {max_rows} rows (the result limit)"}
            else:
                out["rows"] = [[plain(v) for v in row] for row in out["rows"]]
        failed = "rows" not in out
        out["i"] = i
        out["s"] = time.perf_counter() - t0
        text = json.dumps(out, default=str)
        if len(text) > request["max_bytes"]:
            text = json.dumps({"i": i, "error": "result larger than the output limit"})
        out_line(f"{nonce} {text}\n")


def _print_line(line: str) -> None:
    sys.stdout.write(line)
    sys.stdout.flush()


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _cpu_used() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def serve() -> None:
    """The resident runner (referee.sandbox.resident): one request a frame on stdin, its
    reply on stdout, until stdin closes.

    A request frame is the request of :func:`run` as JSON, whose ``databases`` name engine
    files the host placed in ``/workspace`` (kept there across requests, by content), with
    ``cpu_s``, the request's CPU limit. The reply is one frame holding every database's frame
    line, then an empty frame. Each request gets fresh copies: each SQLite database's bytes
    are read and opened as an in-memory database of its own by a fresh connection (or, where
    SQLite cannot, copied to a file of its own, opened read-only as in :func:`run` and deleted
    after it); nothing else outlives a request. Its CPU is bounded here: the soft
    RLIMIT_CPU is set to what this process has used plus ``cpu_s`` (the kernel kills it there;
    the host starts another)."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    n = 0
    while True:
        size = _read_exactly(0, 4)
        if size is None:
            return
        body = _read_exactly(0, struct.unpack(">I", size)[0])
        if body is None:
            return
        request = json.loads(body)
        n += 1
        workdir = f"/tmp/referee-sql-{n}"
        os.makedirs(workdir, 0o700, exist_ok=True)
        paths: list[str] = []
        sources: list[Any] = []
        for i, name in enumerate(request["databases"]):
            if name.endswith(".json"):  # a DuckDB database's rows: a fresh database each
                with open(os.path.join("/workspace", name), "rb") as f:
                    sources.append(json.loads(f.read()))
                continue
            if _DESERIALIZE:  # a SQLite file's bytes: a fresh in-memory copy each (no file)
                with open(os.path.join("/workspace", name), "rb") as f:
                    sources.append(f.read())
                continue
            path = f"{workdir}/db{i}{os.path.splitext(name)[1]}"
            _copy(os.path.join("/workspace", name), path)
            paths.append(path)
            sources.append(path)
        request["databases"] = sources
        limit = math.ceil(_cpu_used() + float(request["cpu_s"]))
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
        lines: list[str] = []
        try:
            run(request, lines.append)
        finally:
            for path in paths:
                os.unlink(path)
            os.rmdir(workdir)
        # One write for the whole reply: each write wakes the host, and on a loaded machine
        # each wake-up waits for a core.
        reply = "".join(lines).encode()
        _write(struct.pack(">I", len(reply)) + reply + struct.pack(">I", 0))
        # A large request's heap goes back at once; small ones' every 64th: a trim hands the
        # heap's free pages back and the next request faults them in again (more CPU than
        # the request's queries on this kind of machine, RESULTS §44).
        if len(reply) > _TRIM_BYTES or n % 64 == 0:
            _trim_heap()


def _copy(source: str, target: str) -> None:
    with open(source, "rb") as f:
        data = f.read()
    with open(target, "wb") as f:
        f.write(data)


def _write(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


#: A reply larger than this (the request's rows, and so its heap) trims the heap at once.
_TRIM_BYTES = 1 << 18


def _trim_heap() -> None:
    # The heap a request grew goes back to the kernel: the resident's memory (charged to its
    # cgroup, under the run's memory limit) stays what it was before the request.
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


def _warm_up() -> None:
    # One connection opened and closed in the fork server, before any fork: DuckDB's first
    # connection pages in and initialises what every later one reuses (each run forks a warm
    # copy). No thread of it outlives the close, so forking afterwards is safe.
    if _duckdb is not None:
        con = _duckdb.connect(":memory:", config={"threads": 1})
        con.execute("SELECT 1").fetchall()
        con.close()


_warm_up()
