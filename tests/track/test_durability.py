"""Durability: writers SIGKILLed mid-write lose nothing they acknowledged; concurrent writers.

The writers are child processes running this file as a script (see ``main`` at the bottom):
``log`` writes trajectories until killed, printing ``begin ID`` before and ``ack ID`` after
each ``log_trajectory``; ``burst`` waits for ``go`` on stdin, then writes N trajectories and
metrics into a store that may not exist yet.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from referee.rollout.trajectory import Trajectory, Turn
from referee.track.store import DB_NAME, SCHEMA_VERSION, TrackStore
from referee.verify.verdict import TestOutcome as Outcome
from referee.verify.verdict import Verdict

SCRIPT = str(Path(__file__).resolve())
KILLS = 8
#: Every third record carries an observation this big, so it writes an artifact (default
#: threshold 64 kB): the kills in "in-flight" rounds land while it is being written.
BIG = 600_000


def build(tid: str, *, heavy: bool = True) -> Trajectory:
    """The trajectory with id ``<tag>-<i>``, the same in the writer and the checker."""
    i = int(tid.rsplit("-", 1)[1])
    big = heavy and _is_big(tid)
    turns = [
        Turn(
            index=k,
            assistant={"role": "assistant", "content": f"{tid} turn {k}"},
            observations=[
                {
                    "role": "user",
                    # Unique per record, so content addressing never skips the write.
                    "content": (f"{tid}:{k}:" * (BIG // 8 if big and k == 1 else 4))[:BIG],
                }
            ],
            completion_tokens=k + 1,
        )
        for k in range(3)
    ]
    verdict = Verdict(
        task_id="d/t",
        reward=1.0,
        passed=True,
        tests=[Outcome(name=f"t{k}", status="passed") for k in range(3)],
        verifier="v1",
    )
    return Trajectory(
        id=tid, run_id="r", task_id="d/t", policy="p", env="e", step=i, turns=turns, verdict=verdict
    )


def _is_big(tid: str) -> bool:
    return int(tid.rsplit("-", 1)[1]) % 3 == 0


def _check(run_dir: Path, acked: set[str], before: set[str], seed: int) -> set[str]:
    """Assert the store is sound after a kill; returns the ids present."""
    with TrackStore(run_dir) as store:
        conn = store._conn()
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)], seed
        present = {r[0] for r in conn.execute("SELECT id FROM trajectories")}
        missing = acked - present
        assert not missing, f"seed {seed}: acknowledged but lost: {sorted(missing)[:5]}"
        # The record being written when the kill came may or may not have made it.
        assert len(present - before - acked) <= 1, f"seed {seed}: {present - before - acked}"
        for tid in present - before:
            assert store.trajectory(tid) == build(tid), f"seed {seed}: {tid} differs"
            counts = conn.execute(
                "SELECT (SELECT COUNT(*) FROM turns WHERE trajectory_id = ?), "
                "(SELECT COUNT(*) FROM verdicts WHERE trajectory_id = ?), "
                "(SELECT COUNT(*) FROM test_outcomes WHERE trajectory_id = ?)",
                (tid, tid, tid),
            ).fetchone()
            assert counts == (3, 1, 3), f"seed {seed}: {tid} is partial: {counts}"
        # No truncated blob under a content name (temporary files may stay behind).
        for blob in (run_dir / "artifacts").rglob("*-text"):
            assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name[:64], blob
    return present


def test_sigkilled_writers_lose_nothing_acknowledged_and_leave_nothing_partial(
    tmp_path: Path,
) -> None:
    seed = int(os.environ.get("REFEREE_DURABILITY_SEED", time.time_ns() % 10**6))
    rng = random.Random(seed)
    acked: set[str] = set()
    present: set[str] = set()
    in_flight_kills = 0
    for round_ in range(KILLS):
        # Even rounds: kill within 4 ms of a big record's start (mid-artifact or mid-commit);
        # odd rounds: at a random moment after some acknowledgements.
        in_flight = round_ % 2 == 0
        target = rng.randint(2, 12)
        proc = subprocess.Popen(
            [sys.executable, SCRIPT, "log", str(tmp_path), f"k{round_}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        watchdog = threading.Timer(60, proc.kill)
        watchdog.start()
        begun: set[str] = set()
        n_acked = 0
        assert proc.stdout is not None
        try:
            while line := proc.stdout.readline():
                kind, tid = line.decode().split()
                if kind == "ack":
                    acked.add(tid)
                    n_acked += 1
                else:
                    begun.add(tid)
                if n_acked < target:
                    continue
                if in_flight and kind == "begin" and _is_big(tid):
                    # Spread over the record's preparation, artifact write and transaction.
                    time.sleep(rng.uniform(0, 0.004))
                    break
                if not in_flight:
                    time.sleep(rng.uniform(0, 0.02))
                    break
            else:
                raise AssertionError(f"the writer died: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            proc.send_signal(signal.SIGKILL)
            rest, _ = proc.communicate()
        finally:
            watchdog.cancel()
        assert proc.returncode == -signal.SIGKILL
        # Lines printed before the kill landed were acknowledged too; a cut line was not.
        for line in rest.decode().splitlines(keepends=True):
            if line.endswith("\n") and line.startswith("ack "):
                acked.add(line.split()[1])
            elif line.endswith("\n") and line.startswith("begin "):
                begun.add(line.split()[1])
        in_flight_kills += bool(begun - acked)
        present = _check(tmp_path, acked, present, seed)
    assert in_flight_kills >= 1, f"seed {seed}: no kill landed during a write"
    assert len(acked) >= KILLS * 2


def test_four_processes_write_one_new_store_at_once(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, SCRIPT, "burst", str(tmp_path), f"w{k}", "100"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for k in range(4)
    ]
    for p in procs:  # all imported and waiting: then they open and write together
        assert p.stdout is not None and p.stdout.readline() == b"ready\n"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(b"go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()[-2000:]
    with TrackStore(tmp_path) as store:
        assert store.count_trajectories() == 400
        for k in range(4):
            ids = {t.id for t in store.trajectories(run_id=f"w{k}")}
            assert ids == {f"w{k}-{i}" for i in range(100)}
            assert len(store.metrics(f"w{k}")) == 200
        assert {r.run_id for r in store.runs()} == {f"w{k}" for k in range(4)}
        assert all(r.status == "finished" for r in store.runs())
        assert store._conn().execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert sqlite3.connect(tmp_path / DB_NAME).execute("PRAGMA user_version").fetchone() == (
        SCHEMA_VERSION,
    )


def main(argv: list[str]) -> None:
    mode, run_dir, tag = argv[:3]
    if mode == "log":
        with TrackStore(run_dir) as store:
            for i in range(10**6):
                tid = f"{tag}-{i}"
                print(f"begin {tid}", flush=True)
                store.log_trajectory(build(tid))
                print(f"ack {tid}", flush=True)
    elif mode == "burst":
        n = int(argv[3])
        print("ready", flush=True)
        sys.stdin.readline()
        with TrackStore(run_dir) as store:
            store.start_run(tag, {"writer": tag})
            for i in range(n):
                t = build(f"{tag}-{i}", heavy=False).model_copy(update={"run_id": tag})
                store.log_trajectory(t)
                store.log_metrics(tag, i, {"reward": 1.0, "tokens": float(i)})
            store.end_run(tag)


if __name__ == "__main__":
    main(sys.argv[1:])
