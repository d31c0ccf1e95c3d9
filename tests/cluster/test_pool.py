"""SandboxPool on a real two-node Ray cluster: placement, verdicts equal to the in-process
verifier's, a killed actor, a hung candidate, errors that cross Ray, sessions.

The actor-killing test comes last in the module: the others run on an undisturbed pool.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import threading
import time

import pytest

from referee.errors import ConfigError, SandboxError
from referee.service.engine import UnknownTasks
from referee.tasks.kinds import TaskKind
from referee.verify.dispatch import VerifierSet
from referee.verify.function import FunctionVerifier
from referee.verify.redteam import EXPLOITS, REDTEAM_TASKS

# The red-team test's fast limits, in the actors and in the in-process verifier alike.
CALL_S, RUN_S = 0.5, 3.0
TARGETS = tuple(f"HumanEval/{i}" for i in REDTEAM_TASKS[:4])
HUNG = "    return 0\n\nimport time\ntime.sleep(1e9)\n"


@pytest.fixture(scope="module")
def pool(ray_cluster, humaneval):
    from referee.cluster import SandboxPool

    p = SandboxPool(
        list(humaneval.values()),
        actors=2,
        workers_per_actor=2,
        placement="spread",
        max_retries=2,
        call_timeout_s=CALL_S,
        run_timeout_s=RUN_S,
        ready_timeout_s=90,
    )
    yield p
    p.close()


@pytest.fixture(scope="module")
def local(harness_sb):
    fast = FunctionVerifier(harness_sb, call_timeout_s=CALL_S, run_timeout_s=RUN_S)
    return VerifierSet(harness_sb, verifiers={TaskKind.FUNCTION: fast})


def _key(v):
    return (v.task_id, v.passed, v.reward, [(t.name, t.status) for t in v.tests], v.infra_error)


def _same(a, b) -> bool:
    """The same verdict. For an exploit that spins until the clock stops it, or grows until a
    resource limit kills it (the memory bomb), which of its calls time out, fail or are then
    missing depends on the machine's load in any two runs (two in-process runs differ the same
    way): there the verdict itself (task, passed, reward, infra_error) must be equal, not each
    call's status."""
    timed = any(
        t.status == "timeout" or "killed by signal" in (t.detail or "")
        for v in (a, b)
        for t in v.tests
    )
    if timed:
        return _key(a)[:3] + _key(a)[4:] == _key(b)[:3] + _key(b)[4:]
    return _key(a) == _key(b)


def test_actors_land_on_both_nodes(pool, ray_cluster):
    import ray

    health = pool.health()
    assert len({h["node_id"] for h in health}) == 2, health
    alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert {h["node_id"] for h in health} == alive
    assert all(h["healthy"] and h["workers"] == 2 for h in health)


def test_a_custom_resource_per_node_places_the_actors(ray_cluster, humaneval):
    import ray

    from referee.cluster import SandboxPool

    owner = {
        name: n["NodeID"] for n in ray.nodes() if n["Alive"] for name in ("node_a", "node_b")
        if name in n["Resources"]
    }  # fmt: skip
    task = humaneval["HumanEval/0"]
    with SandboxPool([task], actors=2, workers_per_actor=1, placement=["node_a", "node_b"]) as p:
        health = p.health()
        assert [h["node_id"] for h in health] == [owner["node_a"], owner["node_b"]]
        assert all(v.passed for v in p.verify_many([(task, task.hidden["reference"])] * 4))
    with pytest.raises(ConfigError, match="custom resource 'node_c'"):
        SandboxPool([task], actors=1, placement="node_c")


def test_canonical_solutions_equal_the_in_process_verdicts(pool, local, humaneval):
    pairs = [(t, t.hidden["reference"]) for t in humaneval.values()]
    remote = pool.verify_many(pairs)
    here = list(local.verify_many(pairs))
    assert len(remote) == 164
    assert [_key(v) for v in remote] == [_key(v) for v in here]
    assert all(v.passed for v in remote)


