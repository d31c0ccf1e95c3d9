"""Harbor task directories through referee: what is imported or refused (and why), gold and
empty answers, Harbor's own loader on referee's exports, and the verdicts of an export
imported again.

No Harbor task set ships in a package here (harbor 0.25.0 and terminal-bench 0.2.18 carry
templates only) and Docker does not run here, so the suite is: the Terminal-Bench-shaped
fixture (tests/fixtures/harbor/count-lines), variants of it that must be refused, and referee's
own shell tasks (shell-rows and the ops-* families) exported to Harbor and read back.

    PYTHONPATH=src .venv/bin/python bench/harbor_roundtrip.py \
        --out bench/results/imports/harbor_roundtrip.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from referee.domains import generate_family
from referee.domains.shell import FAMILY_MODULES
from referee.domains.shell.harbor_export import export_harbor
from referee.domains.shell.verifier import ShellVerifier
from referee.tasks.imports.rows import RowError
from referee.tasks.sources import load_source

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "harbor" / "count-lines"
HARBOR_PYTHON = ROOT / ".venvs" / "harbor" / "bin" / "python"
ROWS = [
    {
        "id": "gzip-log",
        "prompt": "Compress var/log/old.log with gzip (keep the name old.log.gz).",
        "setup": "mkdir -p var/log && printf 'a\\nb\\n' > var/log/old.log",
        "check": "test -f var/log/old.log.gz && test ! -e var/log/old.log",
        "reference": "gzip var/log/old.log",
    },
    {
        "id": "sort-names",
        "prompt": "Write the lines of names.txt sorted, without duplicates, to sorted.txt.",
        "setup": "printf 'bob\\nal\\nbob\\ncy\\n' > names.txt",
        "check": '[ "$(cat sorted.txt)" = "$(printf \'al\\nbob\\ncy\')" ]',
        "reference": "sort -u names.txt > sorted.txt",
    },
    {
        "id": "mode-600",
        "prompt": "Make etc/secret.conf readable and writable by its owner only.",
        "setup": "mkdir -p etc && echo k=v > etc/secret.conf && chmod 644 etc/secret.conf",
        "check": '[ "$(stat -c %a etc/secret.conf)" = 600 ]',
        "reference": "chmod 600 etc/secret.conf",
    },
]
WRONG = {
    "shell-rows/gzip-log": ["gzip -k var/log/old.log", "touch var/log/old.log.gz"],
    "shell-rows/sort-names": ["sort names.txt > sorted.txt", "cp names.txt sorted.txt"],
    "shell-rows/mode-600": ["chmod 640 etc/secret.conf", "chmod 700 etc/secret.conf"],
    "harbor/referee__count-lines": ["echo 2 > count.txt", "echo 3 > count.txt; rm status"],
}
VARIANTS = {
    "python-image": ("environment/Dockerfile", "FROM python:3.12-slim\nWORKDIR /app\n"),
    "multi-stage": ("environment/Dockerfile", "FROM debian AS b\nRUN true\nFROM debian\n"),
    "missing-package": ("environment/Dockerfile", "FROM debian\nRUN apt-get install -y sl-x\n"),
    "pip-at-build": ("environment/Dockerfile", "FROM debian\nRUN pip install numpy\n"),
    "curl-in-tests": ("tests/test.sh", "curl -LsSf https://example.invalid/uv.sh | sh\n"),
    "prebuilt-image": ("task.toml", '[environment]\ndocker_image = "ghcr.io/x/y:1"\n'),
    "multi-step": ("task.toml", '[[steps]]\nname = "one"\n'),
    "compose": ("environment/docker-compose.yaml", "services: {}\n"),
    "user": ("environment/Dockerfile", "FROM debian\nUSER app\n"),
    "wrong-solution": ("solution/solve.sh", "echo 9 > /app/count.txt\n"),
}


def suite(root: Path) -> Path:
    """The fixture and its refused variants, one directory each."""
    shutil.copytree(FIXTURE, root / "count-lines")
    for name, (rel, text) in VARIANTS.items():
        shutil.copytree(FIXTURE, root / name)
        (root / name / rel).write_text(text)
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results/imports/harbor_roundtrip.json")
    args = ap.parse_args()
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="harbor-bench-"))
    refused: list[str] = []
    imported = list(
        load_source("harbor", "train", suite(work / "suite"), on_bad_row=_keep(refused))
    )
    rows_file = work / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    rows = list(load_source("shell-rows", "train", rows_file))
    families = [generate_family(f, count=1, seed=0)[0] for f in FAMILY_MODULES]
    families = [t.model_copy(update={"split": "train"}) for t in families]
    export = export_harbor([*rows, *imported, *families], work / "exported")
    loader = _harbor_loader(work / "exported")
    back = {t.provenance.unit: t for t in load_source("harbor", "train", work / "exported")}
    verdicts = []
    with ShellVerifier() as verifier:
        for task in [*rows, *imported]:
            [again] = [t for u, t in back.items() if u == f"harbor:{task.id.replace('/', '__')}"]
            answers = [task.hidden["reference"], "", *WRONG[task.id]]
            for label, answer in zip(["gold", "empty", "wrong-1", "wrong-2"], answers, strict=True):
                first = verifier.verify(task, answer).passed
                second = verifier.verify(again, answer).passed
                verdicts.append({"task": task.id, "answer": label, "original": first,
                                 "exported_and_imported": second})  # fmt: skip
    out = {
        "command": "PYTHONPATH=src .venv/bin/python bench/harbor_roundtrip.py",
        "machine": machine(),
        "seconds": round(time.time() - started, 1),
        "import": {
            "directories": len(VARIANTS) + 1,
            "imported": [t.id for t in imported],
            "refused": refused,
        },
        "export": {
            "tasks": len(rows) + len(imported) + len(families),
            "written": export.written,
            "left_out": export.left_out,
        },
        "harbor_loader": loader,
        "round_trip": {
            "verdicts": len(verdicts),
            "same": sum(v["original"] == v["exported_and_imported"] for v in verdicts),
            "gold_pass": sum(v["original"] for v in verdicts if v["answer"] == "gold"),
            "empty_fail": sum(not v["original"] for v in verdicts if v["answer"] == "empty"),
            "wrong_fail": sum(not v["original"] for v in verdicts if v["answer"].startswith("w")),
            "detail": verdicts,
        },
    }
    shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    rt = out["round_trip"]
    print(f"imported {len(imported)}, refused {len(refused)}; exported {export.written} "
          f"(left out {export.left_out}); Harbor's loader: {loader['accepted']}/{loader['dirs']}; "
          f"round trip {rt['same']}/{rt['verdicts']} same")  # fmt: skip
    for line in refused:
        print("  refused:", line)


def _keep(into: list[str]):  # type: ignore[no-untyped-def]
    def keep(e: RowError) -> None:
        into.append(str(e).replace(str(Path(tempfile.gettempdir())), "$TMP"))

    return keep


def _harbor_loader(root: Path) -> dict[str, object]:
    """Harbor's own ``Task`` on every exported directory (in .venvs/harbor, Python 3.12)."""
    if not HARBOR_PYTHON.exists():
        return {"dirs": 0, "accepted": 0, "note": "no .venvs/harbor"}
    check = (
        "import sys, pathlib, json\nfrom harbor.models.task.task import Task\nok = []\n"
        "for d in sorted(pathlib.Path(sys.argv[1]).iterdir()):\n"
        "    t = Task(d)\n"
        "    ok.append(bool(t.paths.discovered_test_path and t.paths.discovered_solve_path"
        " and t.instruction))\n"
        "print(json.dumps(ok))\n"
    )
    p = subprocess.run([str(HARBOR_PYTHON), "-c", check, str(root)], capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    ok = json.loads(p.stdout) if p.returncode == 0 else []
    return {"dirs": len(list(root.iterdir())), "accepted": sum(ok), "stderr": p.stderr[-500:]}


if __name__ == "__main__":
    main()
