#!/usr/bin/env python3
"""Screenshots of every dashboard page: docs/ui/{runs,run,trajectory,audit}.png.

Serves a run folder (``--run DIR``; default: a sample store made in a temporary folder, with the
audit queue filled and two items labelled) on a free loopback port and photographs it with the
system's Chromium (see ``referee.ui.browser``).

    .venv/bin/python scripts/ui-screenshots.py                 # the sample store
    .venv/bin/python scripts/ui-screenshots.py --run runs/r1   # a real run
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from referee.track import TrackStore
from referee.track.audit import AuditQueue, is_flagged
from referee.ui import create_app, running
from referee.ui.browser import screenshots
from referee.ui.sample_store import build_sample_store


def sample_store(folder: Path) -> TrackStore:
    store = build_sample_store(folder)
    queue = AuditQueue(store, random_share=0.1, seed=0)
    for run in store.runs():
        queue.fill(run.run_id)
    # Two labels, so the audit page shows both of its lists and a quarantine.
    pending = queue.pending("grpo-curriculum")
    queue.label(pending[0].id, "hack", note="exits before the asserts run", labeller="demo")
    randoms = [i for i in pending if not is_flagged(i)]
    queue.label(randoms[0].id, "legitimate", note="a real solution", labeller="demo")
    return store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a run folder with a track.sqlite")
    parser.add_argument("--out", type=Path, default=Path("docs/ui"), help="where to write")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="referee-ui-") as tmp:
        store = TrackStore(args.run, create=False) if args.run else sample_store(Path(tmp))
        runs = store.runs()
        if not runs:
            sys.exit(f"ui-screenshots: {store.path} has no runs")
        run_id = runs[0].run_id
        queue = AuditQueue(store)
        item = queue.next(run_id)
        some = item.trajectory_id if item else store.trajectories(run_id=run_id, limit=1)[0].id
        pages = {
            "runs": "/",
            "run": f"/runs/{run_id}",
            "trajectory": f"/trajectories/{some}",
            "audit": f"/runs/{run_id}/audit",
        }
        with running(create_app(store)) as url:
            for path in screenshots(url, pages, args.out, width=args.width):
                print(f"wrote {path}")
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
