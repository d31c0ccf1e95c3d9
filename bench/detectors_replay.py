"""The detectors on real training runs: replay a run's recorded GRPO rollouts, step by step,
through a fresh :class:`~referee.track.tracker.Tracker` with today's detectors, and count the
alerts. On the clean runs of ``referee train`` (real verifier, no exploit) every alert is a
false alarm.

    .venv/bin/python bench/detectors_replay.py runs/s4-uniform runs/s5-curriculum [...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from referee.track.store import TrackStore
from referee.track.tracker import Tracker


def replay(run_dir: Path) -> dict[str, object]:
    with TrackStore(run_dir, create=False) as store:
        (run,) = store.runs()
        by_step = defaultdict(list)
        for t in store.iter_trajectories(run_id=run.run_id):
            by_step[t.step].append(t)
        heldout = {
            m.step: m.value
            for m in store.metrics(run.run_id, names=["heldout_pass_rate"], split="heldout")
        }
        tasks = store.tasks()
    n_heldout = sum(t.split == "heldout" for t in tasks)
    tracker = Tracker(tasks=tasks, run_id=run.run_id)
    for step in sorted(by_step):
        rate = heldout.get(step)
        tracker.log(by_step[step], step, heldout_pass_rate=rate, heldout_n=n_heldout or None)
    alerts = tracker.anomalies()
    return {
        "run": str(run_dir),
        "steps": len(by_step),
        "trajectories": sum(len(v) for v in by_step.values()),
        "alerts": len(alerts),
        "by_detector": dict(Counter(a.detector for a in alerts)),
        "messages": [f"step {a.step}: {a.detector}: {a.message}" for a in alerts],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--out", default="bench/out/detectors_replay.json")
    a = ap.parse_args()
    results = [replay(r) for r in a.runs]
    for r in results:
        print(f"{r['run']}: {r['steps']} steps, {r['trajectories']} rollouts, "
              f"{r['alerts']} alerts {r['by_detector']}")  # fmt: skip
        for m in r["messages"]:
            print("   ", m)
    Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
