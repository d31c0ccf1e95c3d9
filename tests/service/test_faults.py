"""Faults under a running server: a sandbox worker killed mid-batch, and the engine's retry of
work whose worker died."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.procs import children, fork_server_of

#: Module-level code after the function: the sample takes this long, then is judged as usual.
SLOW = "import time as _t\n_t.sleep({s})\n"


def test_a_worker_killed_mid_batch_loses_no_verdict_and_passes_nothing_wrongly(
    he_file: Path, gold: list[dict[str, str]]
) -> None:
    from referee.service import ServeConfig, Service, running

    service = Service.start(ServeConfig(tasks=(str(he_file),), no_auth=True, workers=2))
    right = [
        {"task_id": g["task_id"], "completion": g["completion"] + SLOW.format(s=1.0)}
        for g in gold[:4]
    ]
    wrong = [
        {"task_id": g["task_id"], "completion": "    return None\n" + SLOW.format(s=0.3)}
        for g in gold[4:6]
    ]
    samples = right + wrong  # the first two (right answers) start first, one on each worker
    with running(service) as url:
        c = httpx.Client(base_url=url, timeout=60)
        assert all(
            v["passed"] for v in c.post("/v1/verify", json={"samples": gold}).json()["verdicts"]
        )  # both workers started
        workers = service.engine.sandbox.pool.workers
        reply: dict[str, Any] = {}
        t = threading.Thread(
            target=lambda: reply.update(r=c.post("/v1/verify", json={"samples": samples}))
        )
        t.start()
        # Wait until worker 0 is running a sample (its server has a child), then kill the server.
        assert workers[0].proc is not None
        victim = fork_server_of(workers[0].proc.pid)
        until = time.monotonic() + 10
        while not children(victim):
            assert time.monotonic() < until, "worker 0 never started a run"
            time.sleep(0.01)
        os.kill(victim, signal.SIGKILL)
        t.join(timeout=30)
        r = reply["r"]
        assert r.status_code == 200, r.text
        verdicts = r.json()["verdicts"]
        assert [v["task_id"] for v in verdicts] == [s["task_id"] for s in samples]
        # The killed right answer was judged again on the replaced worker: nothing lost, no
        # right answer scored as wrong, no wrong answer passed.
        assert [v["passed"] for v in verdicts] == [True] * 4 + [False] * 2
        assert all(v["infra_error"] is None for v in verdicts)
        metrics = c.get("/metrics").text
        assert 'referee_infra_errors_total{where="worker_lost"} 1.0' in metrics
        # Kill the other worker while it is idle: the next batch is normal all the same.
        assert workers[1].proc is not None
        os.kill(fork_server_of(workers[1].proc.pid), signal.SIGKILL)
        r = c.post("/v1/verify", json={"samples": gold})
        assert [v["passed"] for v in r.json()["verdicts"]] == [True] * len(gold)


@pytest.fixture
def engine(he_tasks: list[Any]) -> Any:
    from referee.service.engine import ServiceEngine

    e = ServiceEngine(he_tasks, workers=1)
    yield e
    e.close()


def test_a_sample_whose_worker_dies_twice_is_an_infra_error_never_a_fail(
    engine: Any, gold: list[dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from referee.sandbox.forkserver import _note_lost
    from referee.verify.verdict import Verdict

    calls: list[str] = []

    def dies(task: Any, completion: str) -> Verdict:  # what a lost worker leaves: a plain fail
        calls.append(task.id)
        _note_lost()
        return Verdict(task_id=task.id, reward=0.0, passed=False, verifier="function")

    lost: list[int] = []
    engine._on_lost_worker = lambda: lost.append(1)
    monkeypatch.setattr(engine.verifiers, "verify", dies)
    (v,) = asyncio.run(engine.verify([(gold[0]["task_id"], gold[0]["completion"])]))
    assert calls == [gold[0]["task_id"]] * 2  # judged once more, then given up
    assert not v.passed and v.reward == 0.0
    assert v.infra_error is not None and "worker died" in v.infra_error
    assert len(lost) == 2
