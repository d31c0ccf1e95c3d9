"""The pool on three raylets (three ``ray start`` nodes on this machine): one named pool shared by
a job's reward workers, absolute deadlines that count queue time, the autoscaler, and a node
killed mid-run (last: the module's cluster has one node fewer afterwards).

One cluster for the module; the pools are small (a CPU of Ray's bookkeeping each) and closed by
the test that made them, so the next test finds the room it needs.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from referee.verify.redteam import EXPLOITS, REDTEAM_TASKS

HUNG = "    return 0\n\nimport time\ntime.sleep(1e9)\n"


@pytest.fixture(scope="module")
def task_file(humaneval, tmp_path_factory):
    from referee.tasks.model import write_tasks

    path = tmp_path_factory.mktemp("nodes") / "tasks.jsonl"
    chosen = [humaneval[f"HumanEval/{i}"] for i in (0, 2, 4, 7)]
    write_tasks(path, [t.model_copy(update={"split": "train"}) for t in chosen])
    return path


def _cpus() -> float:
    import ray

    return float(ray.available_resources().get("CPU", 0.0))


def _until(check, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.25)


def _reward_worker() -> Any:
    """A reward worker as veRL makes them: a Ray actor (its own process) calling referee's
    ``compute_score_batch`` with ``ray_actors``. Defined here so Ray ships it by value."""
    import ray

    @ray.remote(num_cpus=0)
    class RewardWorker:
        def score(self, tasks: str, texts: list[str], ids: list[str]) -> dict[str, Any]:
            from referee.cluster.shared import shared_pool
            from referee.train.verl import compute_score_batch

            got = compute_score_batch(
                ["referee"] * len(texts), texts, ids, None, tasks=tasks, ray_actors=2
            )
            pool = shared_pool(tasks, 2)
            return {
                "scores": [s["score"] for s in got],
                "stats": pool.stats(),
                "pids": sorted(h["pid"] for h in pool.health()),
            }

        def close(self) -> None:
            from referee.cluster.shared import close_shared_pools

            close_shared_pools()

    return RewardWorker


def test_reward_workers_of_a_job_share_one_named_pool(three_nodes, humaneval, task_file):
    import ray

    from referee.cluster.named import pool_name
    from referee.tasks.model import read_tasks

    tasks = read_tasks(task_file)
    texts = ["```python\n" + t.hidden["reference"] + "\n```" for t in tasks] + ["```python\n```"]
    ids = [t.id for t in tasks] + [tasks[0].id]
    free = _cpus()
    worker_class = _reward_worker()
    workers = [worker_class.remote() for _ in range(3)]
    try:
        got = ray.get([w.score.remote(str(task_file), texts, ids) for w in workers], timeout=300)
        # Three processes judged; Ray holds the CPUs of 2 sandbox actors, not 3 x 2.
        held = free - _cpus()
    finally:
        ray.get([w.close.remote() for w in workers], timeout=120)
    assert all(g["scores"] == [1.0, 1.0, 1.0, 1.0, 0.0] for g in got), got
    assert len({g["stats"]["pid"] for g in got}) == 1  # one host
    assert all(len(g["pids"]) == 2 for g in got) and len({tuple(g["pids"]) for g in got}) == 1
    assert held == 2.0
    assert max(g["stats"]["clients"] for g in got) == 3
    assert got[-1]["stats"]["submitted"] >= 15
    # The last worker to let go ended the host and its sandbox actors.
    name = pool_name(str(task_file), 2)

    def gone() -> bool:
        try:
            ray.get_actor(name)
        except ValueError:
            return _cpus() == free
        return False

    _until(gone, 60, "the shared pool outlived its last worker")


def test_a_process_asking_for_other_settings_is_refused_and_the_pool_can_be_ended(
    three_nodes, task_file
):
    import ray

    from referee.cluster import named_pool, shutdown_named_pool
    from referee.errors import ConfigError

    free = _cpus()
    first = named_pool(str(task_file), 1)
    with pytest.raises(ConfigError, match="give every process of the job the same pool"):
        named_pool(str(task_file), 1, idle_s=5.0)
    assert first.stats()["clients"] == 1  # the refused one did not stay attached
    assert shutdown_named_pool(first.name) is True  # whoever is attached

    def gone() -> bool:
        try:
            ray.get_actor(first.name)
        except ValueError:
            return _cpus() == free
        return False

    _until(gone, 60, "the pool outlived shutdown_named_pool")
    assert shutdown_named_pool(first.name) is False
    first.close()  # detaching from a host that is gone does nothing


def test_a_sample_whose_deadline_passed_in_the_queue_is_not_run(three_nodes, humaneval):
    import ray

    from referee.cluster import SandboxPool

    task = humaneval["HumanEval/0"]
    good = (task, task.hidden["reference"])
    out: dict[str, Any] = {}
    with SandboxPool([task], actors=1, workers_per_actor=1, max_in_flight=1) as pool:
        # The one worker is held by a hung sample (until its 4 s run deadline).
        hung = threading.Thread(
            target=lambda: out.update(hung=pool.verify_many([(task, HUNG)], deadline_s=4.0))
        )
        hung.start()
        _until(lambda: pool.health()[0]["busy"] == 1, 60, "the hung sample never started")
        # Submitted with 1 s to go; they wait in the pool (one chunk out at a time) past it.
        late = pool.verify_many([good] * 3, within_s=1.0)
        hung.join(timeout=60)
        assert all(not v.passed and v.reward == 0.0 for v in late)
        assert all(v.infra_error and "deadline" in v.infra_error for v in late), late
        assert all("not run" in v.infra_error for v in late)
        assert pool.stats()["expired_in_queue"] == 3
        assert out["hung"][0].infra_error and "deadline" in out["hung"][0].infra_error

        # The same in the actor's own queue: sent at once, waiting there for its worker.
        actor = pool.actors()[0]
        before = pool.health()[0]
        held = actor.verify_batch.remote([(task.id, HUNG)], 4.0)
        _until(lambda: pool.health()[0]["busy"] == 1, 60, "the hung sample never started")
        queued = actor.verify_batch.remote([(task.id, good[1])] * 2, None, time.time() + 1.0)
        verdicts = ray.get(queued, timeout=60)
        ray.get(held, timeout=60)
        after = pool.health()[0]
        assert all(v.infra_error and "not run" in v.infra_error for v in verdicts)
        assert after["expired"] - before["expired"] == 2
        assert after["verified"] - before["verified"] == 1  # the hung one only

        # With time to spare the same samples are judged, and pass.
        assert all(v.passed for v in pool.verify_many([good] * 3, within_s=120.0))


def test_the_pool_grows_with_its_queue_and_shrinks_when_idle(three_nodes, humaneval):
    from referee.cluster import SandboxPool

    task = humaneval["HumanEval/0"]
    slow = task.hidden["reference"] + "\nimport time\ntime.sleep(0.5)\n"  # 0.5 s per sample
    seen: list[int] = []
    done = threading.Event()
    with SandboxPool(
        [task],
        actors=1,
        max_actors=3,
        workers_per_actor=1,
        chunk_size=1,
        scale_up_depth=2.0,
        idle_s=3.0,
    ) as pool:

        def watch() -> None:
            while not done.is_set():
                seen.append(pool.stats()["actors"])
                time.sleep(0.2)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            verdicts = pool.verify_many([(task, slow)] * 30)
        finally:
            done.set()
            watcher.join()
        grown = pool.stats()
        assert all(v.passed for v in verdicts) and len(verdicts) == 30
        assert grown["scaled_up"] >= 1 and max(seen) >= 2, (grown, seen)
        assert max(seen) <= 3
        # The new actors took work from the queue.
        assert sum(1 for h in pool.health() if h["verified"] > 0) >= 2
        # Idle for idle_s: back to the minimum, one actor.
        _until(lambda: pool.stats()["actors"] == 1, 90, f"never shrank: {pool.stats()}")
        assert pool.stats()["scaled_down"] == pool.stats()["scaled_up"]
        assert all(v.passed for v in pool.verify_many([(task, task.hidden["reference"])] * 2))


def test_a_node_killed_mid_run_loses_no_sample_and_judges_none_twice(three_nodes, humaneval):
    import ray

    from referee.cluster import SandboxPool

    targets = [humaneval[f"HumanEval/{i}"] for i in REDTEAM_TASKS[:4]]
    # Right answers that wait a quarter second first: node_c still has chunks in flight when
    # it is killed however fast the machine is (with quick answers alone an idle machine had
    # finished node_c's share before the kill, and nothing was left to retry).
    slow = [
        (t, t.hidden["reference"].rstrip("\n") + "\n\nimport time\ntime.sleep(0.25)\n")
        for t in list(humaneval.values())[:96]
    ]
    good = slow + [(t, t.hidden["reference"]) for t in humaneval.values()] * 2
    bad = [(t, e.completion(t)) for e in EXPLOITS[:10] for t in targets]
    pairs = good + bad
    # One actor per node; node_c's is on the node that is killed.
    with SandboxPool(
        list(humaneval.values()),
        actors=3,
        workers_per_actor=2,
        placement=["node_a", "node_b", "node_c"],
        call_timeout_s=0.5,
        run_timeout_s=3.0,
        ready_timeout_s=60,
    ) as pool:
        victim = pool.health()[2]
        out: dict[str, Any] = {}

        def run() -> None:
            try:
                out["verdicts"] = pool.verify_many(pairs)
            except BaseException as e:
                out["error"] = e

        worker = threading.Thread(target=run)
        worker.start()
        _until(lambda: pool.health()[2]["verified"] > victim["verified"], 60, "no work on node_c")
        three_nodes.kill_node(2)
        worker.join(timeout=300)
        assert not worker.is_alive() and "error" not in out, out.get("error")
        verdicts = out["verdicts"]
        stats = pool.stats()
    # Every sample has its one verdict, in its place, and the right one.
    assert len(verdicts) == len(pairs)
    assert [v.task_id for v in verdicts] == [t.id for t, _ in pairs]
    assert [v.infra_error for v in verdicts if v.infra_error] == []
    assert all(v.passed for v in verdicts[: len(good)])
    assert not any(v.passed for v in verdicts[len(good) :])
    assert stats["submitted"] == stats["settled"] == len(pairs) and stats["pending"] == 0
    assert stats["chunks_retried"] >= 1 and stats["duplicates_dropped"] == 0
    # Ray saw the node go.
    _until(lambda: sum(1 for n in ray.nodes() if n["Alive"]) == 2, 60, "the node is still alive")