def test_exploit_corpus_equals_the_in_process_verdicts(pool, local, humaneval):
    pairs = [(humaneval[t], e.completion(humaneval[t])) for e in EXPLOITS for t in TARGETS]
    remote = pool.verify_many(pairs)
    here = list(local.verify_many(pairs))
    assert not any(v.passed for v in remote)
    assert all(v.infra_error is None for v in remote)
    pairs_ = zip(remote, here, strict=True)
    mismatched = [(a.task_id, _key(a), _key(b)) for a, b in pairs_ if not _same(a, b)]
    assert mismatched == []


def test_batches_of_one_are_spread_over_the_actors(pool, humaneval):
    before = {h["index"]: h["verified"] for h in pool.health()}
    task = humaneval["HumanEval/0"]
    for _ in range(8):
        [v] = pool.verify_many([(task, task.hidden["reference"])])
        assert v.passed
    after = {h["index"]: h["verified"] for h in pool.health()}
    assert all(after[i] - before[i] >= 2 for i in before), (before, after)


def test_a_referee_error_crosses_ray_with_its_type_and_message(pool):
    import ray

    actor = pool.actors()[0]
    with pytest.raises(ConfigError) as caught:
        ray.get(actor.verify_batch.remote([("no/such-task", "x")], 5.0))
    assert isinstance(caught.value, UnknownTasks)
    assert "no/such-task" in str(caught.value)
    # Through the pool: the referee error itself, no Ray wrapper around it.
    with pytest.raises(ConfigError, match="unknown environment 'nope'") as caught:
        pool.open_session("nope", "HumanEval/0")
    assert type(caught.value) is ConfigError


def test_referee_errors_pickle():
    err = UnknownTasks(["a", "b"], "unknown task id(s): 'a', 'b'; give the pool its tasks")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is UnknownTasks and str(back) == str(err) and back.ids == ["a", "b"]
    plain = pickle.loads(pickle.dumps(ConfigError("--actors must be at least 1")))
    assert type(plain) is ConfigError and str(plain) == "--actors must be at least 1"


def test_connect_joins_the_running_ray_and_never_inits_again(ray_cluster, monkeypatch):
    import ray

    from referee.cluster import connect

    def refuse(*a, **k):
        raise AssertionError("ray.init called while Ray is initialised")

    monkeypatch.setattr(ray, "init", refuse)
    for address in (None, "local", "10.9.9.9:6379"):
        info = connect(address)
        assert info["started"] is False and info["nodes"] == 2


def test_a_session_is_pinned_to_one_actor(pool, humaneval):
    import asyncio

    from referee.errors import NotFoundError

    task = humaneval["HumanEval/2"]
    session = pool.open_session("code", task.id, {"single_turn": True})
    assert session.actor in pool.actors() and session.messages

    async def episode():
        snap = await session.snapshot()
        await session.restore(snap)
        with pytest.raises(NotFoundError, match="no snapshot"):
            await session.restore("x" * 22)
        step = await session.step({"role": "assistant", "content": task.hidden["reference"]})
        assert step["done"] is True
        verdict = await session.verify()
        await session.close()
        return verdict

    verdict = asyncio.run(episode())
    assert verdict.passed, verdict
    assert sum(h["sessions"] for h in pool.health()) == 0


def test_a_hung_candidate_is_killed_at_its_deadline_and_frees_its_worker(pool, humaneval):
    import ray

    actor = pool.actors()[1]
    task = humaneval["HumanEval/0"]
    deadline_s = 1.5
    t0 = time.monotonic()
    # Both of the actor's workers hang; the quick sample waits for one of them.
    hung = actor.verify_batch.remote([(task.id, HUNG), (task.id, HUNG)], deadline_s)
    quick = actor.verify_batch.remote([(task.id, task.hidden["reference"])], deadline_s)
    [ok] = ray.get(quick, timeout=30)
    took = time.monotonic() - t0
    verdicts = ray.get(hung, timeout=30)
    assert ok.passed
    assert all(not v.passed and v.infra_error and "deadline" in v.infra_error for v in verdicts)
    assert took <= deadline_s + 1.0, took


def _cli(*args):
    from typer.testing import CliRunner

    from referee.cli import app

    return CliRunner().invoke(app, list(args))


