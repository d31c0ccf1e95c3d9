"""``referee tasks import intercode-bash``: InterCode's bash queries read from the installed
intercode-bench package; a few real queries imported through the source, the gold passing and
an empty answer failing, wrong output and stray files failing, the multi-turn environment
judging the last command's output, and refusals named by row."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from typing import Any

import pytest

from referee.domains.shell import intercode
from referee.domains.shell.env import ShellEnv
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("intercode") is None,
    reason="intercode-bench is not installed: make bootstrap (requirements-benchmarks.lock)",
)
ALL_ROWS = intercode.intercode_bash_rows
#: 1: count the tree (output); 4: sort a file into a new one (files); 8: convert PNG files
#: that do not exist (refused: an empty answer passes).
PICKED = (1, 4, 8)


def some_rows():
    return iter([r for r in ALL_ROWS() if r.number in PICKED])


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, sandbox) -> dict[str, Any]:
    mp = pytest.MonkeyPatch()
    mp.setattr(intercode, "intercode_bash_rows", some_rows)
    out = tmp_path_factory.mktemp("ic") / "bash.jsonl"
    try:
        summary = import_tasks("intercode-bash", None, out, skip_bad=True)
    finally:
        mp.undo()
    return {"summary": summary, **{t.id: t for t in read_tasks(out)}}


def test_the_queries_and_the_setup_come_from_the_package() -> None:
    rows = list(ALL_ROWS())
    assert len(rows) == 24 and {"query", "gold"} <= set(rows[0].data)
    assert "bash_queries.json: row 1" in rows[0].where
    setup = intercode.setup_script()
    assert "mkdir -p /workspace/testbed/dir1" in setup and "2100-01-01" in setup


def test_real_queries_import_and_a_refused_one_is_reported(tasks) -> None:
    summary = tasks["summary"]
    assert summary.count == 2
    assert (
        len(summary.skipped) == 1
        and "row 8: field 'gold': an empty answer passes" in (summary.skipped[0])
    )
    assert set(tasks) - {"summary"} == {"intercode-bash/1", "intercode-bash/4"}


def test_gold_passes_and_wrong_answers_fail(tasks, shell_verifier) -> None:
    count, sort = tasks["intercode-bash/1"], tasks["intercode-bash/4"]
    for task in (count, sort):
        assert shell_verifier.verify(task, task.hidden["reference"]).passed
        assert not shell_verifier.verify(task, "").passed
    # counting only the files (not the directories) prints another number
    v = shell_verifier.verify(count, "find /workspace/testbed -type f | wc -l")
    out = next(t for t in v.tests if t.name == "printed the expected output")
    assert not v.passed and out.status == "failed"
    # the right output, and a stray file left behind
    v = shell_verifier.verify(count, "find testbed | wc -l; touch testbed/stray")
    assert not v.passed
    assert [t.name for t in v.tests if t.status != "passed"] == ["left the expected files"]
    # the sorted lines in a file of another name (the one-line file sorts the same either way)
    wrong = sort.hidden["reference"].replace("_reverse_sorted", "_sorted")
    assert not shell_verifier.verify(sort, wrong).passed


def test_the_environment_judges_the_last_commands_output(tasks, sandbox) -> None:
    task = tasks["intercode-bash/1"]

    def run(command: str) -> dict[str, Any]:
        fn = {"name": "run", "arguments": json.dumps({"command": command})}
        return {"role": "assistant", "content": "",
                "tool_calls": [{"id": "c", "type": "function", "function": fn}]}  # fmt: skip

    async def episode(commands: list[str]) -> bool:
        env = ShellEnv(sandbox=sandbox)
        await env.reset(task)
        for c in commands:
            await env.step(run(c))
        verdict = await env.verify()
        await env.close()
        return verdict.passed

    assert asyncio.run(episode(["ls testbed", "find testbed | wc -l"]))
    assert not asyncio.run(episode(["find testbed | wc -l", "ls testbed"]))


def test_paths_are_rewritten_to_the_workspace() -> None:
    assert intercode.rewrite_paths("cat /testbed/a > testbed/b") == (
        "cat /workspace/testbed/a > testbed/b"
    )
