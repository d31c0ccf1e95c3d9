"""End to end: RolloutRunner + OpenAIPolicy on a fake server over loopback + a tool-using env."""

from __future__ import annotations

import json
from pathlib import Path

from referee.policy import OpenAIPolicy, Sampling
from referee.rollout import RolloutRunner
from referee.track.export import export_jsonl
from referee.track.store import TrackStore
from tests.policy.fake_openai import FakeOpenAI
from tests.rollout.fakes import CalculatorEnv, task


def test_multi_turn_tool_use_over_http_is_recorded_token_by_token(tmp_path: Path) -> None:
    tasks = [
        task("calc/6x7", answer="42"),
        task("calc/3x5", answer="15"),
        task("calc/2x2", answer="5"),
    ]
    with FakeOpenAI() as server, TrackStore(tmp_path) as store:
        policy = OpenAIPolicy(server.url, "calc")
        runner = RolloutRunner(
            CalculatorEnv,
            policy,
            concurrency=4,
            group_size=2,
            store=store,
            sampling=Sampling(temperature=0.7, max_tokens=64),
        )
        out = runner.run_sync(tasks)
        requests = list(server.requests)

    assert [t.reward for t in out] == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]  # 2x2 is not 5
    assert all(t.error is None and t.end_reason == "answered" for t in out)
    t = out[0]
    assert t.env == "calculator" and t.policy == "openai:calc" and t.tool_calls == 1
    call, answer = t.turns
    assert call.assistant["tool_calls"][0]["function"] == {
        "name": "multiply",
        "arguments": '{"a": 6, "b": 7}',
    }
    assert call.observations == [{"role": "tool", "tool_call_id": "call_6_7", "content": "42"}]
    assert call.finish_reason == "tool_calls" and answer.assistant["content"] == "42"
    for turn in t.turns:
        assert turn.token_ids is not None and turn.logprobs is not None and turn.prompt_token_ids
        assert len(turn.token_ids) == len(turn.logprobs) == turn.completion_tokens > 0
    assert call.metrics == {"tool_calls": 1.0}
    assert t.final_text() == "42"

    # The second request of an episode carries the tool call and its result back.
    assert len(requests) == 12
    second = next(
        r
        for r in requests
        if r["messages"][-1]["role"] == "tool" and "6x7" in r["messages"][1]["content"]
    )
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["id"] == "call_6_7"
    assert second["tools"][0]["function"]["name"] == "multiply"
    assert second["temperature"] == 0.7 and second["logprobs"] is True

    with TrackStore(tmp_path, create=False) as store:
        assert export_jsonl(store, tmp_path / "trajectories.jsonl") == len(out)
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["id"] for x in lines) == sorted(t.id for t in out)


def test_a_server_that_is_down_costs_its_rollouts_not_the_batch() -> None:
    with FakeOpenAI() as server:
        down = OpenAIPolicy(server.url, "down", max_retries=1, backoff_s=0.01)
        out = RolloutRunner(CalculatorEnv, down, max_infra_retries=1, retry_backoff_s=0).run_sync(
            [task("calc/1x1", answer="1"), task("calc/2x3", answer="6")]
        )
        assert server.counts["down"] == 2 * 2 * 2  # rollouts x runner attempts x HTTP attempts
    for t in out:
        assert t.error is not None and (t.error.kind, t.error.where) == ("infra", "policy")
        assert "HTTP 503" in t.error.message and t.attempts == 2
