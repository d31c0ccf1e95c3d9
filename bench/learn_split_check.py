"""No near-duplicate crosses the split of bench-learn's task files: the source unit (list-ops'
structure) and a normalised hash of each task's prompt and reference (numbers replaced by N,
white space collapsed) are compared between the train and held-out files.

    python bench/learn_split_check.py TRAIN.jsonl HELDOUT.jsonl    # prints JSON, exit 1 on a leak
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path


def normalised_hash(row: dict) -> str:
    """The hash of the task's prompt text and reference with every number made ``N``."""
    text = " ".join(m["content"] for m in row["prompt"])
    text = text.split("Examples:")[0]  # the examples are data drawn per task, not the task
    reference = str(row.get("hidden", {}).get("reference", ""))
    both = re.sub(r"\s+", " ", re.sub(r"-?\d+", "N", text + "\n" + reference)).strip()
    return hashlib.sha256(both.encode()).hexdigest()[:16]


def main(train_path: str, heldout_path: str) -> int:
    train = [json.loads(x) for x in Path(train_path).read_text().splitlines() if x.strip()]
    held = [json.loads(x) for x in Path(heldout_path).read_text().splitlines() if x.strip()]
    units = {s: {r["provenance"].get("unit") for r in rows} for s, rows in
             (("train", train), ("heldout", held))}  # fmt: skip
    hashes = {s: {normalised_hash(r) for r in rows} for s, rows in
              (("train", train), ("heldout", held))}  # fmt: skip
    report = {
        "train_tasks": len(train), "heldout_tasks": len(held),
        "train_units": len(units["train"]), "heldout_units": len(units["heldout"]),
        "units_in_both": sorted(u for u in units["train"] & units["heldout"] if u),
        "normalised_hashes": {s: len(h) for s, h in hashes.items()},
        "hashes_in_both": len(hashes["train"] & hashes["heldout"]),
    }  # fmt: skip
    print(json.dumps(report))
    return 1 if report["units_in_both"] or report["hashes_in_both"] else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
