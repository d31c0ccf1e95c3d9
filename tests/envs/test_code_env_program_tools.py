"""Program tasks with tools: write solution.<ext>, build and run it on an input or on the
visible examples, submit the file; hidden cases never reach the model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from referee.envs import CodeEnv, CodeRuntime
from referee.envs.program_tools import solution_language
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner
from referee.tasks.model import Task
from referee.verify.program.redteam import GOLD

from .helpers import call, run, say

HIDDEN_INPUT = "4\n10 20 30 40\n"
SUM = Task.create(
    name="test/program-tools-sum-v1",
    prompt="Read n, then n integers; print their sum.\nExample input:\n3\n1 2 3\nOutput:\n6\n",
    kind="program",
    answer_format="code",
    payload={
        "io": "stdin",
        "examples": [
            {"input": "3\n1 2 3\n", "output": "6\n"},
            {"input": "2\n-5 5\n", "output": "0\n"},
        ],
        "languages": None,
        "time_limit_s": 1.0,
    },
    hidden={
        "cases": [
            {"input": HIDDEN_INPUT, "output": "100\n"},
            {"input": "1\n-7\n", "output": "-7\n"},
        ],
        "compare": "tokens",
    },
)
WRONG_C = (
    '#include <stdio.h>\nint main(void){int n; scanf("%d",&n); printf("%d\\n", n); return 0;}\n'
)


@pytest.fixture(scope="module")
def runtime(harness_sb: Any, program_sb: Any) -> Iterator[CodeRuntime]:
    with CodeRuntime(sandbox=harness_sb, program_sandbox=program_sb, python_workers=1) as rt:
        yield rt


def test_extensions_choose_the_language() -> None:
    assert [solution_language(p) for p in ("a.py", "s.CPP", "x.rs", "notes.md")] == [
        "python",
        "cpp",
        "rust",
        None,
    ]


def test_an_episode_writes_runs_tests_and_submits_the_solution_file(runtime: CodeRuntime) -> None:
    async def episode() -> tuple[list[str], list[str], Any]:
        env = CodeEnv(runtime, single_turn=False)
        first = await env.reset(SUM)
        names = [t["function"]["name"] for t in env.tools()]
        seen = []
        for message in (
            say(call("write_file", path="solution.c", content=WRONG_C)),
            say(call("run_tests")),
            say(call("write_file", path="solution.c", content="int main( {")),
            say(call("run_program", path="solution.c", stdin="1\n5\n")),
            say(call("write_file", path="solution.cpp", content=GOLD["cpp"])),
            say(call("run_program", path="solution.cpp", stdin="2\n40 2\n")),
            say(call("run_tests")),
            say(call("submit")),
        ):
            result = await env.step(message)
            seen += [str(o["content"]) for o in result.observations]
        verdict = await env.verify()
        await env.close()
        return names, [str(first[0]["content"]), *seen], verdict

    names, seen, verdict = run(episode())
    assert names == ["list_files", "read_file", "write_file", "run_program", "run_tests", "submit"]
    assert "solution.<ext>" in seen[0]
    assert seen[2].startswith("solution.c: 0 of 2 visible examples passed"), seen[2]
    assert "FAILED example 1" in seen[2]
    assert seen[4].startswith("compile error"), seen[4]
    assert "42" in seen[6], seen[6]
    # The newest solution file (solution.cpp) is the one run and submitted.
    assert seen[7].startswith("solution.cpp: 2 of 2 visible examples passed"), seen[7]
    assert seen[8] == "submitted"
    assert not any(HIDDEN_INPUT in s or "100" in s for s in seen[1:])  # hidden cases stay hidden
    assert verdict.passed and verdict.reward == 1.0


def test_submitting_without_a_solution_file_earns_nothing(runtime: CodeRuntime) -> None:
    async def episode() -> tuple[str, float, str]:
        env = CodeEnv(runtime, single_turn=False)
        await env.reset(SUM)
        tested = await env.step(say(call("run_tests")))
        await env.step(say(call("write_file", path="notes.txt", content="6")))
        await env.step(say(call("submit")))
        answer, verdict = await env.answer(), await env.verify()
        await env.close()
        return str(tested.observations[0]["content"]), verdict.reward, answer

    tested, reward, answer = run(episode())
    assert tested.startswith("error: write your program to solution.<ext>")
    assert reward == 0.0 and answer == ""


def test_a_disallowed_language_is_refused_by_the_tool(runtime: CodeRuntime) -> None:
    only_python = SUM.model_copy(update={"payload": {**SUM.payload, "languages": ["python"]}})

    async def episode() -> str:
        env = CodeEnv(runtime, single_turn=False)
        await env.reset(only_python)
        await env.step(say(call("write_file", path="solution.cpp", content=GOLD["cpp"])))
        result = await env.step(say(call("run_program", path="solution.cpp", stdin="")))
        await env.close()
        return str(result.observations[0]["content"])

    assert run(episode()) == "error: this task accepts python, not cpp"


def test_a_rollout_with_a_scripted_policy_solves_it_with_the_tools(runtime: CodeRuntime) -> None:
    script = [
        say(call("write_file", path="solution.py", content=GOLD["python"])),
        say(call("run_tests")),
        say(call("submit")),
    ]

    def reply(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        turn = sum(m["role"] == "assistant" for m in messages)
        return script[turn]

    runner = RolloutRunner(
        lambda: CodeEnv(runtime, single_turn=False), ScriptedPolicy(reply), max_infra_retries=0
    )
    (trajectory,) = runner.run_sync([SUM])
    assert trajectory.error is None and trajectory.reward == 1.0
    assert trajectory.end_reason == "submitted"
