"""The fast path's workers start concurrently, and in the background on ``Sandbox.warm()``."""

from concurrent.futures import ThreadPoolExecutor

from referee.sandbox import Sandbox
from referee.sandbox import forkserver as fs


def test_warm_starts_every_worker_and_runs_go_on():
    with Sandbox(python_workers=3) as sb:
        sb.warm()
        sb.warm()  # a second call does nothing
        with ThreadPoolExecutor(3) as ex:
            results = list(
                ex.map(lambda _: sb.run_python("import os; print(os.getpid())"), range(12))
            )
        assert all(r.ok for r in results), results
        pool = sb.pool
        assert len(pool.workers) == 3
        for t in pool._starters:
            t.join(timeout=30)
        assert all(w.alive for w in pool.workers)
        assert all(sb.run_python("print('ok')").ok for _ in range(6))


def test_closing_a_sandbox_that_is_still_warming_up_leaves_nothing_behind():
    sb = Sandbox(python_workers=2)
    sb.warm()
    sb.close()  # waits for the start in flight, then stops its workers
    assert sb._pool is None


def test_a_worker_whose_background_start_failed_is_started_again_by_its_run(monkeypatch):
    real_start = fs.ForkWorker.start
    failed = []

    def flaky(self):  # type: ignore[no-untyped-def]
        if self.index == 1 and not failed:
            failed.append(self.index)
            raise OSError("no start this time")
        real_start(self)

    monkeypatch.setattr(fs.ForkWorker, "start", flaky)
    with Sandbox(python_workers=2) as sb:
        pool = sb.pool
        for t in pool._starters:
            t.join()
        assert failed == [1] and not pool.workers[1].alive
        # Both workers serve runs: the dead one is restarted by the run that takes it.
        results = [sb.run_python("print('ok')") for _ in range(4)]
        assert all(r.ok and r.stdout == "ok\n" for r in results), results
        assert all(w.alive for w in pool.workers)
