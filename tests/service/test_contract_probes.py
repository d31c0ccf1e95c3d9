"""The trainers' own client code against a recording stub: what each sends, how it reads replies.

The requests each client sends are kept in tests/service/fixtures/wire/*.json (the "recorded
request shapes" referee's server routes are built against); these tests fail when an installed
client starts sending something else. ``REFEREE_RECORD_WIRE=1`` rewrites those fixtures instead.

The clients come from requirements-contracts.lock (scripts/bootstrap-contracts.sh; ``make test``
installs them). Without them the tests skip, unless ``REFEREE_REQUIRE_CONTRACTS`` is set.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.service.wire_stub import SANDBOX_OK, WireStub

WIRE = Path(__file__).parent / "fixtures" / "wire"
RECORD = bool(os.environ.get("REFEREE_RECORD_WIRE"))

_missing = [
    m for m in ("sandbox_fusion", "openenv", "openrlhf", "verl") if not importlib.util.find_spec(m)
]
if _missing:
    if os.environ.get("REFEREE_REQUIRE_CONTRACTS"):
        raise RuntimeError(
            f"REFEREE_REQUIRE_CONTRACTS is set but {', '.join(_missing)} is not installed: "
            "run scripts/bootstrap-contracts.sh"
        )
    pytest.skip(
        f"client packages missing ({', '.join(_missing)}): scripts/bootstrap-contracts.sh",
        allow_module_level=True,
    )

from tests.service.contract_probes import (  # noqa: E402
    openenv_probe,
    openrlhf_probe,
    sandbox_fusion_probe,
    verl_probe,
)


@pytest.fixture(scope="module")
def stub() -> Iterator[WireStub]:
    with WireStub() as s:
        yield s


@pytest.fixture(autouse=True)
def _fresh(stub: WireStub) -> None:
    stub.reset()


def check_fixture(name: str, client: str, recorded: dict[str, Any]) -> None:
    """Compare with (or, with REFEREE_RECORD_WIRE=1, write) fixtures/wire/<name>.json."""
    path = WIRE / f"{name}.json"
    doc = {"client": client, "recorded_by": "tests/service/test_contract_probes.py", **recorded}
    if RECORD:
        path.write_text(json.dumps(doc, indent=2) + "\n")
        return
    assert path.exists(), f"{path} is missing: run with REFEREE_RECORD_WIRE=1"
    assert json.loads(path.read_text()) == doc


def exchange(request: dict[str, Any], status: int, body: Any) -> dict[str, Any]:
    return {"request": request, "response": {"status": status, "body": body}}


# ---- SandboxFusion client ------------------------------------------------------------------


def test_sandbox_fusion_run_code_request_shape(stub: WireStub) -> None:
    result = sandbox_fusion_probe.run(stub.url, "print(1 + 2)", stdin="1 2\n")
    assert result.status == "Success" and result.run_result.stdout == "3\n"
    (sent,) = stub.requests
    assert sent["path"] == "/run_code" and sent["headers"]["content-type"] == "application/json"
    assert "authorization" not in sent["headers"]
    check_fixture(
        "sandbox_fusion.run_code",
        "sandbox-fusion 0.3.7: sandbox_fusion.run_code(RunCodeRequest(...), endpoint=URL)",
        exchange(sent, 200, SANDBOX_OK),
    )


def test_sandbox_fusion_async_client_sends_the_same_fields(stub: WireStub) -> None:
    sandbox_fusion_probe.run_async(stub.url)
    (sent,) = stub.requests
    check_fixture(
        "sandbox_fusion.run_code_async",
        "sandbox-fusion 0.3.7: sandbox_fusion.run_code_async(RunCodeRequest(...), endpoint=URL)",
        exchange(sent, 200, SANDBOX_OK),
    )


@pytest.mark.parametrize("status", [429, 500, 503])
def test_sandbox_fusion_retries_any_non_200(stub: WireStub, status: int) -> None:
    stub.reply("/run_code", status, {"detail": "busy"})
    result = sandbox_fusion_probe.run(stub.url, max_attempts=2)
    assert result.status == "Success" and len(stub.requests) == 2


def test_sandbox_fusion_retries_a_sandbox_error_then_raises(stub: WireStub) -> None:
    stub.reply("/run_code", 200, {"status": "SandboxError", "message": "boom"})
    assert sandbox_fusion_probe.run(stub.url, max_attempts=2).status == "Success"
    stub.reply("/run_code", 200, {"status": "SandboxError", "message": "boom"})
    with pytest.raises(Exception, match="Sandbox responded with error: boom"):
        sandbox_fusion_probe.run(stub.url, max_attempts=1)


# ---- veRL's sandbox_fusion reward ----------------------------------------------------------

IN_OUTS = {"inputs": ["1 2\n"], "outputs": ["3\n"]}


def test_verl_posts_to_the_configured_url_as_is(stub: WireStub) -> None:
    answer = "```python\nprint(sum(map(int, input().split())))\n```"
    score, meta = verl_probe.compute_score(stub.url + "/run_code", answer, IN_OUTS)
    assert score == 1.0 and meta[0]["status"] == "success"
    (sent,) = stub.requests
    assert sent["path"] == "/run_code"
    check_fixture(
        "verl.sandbox_fusion",
        "verl 0.9.1: verl/utils/reward_score/sandbox_fusion compute_score(url, sem, 1024, "
        "completion, test_cases, continuous=True)",
        exchange(sent, 200, SANDBOX_OK),
    )


def _run(body: dict[str, Any]) -> dict[str, Any]:
    return {**SANDBOX_OK, **body}


@pytest.mark.parametrize(
    ("reply", "expected", "status"),
    [
        (SANDBOX_OK, True, "success"),
        (
            _run({"run_result": {**SANDBOX_OK["run_result"], "stdout": "4\n"}}),
            False,
            "wrong_answer",
        ),
        (
            _run(
                {"status": "Failed", "run_result": {**SANDBOX_OK["run_result"], "return_code": 1}}
            ),
            -2,
            "runtime_error",
        ),
        (
            _run(
                {
                    "status": "Failed",
                    "run_result": {"status": "TimeLimitExceeded", "return_code": None},
                }
            ),
            -3,
            "timeout",
        ),
        (
            _run(
                {
                    "status": "Failed",
                    "compile_result": {"status": "Finished", "return_code": 1, "stderr": "x"},
                    "run_result": None,
                }
            ),
            -4,
            "compile_error",
        ),
        ({"status": "SandboxError", "message": "x"}, -1, "sandbox_error"),
        # "Success" with a run that did not finish is not a pass
        (
            _run({"run_result": {"status": "Error", "return_code": 0}}),
            -1,
            "unexpected_success_state",
        ),
    ],
)
def test_verl_reads_status_then_run_result(
    stub: WireStub, reply: dict[str, Any], expected: Any, status: str
) -> None:
    stub.reply("/run_code", 200, reply)
    results, meta = verl_probe.check_correctness(stub.url + "/run_code", IN_OUTS, "print(3)")
    assert results == [expected] and meta[0]["status"] == status


def test_verl_retries_only_504(stub: WireStub) -> None:
    stub.reply("/run_code", 504, {"detail": "gateway"})
    assert verl_probe.check_correctness(stub.url + "/run_code", IN_OUTS, "print(3)")[0] == [True]
    assert len(stub.requests) == 2
    for status in (429, 503):
        stub.reset()
        stub.reply("/run_code", status, {"detail": "busy"})
        results, meta = verl_probe.check_correctness(stub.url + "/run_code", IN_OUTS, "print(3)")
        assert results == [-1] and meta[0]["status"] == "api_error" and len(stub.requests) == 1


# ---- OpenRLHF remote reward ----------------------------------------------------------------


def test_openrlhf_remote_reward_request_shape(stub: WireStub) -> None:
    out = openrlhf_probe.reward_for(stub.url + "/reward", "What is 1+2? ", "task-1", "3")
    assert out["reward"] == [1.0] and out["scores"] == [1.0]
    assert out["extra_logs"] == {"passed": [1.0]}
    (sent,) = stub.requests
    assert sent["path"] == "/reward" and "authorization" not in sent["headers"]
    check_fixture(
        "openrlhf.remote_rm",
        "openrlhf 0.11.2: SingleTurnAgentExecutor(remote_rm_url=URL).execute(...) "
        "-> _fetch_rewards_via_http",
        exchange(sent, 200, {"rewards": [1.0], "scores": [1.0], "extra_logs": {"passed": [1.0]}}),
    )


def test_openrlhf_reads_scores_falling_back_to_rewards(stub: WireStub) -> None:
    stub.reply("/reward", 200, {"rewards": 0.5})
    out = openrlhf_probe.reward_for(stub.url + "/reward", "p ", "l", "r")
    assert (out["reward"], out["scores"], out["extra_logs"]) == (0.5, 0.5, {})


def test_openrlhf_retries_then_gives_a_reply_that_is_not_an_object_no_reward(
    stub: WireStub,
) -> None:
    stub.reply("/reward", 500, {"detail": "x"})
    assert openrlhf_probe.reward_for(stub.url + "/reward", "p ", "l", "r")["reward"] == [1.0]
    assert len(stub.requests) == 2
    stub.reply("/reward", 200, [0.5])
    assert openrlhf_probe.reward_for(stub.url + "/reward", "p ", "l", "r")["reward"] is None


# ---- OpenEnv -------------------------------------------------------------------------------


def test_openenv_websocket_episode(stub: WireStub) -> None:
    first, after, state = openenv_probe.episode_ws(stub.url, {"answer": "3"}, seed=1)
    assert first.done is False and first.reward is None
    assert (after.reward, after.done, after.metadata) == (1.0, True, {"task_id": "t1"})
    assert state == {"episode_id": "e1", "step_count": 1}
    assert stub.ws_headers == [{}]  # no auth header unless the caller passes headers=
    check_fixture(
        "openenv.ws",
        "openenv 0.10.0: GenericEnvClient(base_url=URL).sync(): reset(seed=1), "
        "step({'answer': '3'}), state(), close",
        {"path": "/ws", "frames": stub.ws_frames},
    )


def test_openenv_http_reset_and_step_bodies(stub: WireStub) -> None:
    reset_reply = {"observation": {"prompt": "add 1 and 2"}, "reward": None, "done": False}
    step_reply = {"observation": {"feedback": "ok"}, "reward": 1.0, "done": True}
    stub.reply("/reset", 200, reset_reply)
    stub.reply("/step", 200, step_reply)
    assert openenv_probe.episode_http(stub.url, {"answer": "3"}, seed=1) == (
        reset_reply,
        step_reply,
    )
    reset, step = stub.requests
    check_fixture(
        "openenv.http",
        "httpx with openenv 0.10.0's ResetRequest / StepRequest bodies (no HTTP client class)",
        {"exchanges": [exchange(reset, 200, reset_reply), exchange(step, 200, step_reply)]},
    )


# ---- fixtures written from source (NeMo Gym, slime: not installable here) --------------------


@pytest.mark.parametrize("name", ["nemo_gym.resources_server", "slime.remote_rm"])
def test_fixtures_written_from_source_are_complete(name: str) -> None:
    doc = json.loads((WIRE / f"{name}.json").read_text())
    assert doc["source"]["repo"] and len(doc["source"]["commit"]) == 40
    for ex in doc["exchanges"]:
        assert ex["request"]["method"] == "POST" and ex["request"]["path"].startswith("/")
        assert ex["request"]["headers"]["content-type"] == "application/json"
        assert "status" in ex["response"]
