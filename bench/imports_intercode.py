"""InterCode bash and SQL imported (``referee tasks import intercode-bash|intercode-sql``):
refusals, gold and empty answers, and agreement with InterCode's own reward on the golds and on
mutants of them.

    PYTHONPATH=src .venv/bin/python bench/imports_intercode.py --judge-python JUDGE_PY
        [--only bash|sql] [--out bench/results/imports/intercode.json]

``JUDGE_PY`` is the Python of a venv holding ``intercode-bench==0.1.22`` with its own
dependencies (``python3 -m venv J && J/bin/pip install intercode-bench==0.1.22``); it runs
``bench/intercode_judge.py``, which calls InterCode's shipped ``get_reward`` functions.

Candidates per task: the gold, the empty answer, and mutants of the gold (bash: a flag
dropped or changed, a number or a directory changed, the last pipeline stage dropped, the
output re-sorted, a word printed after the output, a stray file left; SQL: a comparison, a
literal, an aggregate, ``DISTINCT``, ``ASC``/``DESC``, ``LIMIT``, ``AND``/``OR``, set
operators changed, and ``ORDER BY 1 DESC`` added to a gold that has no order).

Every candidate runs in referee's sandbox twice:

* **referee**: the imported task's verifier (bash: ``ShellVerifier``, the ``output`` and
  ``tree`` checks; SQL: ``SqlVerifier`` on the converted SQLite database);
* **InterCode**: the environment InterCode judges in, rebuilt in the sandbox. Bash: the same
  tree in /workspace made a git repository as InterCode's image is (``git init; git add -A;
  git commit`` over the tree, ``root/`` ignored); the candidate runs, then the judge's own
  commands (``git status --short``, ``md5sum`` / ``md5deep -r`` of each path both changed) are
  run and their outputs recorded, and the gold likewise in a fresh copy. SQL: the candidate's
  rows (or its error) on the task's database, and the gold's. The recorded answers are then
  handed to InterCode's ``get_reward`` (``bench/intercode_judge.py``); solved means reward 1.

Reported: imported/refused, gold pass, empty fail and agreement per benchmark, with every
disagreement (task, mutant, both verdicts, referee's failing check, InterCode's reward).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from referee.domains.shell.episode import Episode, ShellSpec
from referee.domains.shell.intercode import (
    EXCLUDE,
    intercode_bash_rows,
    intercode_bash_tasks,
    query_task,
    rewrite_paths,
    setup_script,
)
from referee.domains.shell.verifier import ShellVerifier
from referee.domains.sql.database import Database, database_file
from referee.domains.sql.intercode import intercode_sql_tasks
from referee.domains.sql.verifier import SqlVerifier, run_query
from referee.tasks.imports.rows import RowError
from referee.tasks.model import Task

OUT = Path(__file__).parent / "results" / "imports" / "intercode.json"
GIT = "git -c user.email=intercode@pnlp.org -c user.name=intercode"
#: InterCode's image: the tree committed in a git repository at its root (bash.Dockerfile).
GIT_SETUP = (
    f"printf '%s/\\n' {' '.join(EXCLUDE)} > .gitignore && git init -q && git add -A && "
    f"{GIT} commit -qm 'initial commit'\n"
)

BASH_MUTANTS: list[tuple[str, str, Any]] = [
    ("drop-flag", r" -[a-zA-Z]{1,3}(?= )", ""),
    ("number", r"(?<=[ n])(\d+)\b(?!\.)", lambda m: str(int(m.group(1)) + 1)),
    ("directory", r"dir([123])", lambda m: f"dir{int(m.group(1)) % 3 + 1}"),
    ("pattern", r"\*\.txt", "*.py"),
    ("pattern", r"-type f", "-type d"),
    ("drop-stage", r" \| [^|]*$", ""),
    ("reverse", r"sort -r", "sort"),
    ("reverse", r"sort -rn", "sort -n"),
]  # fmt: skip
SQL_MUTANTS: list[tuple[str, str, Any]] = [
    ("compare", r"(?<![<>!])=(?!=)", "!="),
    ("compare", r"(?<=\s)>(?==?\s)", "<"),
    ("compare", r"(?<=\s)<(?==?\s)", ">"),
    ("literal", r"'([^']+)'", lambda m: f"'{m.group(1)}x'"),
    ("literal", r"(?<=[\s(])(\d+)(?=[\s)]|$)", lambda m: str(int(m.group(1)) + 1)),
    ("aggregate", r"(?i)\bmax\(", "min("),
    ("aggregate", r"(?i)\bmin\(", "max("),
    ("aggregate", r"(?i)\bavg\(", "sum("),
    ("aggregate", r"(?i)\bcount\(\*\)", "count(*) + 1"),
    ("distinct", r"(?i)\bdistinct\s+", ""),
    ("order", r"(?i)\bdesc\b", "ASC"),
    ("order", r"(?i)\basc\b", "DESC"),
    ("limit", r"(?i)\blimit\s+(\d+)", lambda m: f"LIMIT {int(m.group(1)) + 1}"),
    ("boolean", r"(?i)\band\b", "OR"),
    ("set-op", r"(?i)\bintersect\b", "UNION"),
    ("set-op", r"(?i)\bexcept\b", "UNION"),
    ("set-op", r"(?i)\bnot in\b", "IN"),
]  # fmt: skip
PER_TASK = 8


def mutate(text: str, operators: list[tuple[str, str, Any]], limit: int) -> list[tuple[str, str]]:
    """(operator, mutated text) for each operator's first two sites, at most ``limit``."""
    out: list[tuple[str, str]] = []
    seen = {text}
    for op, pattern, repl in operators:
        for k, m in enumerate(re.finditer(pattern, text)):
            if k >= 2:
                break
            new = m.expand(repl) if isinstance(repl, str) else repl(m)
            src = text[: m.start()] + new + text[m.end() :]
            if src not in seen:
                seen.add(src)
                out.append((op, src))
    return out[:limit]


