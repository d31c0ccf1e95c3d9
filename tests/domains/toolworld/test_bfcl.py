"""The ``bfcl-multi-turn`` import on a few real BFCL tasks: the gold (BFCL's ground truth)
passes, empty turns fail, a changed argument fails, and each verdict is the one BFCL's own
``multi_turn_checker`` gives the same answer."""

from __future__ import annotations

import copy
import doctest
import json

import pytest

import referee.domains.toolworld.bench_api as bench_api
import referee.domains.toolworld.bfcl as bfcl
from referee.domains.toolworld.bench_api import BenchApiVerifier
from referee.domains.toolworld.bfcl import bfcl_tasks, load_category

IDS = {"multi_turn_base_0", "multi_turn_base_4"}


@pytest.fixture(scope="module")
def tasks():
    return list(bfcl_tasks(subset="base", ids=IDS))


@pytest.fixture(scope="module")
def verifier():
    with BenchApiVerifier() as v:
        yield v


def _bfcl_says(task, turns, tag):
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    entry, truth = next((e, a) for e, a in load_category("base") if f"bfcl/{e['id']}" == task.id)
    decoded = [
        [
            [
                f"{c['name']}({', '.join(f'{k}={v!r}' for k, v in c['arguments'].items())})"
                for c in turn
            ]
        ]
        if turn
        else []
        for turn in turns
    ]
    try:
        return multi_turn_checker(decoded, truth["ground_truth"], entry, "multi_turn_base", tag)[
            "valid"
        ]
    except AssertionError:
        return False


def test_gold_passes_and_empty_fails_as_bfcl_judges(tasks, verifier):
    assert sorted(t.id for t in tasks) == sorted(f"bfcl/{i}" for i in IDS)
    for task in tasks:
        gold = json.loads(task.hidden["reference"])["turns"]
        assert task.kind.value == "bench-api" and len(gold) == len(task.payload["turns"])
        assert verifier.verify(task, task.hidden["reference"]).passed
        assert _bfcl_says(task, gold, f"t_gold_{task.id[-1]}")
        empty = [[] for _ in gold]
        verdict = verifier.verify(task, json.dumps({"turns": empty}))
        assert not verdict.passed and not _bfcl_says(task, empty, f"t_empty_{task.id[-1]}")
        assert "no call" in verdict.tests[1].detail


def test_a_changed_argument_fails_in_both(tasks, verifier):
    task = next(t for t in tasks if t.id == "bfcl/multi_turn_base_0")
    turns = json.loads(task.hidden["reference"])["turns"]
    changed = copy.deepcopy(turns)
    changed[0][1]["arguments"]["dir_name"] = "tmp"  # mkdir(dir_name='temp') in the gold
    verdict = verifier.verify(task, json.dumps({"turns": changed}))
    assert not verdict.passed and "GorillaFileSystem" in verdict.tests[1].detail
    assert not _bfcl_says(task, changed, "t_changed")


def test_answers_in_other_shapes():
    one = bench_api.parse_answer('[{"function": {"name": "ls", "arguments": "{}"}}]')
    assert one.turns == [[{"name": "ls", "arguments": {}}]]
    text = 'Done.\n```json\n{"turns": [[{"name": "ls", "arguments": {"a": true}}]]}\n```\n'
    assert bench_api.parse_answer(text).turns == [[{"name": "ls", "arguments": {"a": True}}]]
    assert bench_api.parse_answer('[[{"name": 3}]]').errors


def test_docstrings():
    assert doctest.testmod(bench_api).failed == 0
    assert doctest.testmod(bfcl).failed == 0


def test_an_episode_in_the_environment_turn_by_turn(tasks):
    import asyncio

    from referee.domains.toolworld.bench_env import BenchApiEnv

    task = next(t for t in tasks if t.id == "bfcl/multi_turn_base_0")
    gold = json.loads(task.hidden["reference"])["turns"]

    async def episode() -> tuple[bool, list[str]]:
        env = BenchApiEnv()
        try:
            await env.reset(task)
            assert {"cd", "mkdir", "mv"} <= {t["function"]["name"] for t in env.tools()}
            users = []
            for turn in gold:
                calls = [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                    }
                    for i, c in enumerate(turn)
                ]
                step = await env.step({"role": "assistant", "content": "", "tool_calls": calls})
                assert len(step.observations) == len(turn) and not step.done
                step = await env.step({"role": "assistant", "content": "Done."})
                users += [o["content"] for o in step.observations if o["role"] == "user"]
            assert env.done and env.reason == "answered"
            return (await env.verify()).passed, users
        finally:
            await env.close()

    passed, users = asyncio.run(episode())
    assert passed and users == [t["user"] for t in task.payload["turns"][1:]]


def test_the_source_takes_no_file_and_names_its_subsets():
    from referee.errors import ConfigError
    from referee.tasks.sources import check_source_call

    with pytest.raises(ConfigError, match="takes no file"):
        check_source_call("bfcl-multi-turn", "heldout", "rows.jsonl")
    with pytest.raises(ConfigError, match="base, miss_func, miss_param, long_context"):
        load_category("parallel")
    assert check_source_call("bfcl-multi-turn", "train", None, ["subset"]).skips_bad_rows
