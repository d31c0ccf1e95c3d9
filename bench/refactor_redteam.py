"""Attack samples for refactoring tasks (``referee synth --kinds refactor``), one file per attack.

    python bench/refactor_redteam.py TASKS.jsonl OUT_DIR

writes, in the samples format ``referee verify --samples`` reads:

* ``empty.jsonl``: the empty patch (the starting state: behaviour kept, structure not);
* ``stub.jsonl``: the touched callers' bodies deleted (``raise NotImplementedError``);
* ``unused.jsonl``: the helper's original definition added back, never called (inline and
  merge tasks only: a duplicate-block task still has its helper).

Every one of them must score 0; the gold patch (``referee tasks gold``) 1.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from referee.synth.candidates import stub_function
from referee.synth.functions import function_nodes
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.model import read_tasks
from referee.verify.redteam_pytest import diff


def _original(task, path: str) -> str:
    repo = task.payload["repo"]
    files = ArtifactStore.at(repo["store"]).get_files(repo["snapshot"])
    data = files[path]
    return data.decode() if isinstance(data, bytes) else data


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]


def main(tasks_file: str, out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict[str, str]]] = {"empty": [], "stub": [], "unused": []}
    for task in read_tasks(tasks_file):
        path = task.hidden["structure"]["path"]
        start = task.payload["overrides"][path]
        op = task.hidden["operators"][0]
        helper = next(
            f.split("::", 1)[1]
            for f in task.hidden["functions"]
            if task.hidden["description"].endswith(" " + f.split("::", 1)[1])
        )
        callers = [f.split("::", 1)[1] for f in task.hidden["functions"]]
        callers = [c for c in callers if c != helper]
        rows["empty"].append({"task_id": task.id, "completion": ""})
        stubbed = start
        for caller in callers:
            stubbed = stub_function(stubbed, caller, "deleted") or stubbed
        rows["stub"].append({"task_id": task.id, "completion": diff(path, start, stubbed)})
        if op != "duplicate-block":
            original = _original(task, path)
            node = function_nodes(original)[helper]
            lines = original.splitlines(keepends=True)
            definition = "".join(lines[_first_line(node) - 1 : node.end_lineno])
            at = _first_line(function_nodes(start)[callers[0]])
            body = start.splitlines(keepends=True)
            unused = "".join([*body[: at - 1], definition, "\n", *body[at - 1 :]])
            rows["unused"].append({"task_id": task.id, "completion": diff(path, start, unused)})
    for name, samples in rows.items():
        with open(out / f"{name}.jsonl", "w") as f:
            for s in samples:
                f.write(json.dumps(s) + "\n")
        print(f"{name}: {len(samples)} samples -> {out / f'{name}.jsonl'}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
