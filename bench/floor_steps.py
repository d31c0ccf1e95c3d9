"""Multi-turn steps and start-up against their floors (issue 32), for ``make bench-floor``.

    PYTHONPATH=<tree>/src:bench .venv/bin/python bench/floor_steps.py [--quick]
    .venv/bin/python bench/floor_steps.py --trees anchor=/work/floor-anchor/src,new=src --rounds 3

:func:`rows` is the interface ``bench/floor.py`` imports (in a subprocess per tree, with
``PYTHONPATH=<tree>/src:<bench dir>``): one dict per measured kind with ``kind``, ``unit``,
``cost_ms`` (median), ``p95_ms``, ``floor_ms``, ``note`` (what the floor is). Everything goes
through public APIs that exist in both the tree before issue 32 and after, so the same code
measures both.

**Steps.** Each environment referee ships with tools (``env_names()`` less ``code-single``:
code, dataframe, lab, numeric, shell, sql, toolworld, verilog; ``bench-api`` is left out, see
its note) runs one episode; each tool is called again and again, one call per assistant
message, and ``cost`` is the wall time of ``await env.step(message)`` as a caller sees it (the
tool-call JSON parsed, checked, run, answered). The floor of a tool that runs no candidate
code is the bare Python operation it amounts to (a file read, a directory walk, a string made
once, the world's own SQL on validated arguments; named per row); the floor of one that runs
code is the same program through the bare sandbox path with no environment around it
(``Sandbox.run_python``/``Sandbox.run`` on the same workspace and limits, or the domain's own
runner function). Floor and cost alternate call by call so the load hits both alike.

**Start-up.** ``python -m referee verify --workers 2 --json`` on the 164 HumanEval tasks and
their canonical solutions, launch to the first verdict on stdout, bytecode cached (as an
installed package has it); floor: a bare ``python -I`` that reads the same two files and runs
the first sample's check (prompt, solution, test, ``check``) in a forked child, launch to its
line on stdout (no sandbox, no referee).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


# ---- helpers ------------------------------------------------------------------------------
def _msg(tool: str, /, **arguments: Any) -> dict[str, Any]:
    fn = {"name": tool, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _row(
    kind: str,
    unit: str,
    cost: list[float],
    floor: list[float],
    note: str,
    cpu: tuple[list[float], list[float]] | None = None,
) -> dict[str, Any]:
    c = [v * 1000 for v in cost]
    f = [v * 1000 for v in floor]
    extra = {}
    if cpu is None and isinstance(cost, Timed) and isinstance(floor, Timed) and cost.cpu:
        cpu = (cost.cpu, floor.cpu)
    if cpu is not None:  # this process's CPU (all its threads; not the sandbox's processes)
        extra = {
            "cpu_ms": statistics.median(v * 1000 for v in cpu[0]),
            "floor_cpu_ms": statistics.median(v * 1000 for v in cpu[1]),
        }
    return {
        "kind": kind,
        "unit": unit,
        "cost_ms": statistics.median(c),
        "p95_ms": _p95(c),
        "floor_ms": statistics.median(f),
        "floor_p95_ms": _p95(f),
        "n": len(c),
        "note": note,
        **extra,
    }


def _big_limits() -> Any:
    from referee.envs import EpisodeLimits

    return EpisodeLimits(
        max_turns=10**6, max_tokens=10**9, step_timeout_s=30.0, episode_timeout_s=1e6
    )


class Timed(list[float]):
    """Wall seconds per call, with this process's CPU seconds per call in ``cpu``."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: list[float] = []


async def _pair(
    n: int,
    step: Callable[[], Awaitable[Any]],
    floor: Callable[[], Any],
    *,
    warm: int = 3,
) -> tuple[Timed, Timed]:
    """``n`` timed calls of ``step`` (awaited) and of ``floor`` (plain), alternating."""
    for _ in range(warm):
        await step()
        floor()
    cost, bare = Timed(), Timed()
    for _ in range(n):
        c, t = time.process_time(), time.perf_counter()
        await step()
        cost.append(time.perf_counter() - t)
        cost.cpu.append(time.process_time() - c)
        c, t = time.process_time(), time.perf_counter()
        floor()
        bare.append(time.perf_counter() - t)
        bare.cpu.append(time.process_time() - c)
    return cost, bare


def _walk(root: str) -> list[str]:
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            out.append(f"{name} ({st.st_size} bytes)")
    return out


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


# ---- the code environment -----------------------------------------------------------------
CODE_PROGRAM = "import solution\nprint(solution.solve)\n"