# ---- bash ---------------------------------------------------------------------------------
def intercode_side(verifier: ShellVerifier, task: Task, script: str) -> dict[str, Any]:
    """What InterCode's container answers after ``script``: its output (stdout then stderr, as
    docker's exec joins them), ``git status --short``, and every hash command its judge may
    ask for (``md5sum P`` where P has a dot, ``md5deep -r P`` otherwise)."""
    hidden = dict(task.hidden, setup=task.hidden["setup"] + GIT_SETUP)
    spec = ShellSpec.of(task.model_copy(update={"hidden": hidden}))
    with Episode(verifier.sandbox, spec, cgroups=verifier.cgroups) as ep:
        r = ep.session.run(script, timeout_s=spec.timeout_s) if script.strip() else None
        status = ep.session.run("git status --short", timeout_s=30).stdout
        parts = status.split()
        hashes = {}
        for path in parts[1::2]:
            cmd = f"md5sum {path}" if "." in path else f"md5deep -r {path}"
            h = ep.session.run(cmd, timeout_s=30)
            hashes[cmd] = h.stdout + h.stderr
    observation = "" if r is None else r.stdout + r.stderr
    return {"observation": observation, "status": status, "hashes": hashes}


def bash_candidates(gold: str) -> list[tuple[str, str]]:
    cands = [("gold", gold), ("empty", "")]
    cands += mutate(gold, BASH_MUTANTS, PER_TASK - 4)
    cands += [
        ("resorted", f"{gold} | sort"),
        ("extra-output", f"{gold}\necho done"),
        ("stray-file", f"{gold}\ntouch testbed/stray.txt"),
    ]
    return cands


