"""Program tasks in environments: CodeEnv judges a fenced block tagged with its language in the
runtime's program sandbox, made when the first program task comes; the answer every trainer's
reward route reads (``answer_for``) keeps the tag. The program tools are in
test_code_env_program_tools.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from referee.envs import CodeEnv, CodeRuntime
from referee.envs.answers import answer_for, program_answer, text_answer
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSet
from referee.verify.program.redteam import GOLD, SUM_TASK


def _task(name: str, prompt: str, cases: list[dict[str, str]]) -> Task:
    return Task.create(
        name=f"test/{name}-v1",
        prompt=prompt,
        kind="program",
        answer_format="code",
        payload={"io": "stdin", "examples": [], "languages": None, "time_limit_s": 2.0},
        hidden={"cases": cases, "compare": "tokens"},
    )


DOUBLE = _task(
    "double",
    "Read an integer n and print 2n.",
    [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in (1, 7, -4)],
)
CPP_ANSWER = f"The sum fits in 64 bits, so:\n\n```cpp\n{GOLD['cpp']}```\n<|im_end|>"
PY_WRONG = "Easy:\n```python\nprint(int(input()) * 3)\n```\n"


@pytest.fixture(scope="module")
def program_runtime(harness_sb: Any) -> Iterator[CodeRuntime]:
    with CodeRuntime(sandbox=harness_sb, python_workers=1) as rt:
        yield rt


def _reply(messages: list[dict[str, Any]], tools: Any) -> str:
    prompt = str(messages[-1]["content"])
    return CPP_ANSWER if "sum" in prompt else PY_WRONG


def test_a_rollout_judges_program_tasks_single_turn(program_runtime: CodeRuntime) -> None:
    assert program_runtime._program_sandbox is None  # nothing made before a program task comes
    runner = RolloutRunner(
        lambda: CodeEnv(program_runtime),  # multi-turn; a tagged block is a final answer
        ScriptedPolicy(_reply),
        concurrency=2,
        max_infra_retries=0,
    )
    out = runner.run_sync([SUM_TASK, DOUBLE])
    assert [t.task_id for t in out] == [SUM_TASK.id, DOUBLE.id]
    assert all(t.error is None for t in out), [t.error for t in out]
    assert [t.reward for t in out] == [1.0, 0.0], [t.verdict for t in out]
    assert [t.end_reason for t in out] == ["answered", "answered"]
    assert out[1].verdict is not None and out[1].verdict.tests[0].detail.startswith("wrong answer")
    assert program_runtime._program_sandbox is not None
    assert "cpp" in program_runtime.program_sandbox.toolchains


def test_single_turn_code_env_offers_no_tools_for_a_program_task(
    program_runtime: CodeRuntime,
) -> None:
    async def episode() -> tuple[list[Any], float]:
        env = CodeEnv(program_runtime, single_turn=None)  # make_env("code"): one answer
        await env.reset(DOUBLE)
        tools = env.tools()
        await env.step({"role": "assistant", "content": "```py\nprint(2 * int(input()))\n```"})
        verdict = await env.verify()
        await env.close()
        return tools, verdict.reward

    assert asyncio.run(episode()) == ([], 1.0)


def test_answer_for_keeps_the_language_of_the_last_tagged_block() -> None:
    text = "Sample:\n```\n3\n1 2 3\n```\nA first try:\n```python\nprint(0)\n```\nBetter:\n" + (
        f"```c++\n{GOLD['cpp']}```\n<|im_end|>"
    )
    assert answer_for(SUM_TASK, text) == f"```c++\n{GOLD['cpp']}```\n"
    # Bare code stays as it is (the verifier reads it as Python); no fenced block with
    # final_only (multi-turn talk) is no answer.
    assert answer_for(SUM_TASK, "print(6)") == "print(6)"
    assert text_answer("no code here", kind="program", final_only=True) is None
    assert program_answer("```cpp\n\n```") is None
    # A block holding backticks is fenced with a longer fence.
    assert program_answer("```python\nprint('```')\n```").startswith("````python\n")


def test_a_verifier_set_judges_raw_program_answers(program_sb: Any) -> None:
    with VerifierSet(program_sandbox=program_sb) as verifiers:
        raw = verifiers.verify(SUM_TASK, CPP_ANSWER)
        extracted = verifiers.verify(SUM_TASK, answer_for(SUM_TASK, CPP_ANSWER))
        wrong = verifiers.verify(DOUBLE, answer_for(DOUBLE, PY_WRONG))
        assert verifiers.verifier(SUM_TASK.kind).sandbox is program_sb  # type: ignore[attr-defined]
    # On failure, show each case's status and detail (pytest cuts a Verdict's repr short).
    assert raw.passed, raw.tests
    assert extracted.passed, extracted.tests
    assert raw.reward == extracted.reward == 1.0
    assert wrong.reward == 0.0 and wrong.infra_error is None


def test_the_trl_reward_function_judges_program_tasks(program_sb: Any) -> None:
    from referee.train.trl_adapter import reward_function

    # A reasoning model's first block is scratch work; its last tagged block is the answer.
    scratch = "Try:\n```text\n3 4\n```\n" + CPP_ANSWER
    with VerifierSet(program_sandbox=program_sb) as verifiers:
        reward = reward_function(verifiers, [SUM_TASK, DOUBLE])
        got = reward(
            prompts=["", "", ""],
            completions=[scratch, [{"role": "assistant", "content": PY_WRONG}], "nothing"],
            task_id=[SUM_TASK.id, DOUBLE.id, DOUBLE.id],
        )
    assert got == [1.0, 0.0, 0.0]


def test_trainer_episodes_answer_program_tasks_in_one_turn() -> None:
    from referee.train.openrlhf import openrlhf_row
    from referee.train.skyrl import TextEpisode

    row = openrlhf_row(SUM_TASK)
    assert [m["role"] for m in row["input"]] == ["user"]  # no tools offered
    episode = TextEpisode({"task_id": SUM_TASK.id}, tasks=[SUM_TASK])
    assert not episode.multi_turn
    _obs, reward, done, _meta = episode.step(CPP_ANSWER)
    assert done and reward == 1.0
