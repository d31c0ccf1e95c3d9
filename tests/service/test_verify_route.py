"""``POST /v1/verify`` answered directly (``DirectVerify``) and by the FastAPI route: the same
answer, the same errors, the same metrics. A real server on loopback; the engine's verdicts are
fixed (the judging is tested elsewhere), so the two answers can be compared byte for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from referee.sandbox.metering import SandboxUsage
from referee.service import ServeConfig, Service, running
from referee.verify import verdict as v
from referee.verify.verdict import Flag, Verdict
from tests.service.conftest import TOKEN, client

#: Another JSON type: FastAPI reads it as JSON, the direct path hands it to the route.
OTHER_JSON = "application/vnd.referee+json"


def fixed_verdicts(task_ids: Sequence[str]) -> list[Verdict]:
    """One verdict of each shape per sample, cycling: passed, failed with a non-ASCII detail
    and a flag, an infrastructure error."""
    shapes = [
        Verdict(
            task_id="",
            reward=1.0,
            passed=True,
            tests=[v.TestOutcome(name="t1", status="passed")],
            timings={"total_s": 0.125},
            verifier="function",
            sandbox=SandboxUsage(cpu_s=0.01, wall_s=0.02, peak_memory_mb=12.5, runs=1),
        ),
        Verdict(
            task_id="",
            reward=0.5,
            passed=False,
            tests=[v.TestOutcome(name="t2", status="failed", detail="expected 'é' — got \"\\n\"")],
            flags=[Flag(kind="hardcoded", evidence="return 42  # ✓")],
            verifier="function",
        ),
        Verdict.infra("", "the request's deadline of 1 s passed; the work was killed", "service"),
    ]
    return [
        shapes[i % len(shapes)].model_copy(update={"task_id": tid})
        for i, tid in enumerate(task_ids)
    ]


@pytest.fixture
def served(he_file: Path, tokens_file: Path) -> Iterator[tuple[str, Service]]:
    service = Service.start(
        ServeConfig(tasks=(str(he_file),), tokens_file=str(tokens_file), workers=1, queue=8)
    )

    async def verify(samples: Any, *, deadline_s: Any = None, resolved: Any = None) -> Any:
        if resolved is None:
            service.engine.resolve(samples)
        return fixed_verdicts([tid for tid, _ in samples])

    service.engine.verify = verify  # type: ignore[method-assign]
    with running(service) as url:
        yield url, service


def test_the_direct_answer_is_the_routes_answer(
    served: tuple[str, Service], gold: list[dict[str, str]]
) -> None:
    url, _ = served
    body = json.dumps({"samples": gold[:6]}).encode()
    c = client(url)
    direct = c.post("/v1/verify", content=body, headers={"content-type": "application/json"})
    routed = c.post("/v1/verify", content=body, headers={"content-type": OTHER_JSON})
    for r in (direct, routed):
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/json"
        assert int(r.headers["content-length"]) == len(r.content)
    assert direct.content == routed.content
    # The wire form is the verdicts' JSON dump, as before: every field, in the samples' order.
    expected = [x.model_dump(mode="json") for x in fixed_verdicts([s["task_id"] for s in gold])]
    assert direct.json() == {"verdicts": expected[:6]}
    assert "é" in direct.content.decode("utf-8")  # sent as UTF-8, not escaped
    metrics = c.get("/metrics").text
    assert 'referee_http_requests_total{route="/v1/verify",status="200"} 2.0' in metrics
    assert 'referee_verdicts_total{outcome="passed"} 4.0' in metrics
    assert 'referee_verdicts_total{outcome="flagged"} 4.0' in metrics
    assert 'referee_verdicts_total{outcome="infra_error"} 4.0' in metrics
    assert 'referee_deadline_exceeded_total{route="/v1/verify"} 4.0' in metrics


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=utf-8"])
def test_what_the_direct_path_does_not_answer_gets_the_routes_errors(
    served: tuple[str, Service], gold: list[dict[str, str]], content_type: str
) -> None:
    url, _ = served
    ok = json.dumps({"samples": gold[:1]}).encode()
    anonymous = httpx.Client(base_url=url, timeout=60)
    for headers in ({}, {"authorization": "Bearer " + "x" * len(TOKEN)}):
        r = anonymous.post(
            "/v1/verify", content=ok, headers={"content-type": content_type, **headers}
        )
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert "--tokens" in r.json()["message"]
    c = client(url)
    r = c.post(
        "/v1/verify", content=ok, headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert r.status_code == 415 and "Content-Type: application/json" in r.json()["message"]
    cases: list[tuple[bytes, str]] = [
        (b'{"samples": [}', "not valid JSON (at character 13)"),
        (b'{"samples": "all"}', "samples: "),
        (b'{"samples": [{"task_id": 1, "completion": "x"}]}', "samples.0.task_id: "),
        (b'{"samples": [{"task_id": "a", "completion": "x"}], "extra": 1}', "extra: "),
        (b'{"samples": [], "deadline_s": -1}', "samples: "),
        (b"", "body: "),
    ]
    for body, says in cases:
        r = c.post("/v1/verify", content=body, headers={"content-type": content_type})
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"] == "invalid_body" and says in r.json()["message"], r.text
    unknown = {"samples": [gold[0], {"task_id": "nope/1", "completion": "x"}]}
    r = c.post("/v1/verify", json=unknown)
    assert r.status_code == 422 and r.json()["unknown_task_ids"] == ["nope/1"]
    metrics = c.get("/metrics").text
    assert 'referee_http_requests_total{route="/v1/verify",status="422"} 7.0' in metrics
    assert 'referee_http_requests_total{route="/v1/verify",status="401"} 2.0' in metrics


def test_admission_refuses_direct_answers_as_it_refuses_the_routes(
    served: tuple[str, Service], gold: list[dict[str, str]]
) -> None:
    url, service = served
    c = client(url)
    samples = [gold[i % len(gold)] for i in range(9)]  # over --queue 8
    for content_type in ("application/json", OTHER_JSON):
        body = json.dumps({"samples": samples}).encode()
        r = c.post("/v1/verify", content=body, headers={"content-type": content_type})
        assert r.status_code == 413 and r.json()["error"] == "too_much_work", r.text
        assert "--queue" in r.json()["message"]
    service.admission.draining = True
    try:
        for content_type in ("application/json", OTHER_JSON):
            body = json.dumps({"samples": gold[:1]}).encode()
            r = c.post("/v1/verify", content=body, headers={"content-type": content_type})
            assert r.status_code == 503 and r.json()["error"] == "draining"
            assert r.headers["retry-after"] == "5"
    finally:
        service.admission.draining = False
    assert c.post("/v1/verify", json={"samples": gold[:1]}).status_code == 200