def test_cli_verify_on_ray_gives_the_same_verdicts(ray_cluster, humaneval, tmp_path):
    import json

    from referee.tasks.model import write_tasks

    tasks = [humaneval[f"HumanEval/{i}"] for i in range(12)]
    write_tasks(tmp_path / "he.jsonl", tasks)
    lines = [{"task_id": t.id, "completion": t.hidden["reference"]} for t in tasks[:8]]
    lines += [{"task_id": t.id, "completion": "    return None\n"} for t in tasks[8:]]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    args = ("verify", "--tasks", str(tmp_path / "he.jsonl"), "--samples", str(tmp_path / "s.jsonl"))
    plain = _cli(*args, "--json")
    # Ray is initialised (this module's cluster): --ray local joins it, never starts another.
    on_ray = _cli(*args, "--json", "--ray", "local", "--actors", "2", "--workers", "1")
    assert plain.exit_code == on_ray.exit_code == 0, on_ray.output

    def verdicts(result):
        rows = [json.loads(x) for x in result.stdout.splitlines()]
        # What a run cost (timings, sandbox usage) differs between any two runs.
        return [{k: v for k, v in r.items() if k not in ("timings", "sandbox")} for r in rows]

    assert verdicts(on_ray) == verdicts(plain) and len(verdicts(plain)) == 12
    summary = _cli(*args, "--ray", "local", "--actors", "2")
    assert summary.stdout.strip().startswith("12 samples: 8 passed, 4 failed, 0 infra errors")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--actors", "9"), "--actors works with --ray only"),
        (("--ray", "local", "--actors", "9"), "do not fit the cluster"),
    ],
)
def test_cli_refusals_exit_2_in_one_line(ray_cluster, humaneval, tmp_path, options, message):
    from referee.tasks.model import write_tasks

    task = humaneval["HumanEval/0"]
    write_tasks(tmp_path / "he.jsonl", [task])
    (tmp_path / "s.jsonl").write_text('{"task_id": "HumanEval/0", "completion": "    pass\\n"}\n')
    args = ("verify", "--tasks", str(tmp_path / "he.jsonl"), "--samples", str(tmp_path / "s.jsonl"))
    result = _cli(*args, *options)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("referee: "), result.stderr
    assert message in lines[0]


def test_an_actor_killed_mid_batch_loses_no_sample(pool, humaneval):
    tasks = list(humaneval.values())
    good = [(t, t.hidden["reference"]) for t in tasks] * 2
    bad = [(humaneval[t], e.completion(humaneval[t])) for e in EXPLOITS[:10] for t in TARGETS]
    pairs = good + bad
    victim = pool.health()[0]
    session = pool.open_session("code", "HumanEval/0")
    assert session.actor == pool.actors()[0]  # the fewest sessions, ties to the first actor
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["verdicts"] = pool.verify_many(pairs)
        except BaseException as e:
            out["error"] = e

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while pool.health()[0]["verified"] <= victim["verified"]:
        assert time.monotonic() < deadline, "the batch never reached the victim"
        time.sleep(0.05)
    os.kill(victim["pid"], signal.SIGKILL)
    worker.join(timeout=180)
    assert not worker.is_alive() and "error" not in out, out.get("error")
    verdicts = out["verdicts"]
    assert len(verdicts) == len(pairs)
    assert [v.task_id for v in verdicts] == [t.id for t, _ in pairs]
    infra = [v for v in verdicts if v.infra_error]
    # An infra verdict only once the sample's actor died under it on every try.
    assert all("3 time(s)" in v.infra_error for v in infra), infra[:3]
    assert all(v.passed for v in verdicts[: len(good)] if not v.infra_error)
    assert not any(v.passed for v in verdicts[len(good) :])
    # A session dies with its actor, saying so.
    with pytest.raises(SandboxError, match="the session is lost"):
        asyncio.run(session.step({"role": "assistant", "content": "    return []\n"}))
    # The pool recovers (Ray restarts the actor, or the pool replaces it) and serves again.
    again = pool.verify_many(good[:20])
    assert all(v.passed for v in again)
    deadline = time.monotonic() + 90
    while not all(h["healthy"] and "error" not in h for h in pool.health()):
        assert time.monotonic() < deadline, pool.health()
        time.sleep(0.5)
    after = pool.health()[0]
    assert after["pid"] != victim["pid"] and after["replaced"] >= 1
