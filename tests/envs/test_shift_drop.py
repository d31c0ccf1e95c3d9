"""The measurement, small: a scripted fixer that solves every clean minirepo bug-fixing task,
and what shifts do to its success. The verdict judges the real workspace whatever the policy
was told. (bench/shift_drop.py measures every wrapper on more episodes.)"""

from __future__ import annotations

import pytest

from referee.envs import CodeEnv, make_env
from referee.rollout.shift_report import compare_shifts, shift_table
from tests.envs.helpers import MINIREPO, call, run, say
from tests.envs.shift_policy import LIMITS, run_condition

LIE = "InjectMisleadingLogs(p=1.0,lines=INFO: all tests passed)"


@pytest.fixture(scope="module")
def tasks(mini_tasks):
    return mini_tasks["bugfix"][:2]


def test_clean_success_is_total_and_each_shift_measures_its_drop(runtime, tasks):
    conditions = [[], ["FailToolsTransiently(p=1.0)"], [LIE]]
    trajectories = [t for shifts in conditions for t in run_condition(runtime, tasks, shifts)]
    rows = compare_shifts(trajectories)
    table = shift_table(rows)
    assert [r.label.split("(")[0] for r in rows] == [
        "clean", "FailToolsTransiently", "InjectMisleadingLogs"
    ], table  # fmt: skip
    clean, failing, lied = rows
    assert all(r.infra_errors == 0 and r.episodes == len(tasks) for r in rows), table
    assert clean.success == 1.0 and clean.drop == 0.0, table
    # Every call fails and the policy retries only once: it never gets to fix anything.
    assert failing.success == 0.0 and failing.drop == 1.0, table
    assert failing.perturbations["failed_calls"] == len(tasks) * LIMITS.max_turns, table
    # Told "all tests passed", it submits the unfixed workspace, which is judged as it is.
    assert lied.success == 0.0 and lied.perturbations["injected"] >= len(tasks), table
    # Reworded or cut test output: it cannot tell what to fix, and gives up (one task each).
    for shifts in (["ParaphraseToolOutput"], ["TruncateObservations(max_chars=200,keep=tail)"]):
        trajectories += run_condition(runtime, tasks[:1], shifts)
    shifted = [t for t in trajectories if t.shift]
    assert len(shifted) == 2 * len(tasks) + 2
    assert all(t.verdict is not None and not t.verdict.passed for t in shifted), table
    assert all(t.end_reason in ("submitted", "max_turns") for t in trajectories)


def test_the_verdict_follows_the_workspace_not_what_the_observations_say(runtime, tasks):
    task = tasks[0]
    (path,) = task.payload["overrides"]
    stack = f"AddObservationNoise(rate=0.1);ParaphraseToolOutput;TruncateObservations;{LIE}"

    async def episode(fix: bool) -> tuple[list[str], bool, bool]:
        env = make_env("code", runtime=runtime, limits=LIMITS, shift=stack)
        assert isinstance(env.env.env.env.env, CodeEnv)  # four wrappers, the first innermost
        await env.reset(task)
        seen = []
        if fix:
            r = await env.step(
                say(call("write_file", path=path, content=(MINIREPO / path).read_text()))
            )
            seen += [m["content"] for m in r.observations]
        r = await env.step(say(call("run_tests")))
        seen += [m["content"] for m in r.observations]
        await env.step(say(call("submit")))
        verdict = await env.verify()
        inner = await env.env.env.env.env.verify()  # the CodeEnv's own judgement
        await env.close()
        return seen, verdict.passed, verdict == inner

    lied_to, passed, same = run(episode(fix=False))
    assert any("INFO: all tests passed" in s for s in lied_to) and not passed and same
    _seen, passed, same = run(episode(fix=True))
    assert passed and same
