"""Running a dataframe program on one set of input tables, in the sandbox.

The sandbox sees the venv's ``site-packages`` read-only (pandas, numpy) and nothing else of the
host; every fork-server worker has pandas and the grader's runner
(:mod:`referee.domains.dataframe.sandbox_runner`) loaded once, so a run costs a fork, not an
import of pandas. One run per input set, each with its own time and memory limits, enforced by
killing it. What comes back is plain data read from the run's stdout frames (tagged with a
fresh nonce per run); exit codes and the program's own prints play no part.

>>> with dataframe_sandbox() as sb:                                        # doctest: +SKIP
...     out = run_program(sb, "def transform(t):\\n    return t['a']\\n",
...                       {"a": {"x": "int"}}, {"a": "x\\n1\\n"})
>>> out.result["rows"]                                                     # doctest: +SKIP
[[['i', 1]]]
"""

from __future__ import annotations

import functools
import json
import secrets
import sysconfig
from dataclasses import dataclass
from typing import Any

from referee.domains.kit import runner_sandbox, runner_source
from referee.sandbox import ExecResult, Limits, Sandbox
from referee.sandbox.core import PATHS_MOUNT
from referee.sandbox.cputime import cpu_limits, judged_run

__all__ = [
    "DEFAULT_LIMITS",
    "RUNNER_MODULE",
    "RunOutcome",
    "dataframe_sandbox",
    "frames",
    "run_program",
    "script_program",
]

RUNNER_MODULE = "referee_dataframe_runner"
_RUNNER_SOURCE = runner_source("referee.domains.dataframe", "sandbox_runner.py")
_MARK = "\x1eDF "

#: Per input set: a generous wall clock for small tables, and enough memory for pandas itself
#: (about 120 MB resident once imported) plus the tables.
DEFAULT_LIMITS = Limits(timeout_s=10.0, memory_mb=1024)


def _preload() -> str:
    # Runs in each worker at start: the venv's packages first on the path, then pandera (for
    # the programs that check their output against a task's data contract: a run's sys.path
    # no longer holds the venv, so only what a worker imported here can be imported), pandas
    # and the runner, compiled once and inherited by every forked run.
    return (
        f"import sys\nsys.path.insert(0, {PATHS_MOUNT + '/0'!r})\n"
        "try:\n    import pandera.pandas\nexcept ImportError:\n    pass\n"
        "import types as _t\n"
        f"_m = _t.ModuleType({RUNNER_MODULE!r})\n"
        f"exec(compile({_RUNNER_SOURCE!r}, '<{RUNNER_MODULE}>', 'exec'), _m.__dict__)\n"
        f"sys.modules[{RUNNER_MODULE!r}] = _m\n"
    )


def dataframe_sandbox(**kwargs: Any) -> Sandbox:
    """A sandbox whose workers have pandas and the dataframe runner loaded (the host's
    ``site-packages`` bound read-only at ``/opt/paths/0``)."""
    site = sysconfig.get_paths()["purelib"]
    return runner_sandbox({"referee_dataframe_boot": _preload()}, python_paths=(site,), **kwargs)


def frames(stdout: str, nonce: str) -> list[dict[str, Any]]:
    """The frames tagged with ``nonce`` in a run's stdout, in order; malformed lines are
    ignored (the candidate can write to the same stream)."""
    prefix = _MARK + nonce + " "
    out = []
    for line in stdout.split("\n"):
        if line.startswith(prefix):
            try:
                frame = json.loads(line[len(prefix) :])
            except (ValueError, RecursionError):
                continue
            if isinstance(frame, dict):
                out.append(frame)
    return out


def _program(source: str, schema: dict[str, dict[str, str]], nonce: str) -> str:
    # The candidate's source is the program itself (compiled before the fork); the schema
    # crosses as a JSON string literal, so nothing of it is evaluated as code.
    literal = json.dumps(json.dumps(schema))
    return (
        f"import {RUNNER_MODULE} as __referee_df, json as __referee_json\n"
        f"__referee_df.begin({nonce!r})\n"
        f"{source}\n"
        f"__referee_df.finish(globals(), __referee_json.loads({literal}))\n"
    )


def script_program(script: str, schema: dict[str, dict[str, str]]) -> str:
    """A free-form script (the environment's ``run_python`` tool) with ``tables`` already
    loaded from ``inputs/`` and ``pd`` imported; its prints are its output."""
    literal = json.dumps(json.dumps(schema))
    return (
        f"import {RUNNER_MODULE} as __referee_df, json as __referee_json\n"
        "import pandas as pd\n"
        f"tables = __referee_df.load_tables(__referee_json.loads({literal}))\n"
        f"{script}\n"
    )


@dataclass(frozen=True)
class RunOutcome:
    """What one run of a program on one input set reported, read from its frames.

    Exactly one of ``result`` (the reported table) and ``error`` (why there is none) is set;
    ``infra`` marks an error of the grader's own (its input did not load), not the program's.
    """

    result: dict[str, Any] | None
    error: str = ""
    infra: bool = False
    exec_result: ExecResult | None = None


def run_program(
    sandbox: Sandbox,
    source: str,
    schema: dict[str, dict[str, str]],
    inputs: dict[str, str],
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> RunOutcome:
    """Run ``source`` (defining ``transform(tables)``) on the tables ``inputs`` (name -> CSV
    text). A :class:`~referee.errors.RefereeError` from the sandbox propagates (an infra
    failure for the caller to record).

    ``limits.timeout_s`` is a limit on CPU time, with a wall-clock backstop
    (:mod:`referee.sandbox.cputime`): a loaded machine slows a run, never fails it."""
    nonce = secrets.token_hex(12)
    files = {f"inputs/{name}.csv": text for name, text in inputs.items()}
    run = functools.partial(
        sandbox.run_python,
        _program(source, schema, nonce),
        name="solution.py",
        files=files,
        limits=cpu_limits(limits.timeout_s, limits),
    )
    r, spent = judged_run(run, limits.timeout_s)
    found = frames(r.stdout, nonce)
    if spent in ("time-limit", "idle"):
        how = "of CPU" if spent == "time-limit" else "(idle or blocked)"
        return RunOutcome(
            None, f"time limit of {limits.timeout_s:g}s {how} exceeded", exec_result=r
        )
    if len(found) > 1:
        return RunOutcome(None, "reported more than one outcome", exec_result=r)
    if not found:
        if r.timed_out:
            why = f"time limit of {limits.timeout_s:g}s exceeded"
        elif r.memory_exceeded:
            why = f"memory limit of {limits.memory_mb} MB exceeded"
        else:
            why = f"no result reported ({r.summary()})"
        return RunOutcome(None, why, exec_result=r)
    frame = found[0]
    if "result" in frame and isinstance(frame["result"], dict):
        return RunOutcome(frame["result"], exec_result=r)
    if "input_error" in frame:
        return RunOutcome(None, f"input failed to load: {frame['input_error']}", True, r)
    if "load_error" in frame:
        return RunOutcome(None, f"program failed to load: {frame['load_error']}", exec_result=r)
    if "raised" in frame:
        return RunOutcome(
            None, f"transform raised {frame['raised']}: {frame.get('message', '')}", exec_result=r
        )
    if "unreportable" in frame:
        return RunOutcome(None, f"unreportable result: {frame['unreportable']}", exec_result=r)
    return RunOutcome(None, "malformed outcome", exec_result=r)
