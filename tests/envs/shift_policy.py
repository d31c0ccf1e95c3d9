"""A scripted bug-fixing policy for the minirepo tasks, and a clean-versus-shifted measurement.

The policy (:func:`fixer_policy`) plays a repository episode the way a simple agent would,
reading every decision from the tool outputs (never from the task's prompt or hidden data):

1. ``list_files``, and parse the listing (``path (N bytes)`` lines, in any order);
2. ``run_tests``, and parse the summary (``K of N tests passed``) and the ``FAILED`` lines;
   if it reads that all tests pass (the summary, or an ``all tests passed`` log line) it
   submits at once: it believes there is nothing to fix;
3. the module of the failing tests (``tests/test_stats.py`` -> a listed ``*/stats.py``),
   ``read_file`` it, then ``write_file`` the fix (its oracle: the module as the fixture
   repository has it), ``run_tests`` again, ``submit``.

A tool output that reads as a transient fault (503, 429, a reset connection, no free sandbox)
is retried once; a second failure of the same call makes it give up and submit. What it
cannot parse (a mangled path, a reworded summary) also makes it give up. So it succeeds on
every clean episode, and each shift's drop says which of its readings the shift breaks.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.envs import CodeEnv, CodeRuntime, EpisodeLimits
from referee.envs.shift import shift_factory
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.rollout.trajectory import Trajectory
from referee.tasks.model import Task

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"
LIMITS = EpisodeLimits(max_turns=12, episode_timeout_s=120.0)

TRANSIENT = re.compile(
    r"temporarily unavailable|connection reset|timed out waiting|rate limit|\b(?:503|429)\b",
    re.IGNORECASE,
)
LISTED = re.compile(r"^(\S+) \((\d+) bytes\)$", re.MULTILINE)
SUMMARY = re.compile(r"^(\d+) of (\d+) tests passed", re.MULTILINE)
FAILED = re.compile(r"^FAILED (\S+?)::", re.MULTILINE)
ALL_PASSED = re.compile(r"all tests passed", re.IGNORECASE)


def bugfix_tasks(limit: int = 6, seed: int = 3) -> list[Task]:
    """Bug-fixing tasks synthesised from the fixture repository (a few seconds)."""
    from referee.synth.pipeline import synthesize

    store = "file://" + tempfile.mkdtemp(prefix="shift-artifacts-")
    report = synthesize(str(MINIREPO), kinds=("bugfix",), limit=limit, seed=seed, store=store)
    return list(report.tasks)


def oracle_fixes() -> dict[str, str]:
    """The fixture repository's modules as they should be: what the policy writes."""
    return {
        str(p.relative_to(MINIREPO)): p.read_text() for p in sorted(MINIREPO.glob("minilib/*.py"))
    }


def _call(turn: int, name: str, **args: Any) -> dict[str, Any]:
    call = {"id": f"t{turn}", "type": "function", "function": {"name": name, "arguments": ""}}
    call["function"]["arguments"] = json.dumps(args)
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _history(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, what came back) for each call the policy made so far."""
    out = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        call = m["tool_calls"][0]
        name, args = call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
        result = next(
            (
                str(x.get("content", ""))
                for x in messages[i + 1 :]
                if x.get("role") == "tool" and x.get("tool_call_id") == call["id"]
            ),
            "",
        )
        out.append((name, args, result))
    return out


def _target(listing: str, tests: str) -> str | None:
    """The module the failing tests exercise, among the listed files; None if unreadable."""
    listed = [p for p, _size in LISTED.findall(listing) if not p.startswith("tests/")]
    for test_file in FAILED.findall(tests):
        stem = Path(test_file).stem.removeprefix("test_")
        for path in listed:
            if path.endswith(f"/{stem}.py"):
                return path
    return None


def _all_passed(tests: str) -> bool:
    m = SUMMARY.search(tests)
    return bool(ALL_PASSED.search(tests)) or (m is not None and m.group(1) == m.group(2))


def fixer_reply(
    messages: list[dict[str, Any]], fixes: dict[str, str], retries: int = 1
) -> dict[str, Any]:
    """The policy's next message (see the module docstring)."""
    history = _history(messages)
    turn = len(history)
    if history and TRANSIENT.search(history[-1][2]):
        name, args, _ = history[-1]
        streak = 0
        for n, a, r in reversed(history):
            if (n, a) != (name, args) or not TRANSIENT.search(r):
                break
            streak += 1
        return _call(turn, name, **args) if streak <= retries else _call(turn, "submit")
    ok = [(n, a, r) for n, a, r in history if not TRANSIENT.search(r)]
    listings = [r for n, _, r in ok if n == "list_files"]
    if not listings:
        return _call(turn, "list_files")
    runs = [r for n, _, r in ok if n == "run_tests"]
    if not runs:
        return _call(turn, "run_tests")
    if _all_passed(runs[0]):
        return _call(turn, "submit")  # it believes there is nothing to fix
    target = _target(listings[0], runs[0])
    if target is None or target not in fixes:
        return _call(turn, "submit")  # gives up: cannot tell what to fix
    reads = [r for n, a, r in ok if n == "read_file" and a.get("path") == target]
    if not reads:
        return _call(turn, "read_file", path=target)
    if reads[0].lower().startswith("error"):
        return _call(turn, "submit")
    if not any(n == "write_file" for n, _, _ in ok):
        return _call(turn, "write_file", path=target, content=fixes[target])
    if len(runs) < 2:
        return _call(turn, "run_tests")
    return _call(turn, "submit")


def fixer_policy(retries: int = 1) -> ScriptedPolicy:
    fixes = oracle_fixes()
    return ScriptedPolicy(
        lambda messages, tools: fixer_reply(messages, fixes, retries), name="fixer"
    )


def run_condition(
    runtime: CodeRuntime,
    tasks: Sequence[Task],
    shifts: Sequence[str],
    *,
    episodes: int = 1,
    concurrency: int = 2,
    limits: EpisodeLimits = LIMITS,
    retries: int = 1,
) -> list[Trajectory]:
    """``episodes`` rollouts of each task by the fixer policy, under ``shifts`` (none: clean)."""
    factory = shift_factory(lambda: CodeEnv(runtime, limits=limits), list(shifts))
    runner = RolloutRunner(
        factory,
        fixer_policy(retries),
        concurrency=concurrency,
        group_size=episodes,
        limits=limits,
        max_infra_retries=1,
        log_faults=False,
    )
    return runner.run_sync(list(tasks))