def run_bash(items: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    refused = []
    tasks = {}

    def skip(e: RowError) -> None:
        refused.append({"row": e.where.rsplit("row ", 1)[-1], "reason": str(e).split(": ", 2)[-1]})

    for task in intercode_bash_tasks("heldout", on_bad_row=skip):
        tasks[task.provenance.unit] = task
    rows = {f"intercode-bash:{r.number}": r for r in intercode_bash_rows()}
    placeholder = [{"type": "absent", "path": "testbed/.placeholder"}]
    refused_view = []
    with ShellVerifier() as v:
        for unit, r in rows.items():
            gold = rewrite_paths(r.data["gold"])
            task = tasks.get(unit)
            if task is None:  # refused: InterCode's own reward for the gold and the empty answer
                draft = query_task(r, "heldout", placeholder, setup_script())
                eval_side = intercode_side(v, draft, gold)
                for kind, script in (("gold", gold), ("empty", "")):
                    key = f"refused|{unit}|{kind}"
                    refused_view.append(key)
                    items.append({"kind": "bash", "key": key, "gold": gold, "eval": eval_side,
                                  "agent": intercode_side(v, draft, script)})  # fmt: skip
                continue
            eval_side = intercode_side(v, task, gold)
            for kind, script in bash_candidates(gold):
                key = f"bash|{unit}|{kind}|{len(verdicts)}"
                verdict = v.verify(task, script)
                bad = [t for t in verdict.tests if t.status != "passed"]
                verdicts[key] = {
                    "task": unit, "candidate": kind, "script": script,
                    "referee": verdict.passed, "referee_infra": bool(verdict.infra_error),
                    "referee_detail": "; ".join(f"{t.name}: {t.detail}" for t in bad)[:300],
                }  # fmt: skip
                agent = intercode_side(v, task, script)
                items.append({"kind": "bash", "key": key, "gold": gold, "agent": agent,
                              "eval": eval_side})  # fmt: skip
    return {"imported": len(tasks), "refused": refused, "refused_keys": refused_view}


# ---- SQL ----------------------------------------------------------------------------------
def sql_rows(sandbox: Any, task: Task, query: str) -> list[list[Any]] | str:
    """The rows ``query`` gives on the task's database, in the sandbox (or the error text, as
    InterCode's observation reads ``Error executing query: ...``)."""
    db = Database.from_json(task.hidden["instances"][0])
    outcomes, r = run_query(sandbox, "sqlite", query, [database_file(db, "sqlite")],
                            db.table_names, time_limit_s=10.0)  # fmt: skip
    out = outcomes[0]
    if out is None or "rows" not in out:
        return f"Error executing query: {(out or {}).get('error', r.summary())}"
    return [list(row) for row in out["rows"]]


def run_sql(items: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    refused = []

    def skip(e: RowError) -> None:
        refused.append({"row": e.where.rsplit("row ", 1)[-1], "reason": str(e).split(": ", 2)[-1]})

    tasks = list(intercode_sql_tasks("heldout", on_bad_row=skip))
    with SqlVerifier() as v:
        for task in tasks:
            gold = task.hidden["reference"]
            gold_rows = sql_rows(v.sandbox, task, gold)
            cands = [("gold", gold), ("empty", ""), *mutate(gold, SQL_MUTANTS, PER_TASK)]
            if "order by" not in gold.lower():
                cands.append(("reorder", f"SELECT * FROM ({gold}) ORDER BY 1 DESC"))
            for kind, query in cands:
                key = f"sql|{task.id}|{kind}|{len(verdicts)}"
                verdict = v.verify(task, query)
                bad = [t for t in verdict.tests if t.status != "passed"]
                verdicts[key] = {
                    "task": task.id, "candidate": kind, "query": query,
                    "referee": verdict.passed, "referee_infra": bool(verdict.infra_error),
                    "referee_detail": "; ".join(f"{t.name}: {t.detail}" for t in bad)[:300],
                }  # fmt: skip
                agent = sql_rows(v.sandbox, task, query) if query.strip() else "Error: empty"
                items.append({"kind": "sql", "key": key, "gold": gold, "gold_rows": gold_rows,
                              "agent_rows": agent})  # fmt: skip
    return {"imported": len(tasks), "refused": refused}


def summarize(verdicts: dict[str, dict[str, Any]], kind: str) -> dict[str, Any]:
    rs = [r for k, r in verdicts.items() if k.startswith(kind + "|")]

    def row(sel: list[dict[str, Any]]) -> dict[str, int]:
        return {"n": len(sel), "referee_pass": sum(r["referee"] for r in sel),
                "intercode_pass": sum(r["intercode"] for r in sel),
                "agree": sum(r["referee"] == r["intercode"] for r in sel)}  # fmt: skip

    table = {
        "gold": row([r for r in rs if r["candidate"] == "gold"]),
        "empty": row([r for r in rs if r["candidate"] == "empty"]),
        "mutant": row([r for r in rs if r["candidate"] not in ("gold", "empty")]),
    }
    dis = [r for r in rs if r["referee"] != r["intercode"]]
    return {
        "table": table,
        "agreement": sum(r["referee"] == r["intercode"] for r in rs) / max(1, len(rs)),
        "disagreements": dis,
        "by_candidate": dict(Counter(r["candidate"] for r in dis)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge-python", required=True)
    ap.add_argument("--only", choices=("bash", "sql"))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    items: list[dict[str, Any]] = []
    verdicts: dict[str, dict[str, Any]] = {}
    imports = {}
    if args.only in (None, "sql"):
        imports["sql"] = run_sql(items, verdicts)
    if args.only in (None, "bash"):
        imports["bash"] = run_bash(items, verdicts)
    judge = Path(__file__).parent / "intercode_judge.py"
    done = subprocess.run([args.judge_python, str(judge)], input=json.dumps(items),
                          capture_output=True, text=True, check=True)  # fmt: skip
    refused_rewards = {}
    for r in json.loads(done.stdout):
        if r["key"].startswith("refused|"):
            refused_rewards[r["key"]] = r["reward"]
            continue
        verdicts[r["key"]]["intercode_reward"] = r["reward"]
        verdicts[r["key"]]["intercode"] = round(r["reward"], 2) >= 1.0
    if "bash" in imports:  # InterCode's own reward on the refused queries' gold and empty answer
        imports["bash"]["refused_intercode_rewards"] = {
            k.removeprefix("refused|"): refused_rewards[k]
            for k in imports["bash"].pop("refused_keys")
        }
    report = {kind: {**imports[kind], **summarize(verdicts, kind)} for kind in imports}
    report["machine"] = machine()
    report["seconds"] = round(time.time() - t0, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": report, "candidates": list(verdicts.values()),
                                    "episodes": items}, indent=1) + "\n")  # fmt: skip
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