def _code_task(sandbox: Any) -> tuple[Any, str]:
    """A procedural function task with visible tests, recorded; and its whole solution file."""
    from referee.tasks import generate
    from referee.tasks.model import Task
    from referee.verify.record import record_function_tasks

    draft = generate("list-pipeline", difficulty=0.5, seed=1001)
    recorded = record_function_tasks(sandbox, [draft])[0]
    tests = ["assert solve([]) == solve([])", "assert solve([1, 2]) == solve([1, 2])"]
    task = Task.create(
        name="floor/visible-v1",
        prompt=recorded.prompt,
        payload={**recorded.payload, "visible_tests": tests},
        hidden=recorded.hidden,
    )
    return task, task.payload["code_prompt"] + task.hidden["reference"]


async def _code_rows(n: int) -> list[dict[str, Any]]:
    from referee.envs import CodeEnv, CodeRuntime
    from referee.sandbox import Limits

    rows = []
    with CodeRuntime() as rt:
        task, solution = _code_task(rt.sandbox)
        env = CodeEnv(rt, limits=_big_limits())
        await env.reset(task)
        await env.step(_msg("write_file", path="solution.py", content=solution))
        ws = env._ws  # the episode's workspace, for the floors on the same files
        assert ws is not None
        root = str(ws.root)
        sol = os.path.join(root, "solution.py")
        box = rt.sandbox
        limits = Limits(timeout_s=30.0)
        tests = task.payload.get("visible_tests") or []
        visible = "from solution import *\n" + "\n".join(tests) + "\n"
        data = solution.encode()
        cases: list[tuple[str, dict[str, Any], Callable[[], Any], str]] = [
            ("list_files", {}, lambda: _walk(root), "os.walk + lstat of the workspace"),
            ("read_file", {"path": "solution.py"}, lambda: _read(sol), "open + read of the file"),
            (
                "write_file",
                {"path": "solution.py", "content": solution},
                lambda: _write(sol, data),
                "open + write of the file",
            ),
            (
                "run_python",
                {"code": CODE_PROGRAM},
                lambda: box.run_python(CODE_PROGRAM, workspace=ws, limits=limits),
                "Sandbox.run_python of the same program on the same workspace",
            ),
            (
                "run_tests",
                {},
                lambda: box.run_python(visible, workspace=ws, limits=limits),
                "Sandbox.run_python of the visible tests on the same workspace",
            ),
        ]
        for tool, args, floor, note in cases:
            message = _msg(tool, **args)

            async def step(message: dict[str, Any] = message) -> Any:
                return await env.step(message)

            cost, bare = await _pair(n, step, floor)
            rows.append(_row(f"code env: {tool}", "step", cost, bare, note))
        # submit ends the episode: a fresh reset before each (not timed).
        cost, bare = [], []
        for _ in range(max(5, n // 4)):
            await env.reset(task)
            await env.step(_msg("write_file", path="solution.py", content=solution))
            t = time.perf_counter()
            await env.step(_msg("submit"))
            cost.append(time.perf_counter() - t)
            t = time.perf_counter()
            _read(sol)
            bare.append(time.perf_counter() - t)
        rows.append(_row("code env: submit", "step", cost, bare, "open + read of solution.py"))
        await env.close()
    return rows


# ---- tool worlds --------------------------------------------------------------------------
async def _toolworld_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.envs import make_env

    task = generate_family("shop-refund", count=1, difficulty=0.4, seed=11)[0]
    env = make_env("toolworld", limits=_big_limits())
    await env.reset(task)
    request = next(m.content for m in task.prompt if m.role == "user")
    email = request.split("(")[1].split(")")[0]
    first = await env.step(_msg("find_customer", email=email))
    customer = json.loads(first.observations[0]["content"])["customer_id"]
    orders = json.loads((await env.step(_msg("list_orders", customer_id=customer)))
                        .observations[0]["content"])  # fmt: skip
    order_id = orders[0]["order_id"]
    rows = []
    cases = [
        ("find_customer", {"email": email}),
        ("list_orders", {"customer_id": customer}),
        ("get_order", {"order_id": order_id}),
    ]
    for tool, args in cases:
        message = _msg(tool, **args)
        cost, bare = [], []
        done = 0
        while done < n:
            # A world takes 64 calls an episode; a fresh one (not timed) before that.
            await env.reset(task)
            session = env._session
            assert session is not None
            world = session.world  # type: ignore[attr-defined]
            spec = type(world).tool_specs()[tool]
            parsed = spec.args.model_validate(args)
            for _ in range(min(40, n - done)):
                t = time.perf_counter()
                await env.step(message)
                cost.append(time.perf_counter() - t)
                t = time.perf_counter()
                spec.method(world, parsed)
                bare.append(time.perf_counter() - t)
                done += 1
        rows.append(
            _row(
                f"toolworld env: {tool}",
                "step",
                cost,
                bare,
                "the world's own method (its SQL) on arguments validated beforehand",
            )
        )
    await env.close()
    return rows


# ---- the laboratory -----------------------------------------------------------------------
async def _lab_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.domains.lab.laboratory import Laboratory
    from referee.envs import make_env

    task = generate_family("lab-population", count=1, difficulty=0.5, seed=3)[0]
    env = make_env("lab", limits=_big_limits())
    await env.reset(task)
    props = env.tools()[0]["function"]["parameters"]["properties"]
    args: dict[str, Any] = {}
    for name, p in props.items():
        if name == "times":
            args[name] = [0.0, 1.0]
        elif "enum" in p:
            args[name] = p["enum"][0]
        else:
            lo_hi = p["description"].rsplit("(", 1)[1].split(",", 1)[1]
            lo = float(lo_hi.split(" to ")[0].strip())
            args[name] = lo
    message = _msg("run_experiment", **args)
    cost, bare = [], []
    while len(cost) < n:
        await env.reset(task)
        lab = Laboratory(task)
        for _ in range(min(max(1, lab.budget - 1), n - len(cost))):
            t = time.perf_counter()
            r = await env.step(message)
            cost.append(time.perf_counter() - t)
            t = time.perf_counter()
            ok, _ = lab.run(args)
            bare.append(time.perf_counter() - t)
            assert ok and "error" not in r.observations[0]["content"], r.observations
    await env.close()
    return [
        _row(
            "lab env: run_experiment",
            "step",
            cost,
            bare,
            "Laboratory.run on the same arguments (the lab's own checks and simulation)",
        )
    ]


# ---- SQL ----------------------------------------------------------------------------------
async def _sql_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.domains.sql.database import database_file
    from referee.domains.sql.spec import SqlSpec
    from referee.domains.sql.verifier import SqlVerifier, run_query
    from referee.envs import make_env

    task = generate_family("sql-filter", count=1, difficulty=0.3, seed=1)[0]
    verifier = SqlVerifier()
    env = make_env("sql", verifier=verifier, limits=_big_limits())
    await env.reset(task)
    spec = SqlSpec.of_task(task)
    query = str(task.hidden["reference"])
    schema_text = (await env.step(_msg("show_schema"))).observations[0]["content"]
    holder = {"schema": schema_text}
    db = database_file(spec.sample, spec.engine)
    rows = []
    cost, bare = await _pair(n, lambda: env.step(_msg("show_schema")), lambda: holder["schema"])
    rows.append(_row("sql env: show_schema", "step", cost, bare, "a dict lookup of the text"))

    def floor_query() -> Any:
        return run_query(
            verifier.sandbox,
            spec.engine,
            query,
            [db],
            spec.tables,
            time_limit_s=spec.time_limit_s,
            memory_mb=verifier.memory_mb,
        )

    cost, bare = await _pair(
        max(5, n // 3), lambda: env.step(_msg("run_query", query=query)), floor_query
    )
    rows.append(
        _row(
            "sql env: run_query",
            "step",
            cost,
            bare,
            "run_query (the verifier's sandboxed runner) on the sample database file",
        )
    )
    await env.close()
    verifier.close()
    return rows


# ---- the shell ----------------------------------------------------------------------------
async def _shell_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.envs import make_env
    from referee.sandbox import Sandbox

    task = generate_family("ops-config-fix", count=1, difficulty=0.0, seed=0)[0]
    rows = []
    with Sandbox() as sb:
        env = make_env("shell", sandbox=sb, limits=_big_limits())
        await env.reset(task)
        ws = env.episode.workspace  # type: ignore[attr-defined]
        root = str(ws.root)
        manifest = env.manifest  # type: ignore[attr-defined]
        commands = list(manifest.commands)
        files = sorted(
            os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
        )
        target = next((f for f in files if manifest.may_write(f)), None)
        readable = files[0]
        cmd = "cat " + readable if "cat" in commands else commands[0]
        session = env.episode.session  # type: ignore[attr-defined]
        host = subprocess.Popen  # the floor: sh -c from a warm process, no sandbox

        def bare_sh() -> Any:
            p = host(["/bin/sh", "-c", cmd], cwd=root, stdout=subprocess.PIPE)
            p.communicate()

        cost, bare = await _pair(n, lambda: env.step(_msg("run", command=cmd)), bare_sh)
        rows.append(
            _row(
                "shell env: run",
                "step",
                cost,
                bare,
                f"`/bin/sh -c '{cmd}'` forked from a warm host process (no sandbox)",
            )
        )
        cost2, bare2 = await _pair(n, lambda: asyncio.to_thread(session.run, cmd), bare_sh)
        rows.append(
            _row(
                "shell session (no env): run",
                "step",
                cost2,
                bare2,
                "the session's supervisor round trip alone (ShellSession.run, pipe + JSON + "
                "fork/exec in the sandbox) against the same bare sh -c",
            )
        )
        path = os.path.join(root, readable)
        cost, bare = await _pair(
            n, lambda: env.step(_msg("read_file", path=readable)), lambda: _read(path)
        )
        rows.append(_row("shell env: read_file", "step", cost, bare, "open + read of the file"))
        if target is not None:
            content = "x = 1\n"
            tpath = os.path.join(root, target)
            os.makedirs(os.path.dirname(tpath), exist_ok=True)
            cost, bare = await _pair(
                n,
                lambda: env.step(_msg("write_file", path=target, content=content)),
                lambda: _write(tpath, content.encode()),
            )
            rows.append(
                _row("shell env: write_file", "step", cost, bare, "open + write of the file")
            )

        def bare_ps() -> list[str]:
            out = []
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        out.append(os.readlink(f"/proc/{pid}/ns/pid"))
                    except OSError:
                        pass
            return out

        cost, bare = await _pair(n, lambda: env.step(_msg("list_processes")), bare_ps)
        rows.append(
            _row(
                "shell env: list_processes",
                "step",
                cost,
                bare,
                "os.listdir('/proc') + readlink of each process's pid namespace (the host's "
                f"process table: {len(bare_ps())} processes)",
            )
        )

        def bare_dry() -> Any:
            return sb.run(["/bin/sh", "-c", cmd], workspace=None, files={})

        k = max(3, n // 10)
        cost, bare = await _pair(k, lambda: env.step(_msg("dry_run", command=cmd)), bare_dry,
                                 warm=1)  # fmt: skip
        rows.append(
            _row(
                "shell env: dry_run",
                "step",
                cost,
                bare,
                "Sandbox.run of sh -c in a fresh bubblewrap sandbox (a dry run boots a "
                "throwaway session on a copy of the files)",
            )
        )
        await env.close()
    return rows


# ---- dataframe ----------------------------------------------------------------------------
async def _dataframe_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.domains.dataframe.execute import script_program
    from referee.domains.dataframe.verifier import DataframeVerifier
    from referee.envs import make_env
    from referee.sandbox import Limits

    task = generate_family("df-clean", count=1, difficulty=0.3, seed=1)[0]
    verifier = DataframeVerifier()
    env = make_env("dataframe", verifier=verifier, limits=_big_limits())
    await env.reset(task)
    schema = task.payload["schema"]
    visible = task.payload["visible"]
    name = next(iter(visible))
    rows = []

    def bare_list() -> str:
        return "\n".join(f"{t}: {len(v.splitlines())}" for t, v in visible.items())

    cost, bare = await _pair(n, lambda: env.step(_msg("list_tables")), bare_list)
    rows.append(
        _row("dataframe env: list_tables", "step", cost, bare, "splitlines of each table's CSV")
    )
    cost, bare = await _pair(
        n,
        lambda: env.step(_msg("preview_table", name=name, rows=10)),
        lambda: "\n".join(visible[name].split("\n")[:11]),
    )
    rows.append(
        _row("dataframe env: preview_table", "step", cost, bare, "split of the table's CSV")
    )
    code = "print(sorted(tables))\n"
    files = {f"inputs/{t}.csv": text for t, text in visible.items()}
    program = script_program(code, schema)
    limits = Limits(timeout_s=10.0, memory_mb=1024)
    k = max(5, n // 4)
    cost, bare = await _pair(
        k,
        lambda: env.step(_msg("run_python", code=code)),
        lambda: verifier.sandbox.run_python(program, name="script.py", files=files, limits=limits),
    )
    rows.append(
        _row(
            "dataframe env: run_python",
            "step",
            cost,
            bare,
            "Sandbox.run_python of the same script program with the same input files",
        )
    )
    await env.close()
    verifier.close()
    return rows


# ---- numeric ------------------------------------------------------------------------------
async def _numeric_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.domains.numeric.execute import run_function
    from referee.domains.numeric.sandbox import numeric_sandbox
    from referee.domains.numeric.spec import NumericSpec
    from referee.envs import make_env
    from referee.sandbox import Limits

    task = generate_family("num-root", count=1, difficulty=0.3, seed=1)[0]
    spec = NumericSpec.of(task)
    reference = str(task.hidden["reference"])
    with numeric_sandbox(python_workers=2) as sb:
        env = make_env("numeric", sandbox=sb, limits=_big_limits())
        await env.reset(task)
        code = "print(1 + 1)\n"
        limits = Limits(timeout_s=30.0, memory_mb=spec.memory_mb)
        rows = []
        cost, bare = await _pair(
            n,
            lambda: env.step(_msg("run_python", code=code)),
            lambda: sb.run_python(code, limits=limits),
        )
        rows.append(
            _row(
                "numeric env: run_python",
                "step",
                cost,
                bare,
                "Sandbox.run_python of the same program in the same numeric sandbox",
            )
        )
        visible = spec.visible
        cost, bare = await _pair(
            max(5, n // 2),
            lambda: env.step(_msg("check", code=reference)),
            lambda: run_function(
                sb,
                reference,
                spec.entry_point,
                [visible["params"]],
                time_limit_s=min(spec.time_limit_s, 30.0),
                memory_mb=spec.memory_mb,
            ),
        )
        rows.append(
            _row(
                "numeric env: check",
                "step",
                cost,
                bare,
                "run_function (the verifier's sandboxed runner) on the visible parameters",
            )
        )
        await env.close()
    return rows


# ---- verilog ------------------------------------------------------------------------------
async def _verilog_rows(n: int) -> list[dict[str, Any]]:
    from referee.domains import generate_family
    from referee.domains.verilog.simulate import compile_limits
    from referee.domains.verilog.verifier import VerilogVerifier
    from referee.envs import make_env

    task = generate_family("v-comb", count=1, difficulty=0.2, seed=1)[0]
    verifier = VerilogVerifier()
    env = make_env("verilog", verifier=verifier, limits=_big_limits())
    await env.reset(task)
    source = str(task.hidden["reference"])
    p = task.payload
    rows = []

    def bare_interface() -> str:
        info = {k: p.get(k) for k in ("module_header", "ports", "clock", "reset")}
        return json.dumps(info, indent=1)

    cost, bare = await _pair(n, lambda: env.step(_msg("interface")), bare_interface)
    rows.append(
        _row("verilog env: interface", "step", cost, bare, "json.dumps of the interface fields")
    )
    k = max(4, n // 10)
    cost, bare = await _pair(
        k,
        lambda: env.step(_msg("compile", source=source)),
        lambda: verifier.sandbox.run(
            ["iverilog", "-g2012", "-o", "check.vvp", "design.v"],
            files={"design.v": source},
            limits=compile_limits(),
        ),
        warm=1,
    )
    rows.append(
        _row(
            "verilog env: compile",
            "step",
            cost,
            bare,
            "Sandbox.run of the same iverilog command on the same source",
        )
    )
    await env.close()
    verifier.close()
    return rows


# ---- start-up -----------------------------------------------------------------------------
_FLOOR_STARTUP = r"""
import json, os, sys
tasks = {}
for line in open(sys.argv[1]):
    t = json.loads(line); tasks[t["id"]] = t
sample = json.loads(open(sys.argv[2]).readline())
t = tasks[sample["task_id"]]
src = t["payload"]["code_prompt"] + sample["completion"] + "\n" + t["hidden"]["test"] \
    + "\ncheck(" + t["payload"]["entry_point"] + ")\n"
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    try:
        exec(compile(src, "check", "exec"), {"__name__": "__main__"}); ok = True
    except BaseException:
        ok = False
    os.write(w, b"1" if ok else b"0"); os._exit(0)
os.close(w); ok = os.read(r, 1) == b"1"; os.waitpid(pid, 0)
print(json.dumps({"task_id": sample["task_id"], "passed": ok}), flush=True)
"""


def _startup_files(work: Path) -> tuple[Path, Path]:
    """HumanEval's 164 tasks and their canonical solutions (made once, with this tree)."""
    work.mkdir(parents=True, exist_ok=True)
    tasks, gold = work / "he.jsonl", work / "gold.jsonl"
    env = _cli_env()
    if not tasks.exists():
        subprocess.run(
            [sys.executable, "-m", "referee", "tasks", "import", "humaneval", "--out", str(tasks)],
            env=env,
            check=True,
            capture_output=True,
        )
    if not gold.exists():
        out = subprocess.run(
            [sys.executable, "-m", "referee", "tasks", "gold", str(tasks)],
            env=env,
            check=True,
            capture_output=True,
        ).stdout
        gold.write_bytes(out)
    return tasks, gold


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    # As an installed package has it: bytecode cached (this machine's shells set
    # PYTHONDONTWRITEBYTECODE, which would make every start compile referee's source).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


#: The launched process's own CPU seconds (every thread; not its children) when its first
#: line arrived, one per _first_line call.
_CPU_AT_FIRST: list[float] = []


def _own_cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _first_line(cmd: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None
    line = p.stdout.readline()
    first = time.perf_counter() - t0
    _CPU_AT_FIRST.append(_own_cpu_s(p.pid))
    _rest, err = p.communicate()
    if p.returncode != 0 or not line:
        raise RuntimeError(f"{cmd[:4]} failed ({p.returncode}): {err.decode()[-1500:]}")
    return first, json.loads(line)


def _startup_rows(n: int) -> list[dict[str, Any]]:
    work = Path(os.environ.get("FLOOR_STEPS_WORK", tempfile.gettempdir())) / "floor_steps_he"
    tasks, gold = _startup_files(work)
    env = _cli_env()
    cli = [sys.executable, "-m", "referee", "verify", "--workers", "2", "--json"]
    cli += ["--tasks", str(tasks), "--samples", str(gold)]
    floor_cmd = [sys.executable, "-I", "-c", _FLOOR_STARTUP, str(tasks), str(gold)]
    _first_line(cli, env)  # bytecode written, caches warm
    cost, bare = [], []
    for _ in range(n):
        s, verdict = _first_line(cli, env)
        assert verdict["passed"], verdict
        cost.append(s)
        s, verdict = _first_line(floor_cmd, env)
        assert verdict["passed"], verdict
        bare.append(s)
    load = os.getloadavg()[0]
    return [
        _row(
            "start-up: referee verify first verdict",
            "run",
            cost,
            bare,
            "a bare `python -I` reading the two files and running the first check in a "
            f"forked child (no sandbox); load {load:.1f} at the end",
        )
    ]


# ---- the interface ------------------------------------------------------------------------
_ENVS: dict[str, Callable[[int], Awaitable[list[dict[str, Any]]]]] = {
    "code": _code_rows,
    "toolworld": _toolworld_rows,
    "lab": _lab_rows,
    "sql": _sql_rows,
    "shell": _shell_rows,
    "dataframe": _dataframe_rows,
    "numeric": _numeric_rows,
    "verilog": _verilog_rows,
}


def rows(quick: bool, only: list[str] | None = None) -> list[dict[str, Any]]:
    """Every multi-turn environment's tools and the start-up, each with its floor."""
    n = 30 if quick else 80
    out: list[dict[str, Any]] = []
    for name, fn in _ENVS.items():
        if only and name not in only:
            continue
        try:
            out += asyncio.run(fn(n))
        except Exception as e:  # one environment's failure is a row, not a lost table
            out.append(
                {
                    "kind": f"{name} env",
                    "unit": "step",
                    "cost_ms": float("nan"),
                    "floor_ms": float("nan"),
                    "note": f"failed: {type(e).__name__}: {str(e)[:300]}",
                }
            )
    if not only or "startup" in only:
        out += _startup_rows(5 if quick else 10)
    out.append(
        {
            "kind": "bench-api env",
            "unit": "step",
            "cost_ms": float("nan"),
            "floor_ms": float("nan"),
            "note": "not measured here: each call replays the episode's calls in the "
            "benchmark's API in the sandbox (BFCL, tau2), a verifier run, not a step",
        }
    )
    return out


def _table(results: dict[str, list[dict[str, Any]]]) -> str:
    """One line per kind: the floor, then per tree its median / p95 wall, its overhead over
    the floor (median wall minus median floor, each tree's own run) and this process's CPU
    per call beyond the floor's."""
    names = list(results)
    head = "| kind | floor ms | " + " | ".join(f"{t}: median / p95 ms" for t in names)
    head += " | " + " | ".join(f"{t}: - floor ms" for t in names)
    head += " | " + " | ".join(f"{t}: host CPU - floor's ms" for t in names) + " |"
    lines = [head, "|" + "---|" * (2 + 3 * len(names))]
    kinds = list(dict.fromkeys(r["kind"] for t in names for r in results[t]))
    nan = float("nan")
    for kind in kinds:
        per = {t: next((r for r in results[t] if r["kind"] == kind), None) for t in names}
        floors = [
            r["floor_ms"] for r in per.values() if r is not None and r["floor_ms"] == r["floor_ms"]
        ]
        floor = statistics.median(floors) if floors else nan
        cells = [
            f"{r['cost_ms']:.3f} / {r.get('p95_ms', nan):.3f}" if r else "—" for r in per.values()
        ]
        over = [f"{r['cost_ms'] - r['floor_ms']:+.3f}" if r else "—" for r in per.values()]
        cpu = [
            f"{r['cpu_ms'] - r['floor_cpu_ms']:+.3f}" if r and "cpu_ms" in r else "—"
            for r in per.values()
        ]
        lines.append(f"| {kind} | {floor:.3f} | " + " | ".join(cells + over + cpu) + " |")
    return "\n".join(lines)


#: Interpreters that import what ``referee verify`` imports before its first verdict and print
#: one line: a lower bound, at the same load, for any start that imports them.
_PROBES = {
    "probe: python, no imports": "print('{}')",
    "probe: pydantic, one model": (
        "from pydantic import BaseModel\nclass A(BaseModel):\n x: int = 0\nprint('{}')"
    ),
    "probe: pydantic model + typer + rich.console": (
        "from pydantic import BaseModel\n"
        "import typer, rich.console\n"
        "class A(BaseModel):\n x: int = 0\n"
        "print('{}')"
    ),
}


#: A process that imports what starting ``referee verify``'s sandbox needs, then times (with
#: its own clock, imports excluded) the sandbox's start to the end of its first program: what
#: any one-shot command that judges in a sandbox of its own waits for at least, after its
#: interpreter's start, however little it imports.
_SANDBOX_PROBE = """
import json, time
from referee.verify.function import harness_sandbox
from referee.verify.repo_run import GRADER_PACKAGES
t = time.perf_counter()
sandbox = harness_sandbox(python_workers=2, python_packages=GRADER_PACKAGES)
sandbox.warm()
r = sandbox.run_python("print(1)\\n")
print(json.dumps({"sandbox_s": time.perf_counter() - t, "exit": r.exit_code}), flush=True)
sandbox.close()
"""
SANDBOX_ROW = "sandbox: start to its first program's end (own clock, imports excluded)"


def _busy_loops(k: int) -> list[subprocess.Popen[bytes]]:
    """``k`` processes that each keep a core busy (``while 1: pass``): a deliberate load."""
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(k)]


def _p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10, method="inclusive")[-1] if len(xs) > 1 else xs[0]


def startup_ab(trees: dict[str, str], n: int, load: int = 0) -> dict[str, Any]:
    """The first verdict of each tree's ``referee verify``, alternating launch by launch (the
    order turning each pair), with the floor after each pair: on a machine whose load moves
    within seconds, only per-pair ratios hold. One unmeasured pair first (bytecode, caches).
    With ``load`` > 0, that many busy loops run during the launches (started 20 s before the
    first, so that the load average has climbed to them: it reports the load it saw)."""
    busy = _busy_loops(load)
    try:
        if busy:
            time.sleep(20)
        return _startup_ab(trees, n, load)
    finally:
        for p in busy:
            p.kill()
            p.wait()


def _startup_ab(trees: dict[str, str], n: int, load: int) -> dict[str, Any]:
    work = Path(os.environ.get("FLOOR_STEPS_WORK", tempfile.gettempdir())) / "floor_steps_he"
    tasks, gold = _startup_files(work)
    env0 = _cli_env()
    args = ["verify", "--workers", "2", "--json", "--tasks", str(tasks), "--samples", str(gold)]
    floor_cmd = [sys.executable, "-I", "-c", _FLOOR_STARTUP, str(tasks), str(gold)]
    runs: dict[str, list[float]] = {t: [] for t in [*trees, "floor", *_PROBES, SANDBOX_ROW]}
    cpu: dict[str, list[float]] = {t: [] for t in runs}
    loads = []
    for i in range(n + 1):
        for name in list(trees) if i % 2 else list(reversed(trees)):
            env = {**env0, "PYTHONPATH": str(Path(trees[name]).resolve())}
            s, verdict = _first_line([sys.executable, "-m", "referee", *args], env)
            assert verdict["passed"], verdict
            if i:
                runs[name].append(s)
                cpu[name].append(_CPU_AT_FIRST[-1])
        s, verdict = _first_line(floor_cmd, env0)
        assert verdict["passed"], verdict
        if i:
            runs["floor"].append(s)
            cpu["floor"].append(_CPU_AT_FIRST[-1])
        for probe, code in _PROBES.items():  # what a start with these imports costs at least
            s, _ = _first_line([sys.executable, "-c", code], env)
            if i:
                runs[probe].append(s)
                cpu[probe].append(_CPU_AT_FIRST[-1])
        newest = {**env0, "PYTHONPATH": str(Path(trees[list(trees)[-1]]).resolve())}
        _, probe = _first_line([sys.executable, "-c", _SANDBOX_PROBE], newest)
        assert probe["exit"] == 0, probe
        if i:
            runs[SANDBOX_ROW].append(probe["sandbox_s"])
            cpu[SANDBOX_ROW].append(_CPU_AT_FIRST[-1])
        loads.append(os.getloadavg()[0])
    names = list(trees)
    ratios = [b / a for a, b in zip(runs[names[0]], runs[names[-1]], strict=True)]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "busy_loops": load,
        "loads": loads,
        "load_range": [min(loads), max(loads)],
        "first_verdict_s": runs,
        "median_s": {k: statistics.median(v) for k, v in runs.items()},
        "p90_s": {k: _p90(v) for k, v in runs.items()},
        # the launched process's own CPU when its first line came (its children not counted:
        # for referee verify, the sandbox's workers are not in it); clock ticks of 10 ms
        "own_cpu_at_first_line_s, median": {k: statistics.median(v) for k, v in cpu.items()},
        f"{names[-1]}/{names[0]} per pair, median": statistics.median(ratios),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated: code,sql,...,startup")
    ap.add_argument(
        "--trees",
        default="",
        help="name=src,name=src: run each tree's rows in a subprocess, alternating per round",
    )
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--startup-ab",
        type=int,
        default=0,
        metavar="N",
        help="with --trees: only the start-up, N launches per tree alternating launch by launch",
    )
    ap.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="K",
        help="with --startup-ab: K busy loops (`while 1: pass`) run during the launches",
    )
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    if not args.trees:
        print(json.dumps(rows(args.quick, only or None), indent=1))
        return
    trees = dict(t.split("=", 1) for t in args.trees.split(","))
    if args.startup_ab:
        result = startup_ab(trees, args.startup_ab, args.load)
        print(json.dumps({k: v for k, v in result.items() if k != "first_verdict_s"}, indent=1))
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        return
    raw: dict[str, list[list[dict[str, Any]]]] = {t: [] for t in trees}
    loads = []
    for i in range(args.rounds):
        order = list(trees) if i % 2 == 0 else list(reversed(trees))
        for name in order:
            env = {**os.environ, "PYTHONPATH": f"{Path(trees[name]).resolve()}:{HERE}"}
            cmd = [sys.executable, str(HERE / "floor_steps.py")]
            cmd += ["--quick"] if args.quick else []
            cmd += ["--only", args.only] if args.only else []
            loads.append(os.getloadavg()[0])
            p = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if p.returncode:
                raise SystemExit(f"{name}: {p.stderr[-3000:]}")
            raw[name].append(json.loads(p.stdout))
            print(f"round {i + 1} {name} done (load {loads[-1]:.1f})", file=sys.stderr)
    if args.out:  # the raw rounds first: a merge that fails loses nothing
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).with_suffix(".raw.json").write_text(json.dumps(raw, indent=1) + "\n")
    merged: dict[str, list[dict[str, Any]]] = {}
    for name, rounds in raw.items():
        merged[name] = []
        kinds = list(dict.fromkeys(r["kind"] for rnd in rounds for r in rnd))
        for kind in kinds:
            per = [r for rnd in rounds for r in rnd if r["kind"] == kind]
            num = [r for r in per if r["cost_ms"] == r["cost_ms"]] or per
            merged[name].append(
                {
                    **per[0],
                    "rounds": len(num),
                    "cost_ms": statistics.median(r["cost_ms"] for r in num),
                    "p95_ms": statistics.median(r.get("p95_ms", float("nan")) for r in num),
                    "floor_ms": statistics.median(r["floor_ms"] for r in num),
                    **(
                        {
                            "cpu_ms": statistics.median(r["cpu_ms"] for r in num),
                            "floor_cpu_ms": statistics.median(r["floor_cpu_ms"] for r in num),
                        }
                        if all("cpu_ms" in r for r in num)
                        else {}
                    ),
                }
            )
    table = _table(merged)
    print(table)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            json.dumps(
                {
                    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "command": " ".join(sys.argv),
                    "loads": loads,
                    "trees": trees,
                    "rounds": raw,
                    "table": table,
                },
                indent=1,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
