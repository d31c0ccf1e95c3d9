"""``POST /openrlhf/reward`` (``--compat openrlhf``) driven by OpenRLHF's own executor
(``openrlhf`` 0.11.2, ``SingleTurnAgentExecutor``; tests/service/contract_probes/openrlhf_probe.py
stands in for the tokenizer and vLLM) against a real server and sandbox."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.compat.serving import assert_json_error, require_clients, served

require_clients("openrlhf")

from tests.service.contract_probes import openrlhf_probe  # noqa: E402

COMPAT = ("openrlhf",)
PATH = "/openrlhf/reward"
TASK = "HumanEval/2"  # truncate_number(x) -> x % 1.0


@pytest.fixture(scope="module")
def rm(he_file: Path) -> Any:
    with served(he_file, compat=COMPAT) as (url, service):
        yield url + PATH, service


@pytest.fixture(scope="module")
def task(he_tasks: list[Any]) -> Any:
    return next(t for t in he_tasks if t.id == TASK)


def test_the_reference_body_earns_1_and_a_wrong_one_0(rm: Any, task: Any) -> None:
    url, _ = rm
    prompt = task.payload["code_prompt"]
    out = openrlhf_probe.reward_for(url, prompt, TASK, task.hidden["reference"])
    assert out["reward"] == [1.0] and out["scores"] == [1.0]
    assert out["extra_logs"]["passed"] == [1.0]
    assert out["extra_logs"]["tests_passed"] == out["extra_logs"]["tests_total"]
    out = openrlhf_probe.reward_for(url, prompt, TASK, "    return -1.0\n")
    assert out["reward"] == [0.0] and out["extra_logs"]["passed"] == [0.0]


def test_a_chat_answer_with_prose_a_fence_and_an_end_token_is_read_like_referee_reads_it(
    rm: Any, task: Any
) -> None:
    url, _ = rm
    chat_prompt = "<|im_start|>user\nComplete truncate_number.<|im_end|>\n<|im_start|>assistant\n"
    answer = (
        "The decimal part is what is left after the integer part:\n```python\n"
        "def truncate_number(number: float) -> float:\n    return number - int(number)\n"
        "```\nDone.<|im_end|>"
    )
    label = json.dumps({"task_id": TASK, "source": "humaneval"})
    assert openrlhf_probe.reward_for(url, chat_prompt, label, answer)["reward"] == [1.0]
    # A bare body with the end-of-turn token the decode kept (skip_special_tokens=False).
    body = task.hidden["reference"] + "<|im_end|>"
    assert openrlhf_probe.reward_for(url, task.payload["code_prompt"], TASK, body)["reward"] == [
        1.0
    ]


@pytest.mark.parametrize(
    "exploit",
    [
        "    import sys; sys.exit(0)\n",
        "    import os; os._exit(0)\n",
        "    print('All tests passed!')\n    raise SystemExit(0)\n",
        "    raise KeyboardInterrupt\n",
    ],
)
def test_exploits_earn_nothing(rm: Any, task: Any, exploit: str) -> None:
    url, _ = rm
    out = openrlhf_probe.reward_for(url, task.payload["code_prompt"], TASK, exploit)
    assert out["reward"] == [0.0], out["extra_logs"]


def test_a_batch_over_http_gets_one_reward_per_query_in_order(
    rm: Any, gold: list[dict[str, str]], he_tasks: list[Any]
) -> None:
    url, _ = rm
    by_id = {t.id: t for t in he_tasks}
    samples = [gold[0], {"task_id": gold[1]["task_id"], "completion": "    return None\n"}, gold[3]]
    prompts = [by_id[s["task_id"]].payload["code_prompt"] for s in samples]
    queries = [p + s["completion"] for p, s in zip(prompts, samples, strict=True)]
    labels = [s["task_id"] for s in samples]
    (reply,) = openrlhf_probe.fetch(url, queries, prompts, labels)
    assert reply["rewards"] == [1.0, 0.0, 1.0] == reply["scores"]
    assert reply["extra_logs"]["passed"] == [1.0, 0.0, 1.0]


def test_an_unknown_task_is_a_422_and_never_a_silent_0(rm: Any, task: Any) -> None:
    url, _ = rm
    body = {"query": ["p    return 1\n"], "prompts": ["p"], "labels": ["HumanEval/999"]}
    error = assert_json_error(httpx.post(url, json=body), 422)
    assert error["error"] == "unknown_task" and error["unknown_task_ids"] == ["HumanEval/999"]
    for label in ['{"id": "HumanEval/2"}', "", None]:
        error = assert_json_error(httpx.post(url, json={**body, "labels": [label]}), 422)
        assert error["error"] == "invalid_label" and "task_id" in error["message"]


def test_an_infra_error_is_a_503_so_openrlhf_retries_and_drops_the_reward(
    he_file: Path, task: Any
) -> None:
    """OpenRLHF has no 'skip' reward: after its 5 tries (1 s apart) the sample's reward is None,
    which it logs; a 0 would train on a failure that was not the model's."""
    from referee.verify.verdict import Verdict

    calls = 0

    def broken(t: Any, completion: str, deadline_s: float) -> Verdict:
        nonlocal calls
        calls += 1
        return Verdict.infra(t.id, "the sandbox's worker died", "service")

    with served(he_file, compat=COMPAT) as (url, service):
        service.engine._judge = broken
        prompt = task.payload["code_prompt"]
        body = {"query": [prompt + "    return 0\n"], "prompts": [prompt], "labels": [TASK]}
        error = assert_json_error(httpx.post(url + PATH, json=body), 503)
        assert error["error"] == "infra_error" and "worker died" in error["message"]
        assert error["infra_errors"] == [
            {"task_id": TASK, "infra_error": "the sandbox's worker died"}
        ]
        started = time.monotonic()
        out = openrlhf_probe.reward_for(url + PATH, prompt, TASK, task.hidden["reference"])
        assert out["reward"] is None and out["scores"] is None
        assert calls == 1 + 5 and time.monotonic() - started >= 4


def test_hostile_bodies_get_4xx_json_never_a_500(he_file: Path) -> None:
    ok = {"query": ["pq"], "prompts": ["p"], "labels": ["HumanEval/0"]}
    bad: list[tuple[dict[str, Any], int]] = [
        ({"content": b"{" * 10_000}, 422),
        ({"content": b'{"query": ['}, 422),
        ({"content": b'"just a string"'}, 422),
        ({"json": {"query": ["x"]}}, 422),
        ({"json": {**ok, "query": "pq"}}, 422),
        ({"json": {**ok, "query": [1]}}, 422),
        ({"json": {**ok, "labels": [["HumanEval/0"]]}}, 422),
        ({"json": {**ok, "labels": [{"task_id": 7}]}}, 422),
        ({"json": {**ok, "labels": ["x" * 10_000]}}, 422),
        ({"json": {**ok, "prompts": ["p", "q"]}}, 422),
        ({"json": {"query": [], "prompts": [], "labels": []}}, 422),
        ({"json": {**ok, "query": ["no prompt here"], "prompts": ["something else"]}}, 422),
        ({"json": {**ok, "labels": ["../../etc/passwd"]}}, 422),
        ({"content": b"x" * (2 * 1024 * 1024)}, 413),
    ]
    with (
        served(he_file, compat=COMPAT, max_body_mb=1) as (url, _),
        httpx.Client(base_url=url, timeout=30) as c,
    ):
        for kw, status in bad:
            r = c.post(PATH, headers={"content-type": "application/json"}, **kw)
            assert_json_error(r, status)
        assert c.post(PATH, json={**ok, "extra": 1}).status_code == 200
