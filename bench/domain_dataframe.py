"""The dataframe domain: gold pass rate, exploits, verification cost, and mutants of references.

    PYTHONPATH=src .venv/bin/python bench/domain_dataframe.py [--per-family 6] [--seed 100]
        [--repeats 5] [--out bench/results/dataframe.md]

* **gold**: ``--per-family`` tasks of each family (difficulties 0, 0.1, ...), every reference
  judged by the verifier; the share that passes (must be 100%).
* **cost**: for the first two tasks of each family, in the same run, the median of
  ``--repeats`` timings of (a) the whole verification of the reference (one sandboxed run per
  hidden set, comparison and rules on the host), (b) the reference alone run in the sandbox on
  the same hidden sets, (c) the reference alone run in this process on them (pandas, no sandbox).
* **exploits**: the red-team corpus (:mod:`referee.domains.dataframe.redteam`) on one task per
  family, each exploit beside the empty answer's reward.
* **mutants**: small wrong variants of every reference (drop a filter, wrong join type,
  sum -> mean, off-by-one window, forget the dedupe, ...); the share the verifier rejects, which
  it still accepts, and how many would have passed on the visible sample alone.

Writes the markdown fragment ``--out`` (and ``bench/out/domain_dataframe.json``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.domains.dataframe.build import build_tasks
from referee.domains.dataframe.compare import compare_tables
from referee.domains.dataframe.execute import run_program
from referee.domains.dataframe.families import FAMILIES, draft_for
from referee.domains.dataframe.redteam import corpus_tasks, run_exploits
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.tasks.model import Task

#: name -> (what it does, a function from the reference's source to a mutant, or None)
Mutator = Any


def _drop_line(pattern: str) -> Mutator:
    rx = re.compile(pattern)

    def mutate(src: str) -> str | None:
        lines = src.split("\n")
        for i, line in enumerate(lines):
            if rx.search(line):
                indent = line[: len(line) - len(line.lstrip())]
                return "\n".join([*lines[:i], indent + "pass", *lines[i + 1 :]])
        return None

    return mutate


def _replace(old: str, new: str) -> Mutator:
    def mutate(src: str) -> str | None:
        return src.replace(old, new, 1) if old in src else None

    return mutate


MUTANTS: dict[str, Mutator] = {
    "drop-filter": _drop_line(r"^\s+o = o\[o\["),
    "drop-notna-filter": _drop_line(r"\.notna\(\)\]$"),
    "drop-status-filter": _drop_line(r"\[[\"']status[\"']\]\.isin|\[\"status\"\] == "),
    "inner->left-join": _replace('how="inner"', 'how="left"'),
    "left->inner-join": _replace('how="left"', 'how="inner"'),
    "sum->mean": _replace('"sum")', '"mean")'),
    "sum->mean (series)": _replace(".sum()", ".mean()"),
    "count->size": _replace('("order_id", "count")', '("order_id", "size")'),
    "off-by-one-window": _replace("rolling(3", "rolling(2"),
    "off-by-one-window-k2": _replace("rolling(2", "rolling(3"),
    "order_no-from-0": _replace("cumcount() + 1", "cumcount()"),
    "rank-min->dense": _replace("method='min'", "method='dense'"),
    "rank-ascending": _replace("ascending=False", "ascending=True"),
    "forget-dedupe": _drop_line(r"drop_duplicates"),
    "keep-last": _replace('keep="first"', 'keep="last"'),
    "forget-strip": _replace(".str.strip().str.lower()", ".str.lower()"),
    "fill-0->1": _replace("fillna(0)", "fillna(1)"),
    "fill-1->0": _replace("fillna(1)", "fillna(0)"),
    "forget-empty-buckets": _drop_line(r"g = g\.reindex\(full"),
    "forget-absent-categories": _drop_line(r"w = w\.reindex\(columns="),
    "forget-sort": _drop_line(r"sort_values\(\[\"store\""),
    "tie-break-dropped": _replace(
        '["customer_id", "order_date", "order_id"]', '["customer_id", "order_date"]'
    ),
    "week-starts-sunday": _replace("'W-SUN'", "'W-SAT'"),
    "forget-zero-drop": _drop_line(r'out\["units"\] != 0'),
}


#: Why a mutant that is still accepted computes the same function on every input the schema
#: allows (checked by reading the references; printed under the table).
EQUIVALENT = {
    "count->size": "`order_id` is never missing, so counting it equals counting rows",
    "drop-filter": "the first filter of these references drops rows with a missing group key, "
    "which the `groupby` that follows drops anyway",
    "drop-notna-filter": "as drop-filter: a missing key is dropped by the `groupby` as well",
    "inner->left-join": "per region: an order without a customer gets no region, and the "
    "`groupby('region')` drops it either way",
}


def _median_time(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _in_process(task: Task) -> None:
    """The reference run here, on every hidden set (trusted code: the benchmark's own)."""
    import io

    import pandas as pd

    ns: dict[str, Any] = {}
    exec(compile(task.hidden["reference"], "reference.py", "exec"), ns)
    schema = task.payload["schema"]
    types = {"int": "Int64", "float": "float64", "str": "str", "bool": "boolean"}
    for inst in task.hidden["instances"]:
        tables = {}
        for name, cols in schema.items():
            dtypes = {c: types[t] for c, t in cols.items() if t in types}
            frame = pd.read_csv(
                io.StringIO(inst["inputs"][name]),
                dtype=dtypes,
                keep_default_na=False,
                na_values=[""],
            )
            for c, t in cols.items():
                if t == "date":
                    frame[c] = pd.to_datetime(frame[c], format="ISO8601")
            tables[name] = frame
        ns["transform"](tables)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-family", type=int, default=6)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "dataframe.md"))
    args = ap.parse_args()
    t_start = time.time()
    result: dict[str, Any] = {"machine": machine(), "args": vars(args)}

    with DataframeVerifier() as v:
        sb = v.sandbox
        # ---- tasks and gold --------------------------------------------------------------
        n = args.per_family
        drafts = [
            draft_for(f, round(i / (n - 1), 2) if n > 1 else 0.5, args.seed + i)
            for f in FAMILIES
            for i in range(n)
        ]
        tasks = build_tasks(drafts, sb)
        gold: dict[str, list[bool]] = defaultdict(list)
        units: dict[str, set[str]] = defaultdict(set)
        for t in tasks:
            fam = t.provenance.generator or ""
            gold[fam].append(v.verify(t, t.hidden["reference"]).passed)
            units[fam].add(t.provenance.unit or "")
        result["gold"] = {f: [sum(p), len(p)] for f, p in gold.items()}
        print("gold", result["gold"], flush=True)

        # ---- cost --------------------------------------------------------------------------
        cost = []
        for fam in FAMILIES:
            for t in [t for t in tasks if t.provenance.generator == fam][:2]:
                ref = t.hidden["reference"]
                verify_s = _median_time(lambda t=t, ref=ref: v.verify(t, ref), args.repeats)
                alone_s = _median_time(
                    lambda t=t, ref=ref: [
                        run_program(sb, ref, t.payload["schema"], i["inputs"])
                        for i in t.hidden["instances"]
                    ],
                    args.repeats,
                )
                host_s = _median_time(lambda t=t: _in_process(t), args.repeats)
                cost.append((fam, t.id, verify_s, alone_s, host_s))
        result["cost"] = cost
        print("cost done", flush=True)

        # ---- exploits ----------------------------------------------------------------------
        outcomes = run_exploits(v.verify, corpus_tasks())
        result["exploits"] = [
            [o.name, o.klass, o.reward, o.baseline, o.held, list(o.flags)] for o in outcomes
        ]
        print("exploits held", sum(o.held for o in outcomes), "of", len(outcomes), flush=True)

        # ---- mutants -----------------------------------------------------------------------
        mut: dict[str, dict[str, Any]] = {}
        for t in tasks:
            ref = t.hidden["reference"]
            for name, mutate in MUTANTS.items():
                src = mutate(ref)
                if src is None or src == ref:
                    continue
                verdict = v.verify(t, src)
                seen = run_program(sb, src, t.payload["schema"], t.payload["visible"])
                on_sample = seen.result is not None and not compare_tables(
                    seen.result,
                    t.payload["visible_output"],
                    ordered=bool(t.hidden["compare"]["ordered"]),
                )
                row = mut.setdefault(
                    name,
                    {"applied": 0, "rejected": 0, "sample_pass": 0, "caught": 0, "accepted": []},
                )
                row["applied"] += 1
                row["rejected"] += not verdict.passed
                row["sample_pass"] += on_sample
                row["caught"] += on_sample and not verdict.passed
                if verdict.passed:
                    row["accepted"].append(t.id)
        result["mutants"] = mut
    result["wall_s"] = time.time() - t_start
    save("domain_dataframe", result)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(_markdown(result, units))
    print(Path(args.out).read_text())


def _markdown(r: dict[str, Any], units: dict[str, set[str]]) -> str:
    m = r["machine"]
    a = r["args"]
    lines = [
        "## Dataframe domain (pandas pipelines on hidden tables)",
        "",
        f"2026-12-02, {m['cpu']} ({m['cores']} cores, shared with other work), Python "
        f"{m['python']}, pandas in the sandbox's fork server.",
        f"`PYTHONPATH=src .venv/bin/python bench/domain_dataframe.py --per-family "
        f"{a['per_family']} --seed {a['seed']} --repeats {a['repeats']}` "
        f"({r['wall_s']:.0f} s).",
        "",
        "| family | tasks (difficulty 0..1) | variants (held-out units) | gold passes |",
        "|---|---|---|---|",
    ]
    for fam, (ok, n) in r["gold"].items():
        lines.append(f"| {fam} | {n} | {len(units[fam])} | {ok}/{n} |")
    lines += [
        "",
        "Cost per sample (median of the repeats; 4 hidden sets each; the same run):",
        "",
        "| family | task | verify (ms) | reference alone, sandbox (ms) | reference alone, "
        "in process (ms) | verify / sandboxed reference |",
        "|---|---|---|---|---|---|",
    ]
    for fam, tid, ver, alone, host in r["cost"]:
        lines.append(
            f"| {fam} | `{tid.split('/')[-1]}` | {ver * 1000:.0f} | {alone * 1000:.0f} | "
            f"{host * 1000:.0f} | {ver / alone:.2f} |"
        )
    ex = r["exploits"]
    held = sum(e[4] for e in ex)
    lines += [
        "",
        f"Exploits (one task per family): **{held}/{len(ex)} held** (reward no more than the "
        "empty answer's, never passed, no infra error).",
        "",
        "| exploit | class | held | max reward | flags |",
        "|---|---|---|---|---|",
    ]
    by_name: dict[str, list[Any]] = defaultdict(list)
    for e in ex:
        by_name[e[0].split(" on ")[0]].append(e)
    for name, rows in by_name.items():
        flags = sorted({f for e in rows for f in e[5]})
        lines.append(
            f"| {name} | {rows[0][1]} | {sum(e[4] for e in rows)}/{len(rows)} | "
            f"{max(e[2] for e in rows):.2f} | {', '.join(flags) or '-'} |"
        )
    mut = r["mutants"]
    applied = sum(v["applied"] for v in mut.values())
    rejected = sum(v["rejected"] for v in mut.values())
    lines += [
        "",
        f"Mutants of the references: **{rejected}/{applied} rejected "
        f"({100 * rejected / max(applied, 1):.0f}%)**. `passes the sample` counts the mutants "
        "whose output on the visible sample equals the reference's (what a judge of the sample "
        "alone would have accepted). "
        f"{sum(v['sample_pass'] for v in mut.values())} mutants pass the sample; the hidden "
        f"sets reject {sum(v['caught'] for v in mut.values())} of them.",
        "",
        "| mutant | applied | rejected | passes the sample | still accepted on |",
        "|---|---|---|---|---|",
    ]
    for name, v in sorted(mut.items()):
        acc = ", ".join(f"`{a.split('/')[-1]}`" for a in v["accepted"][:4])
        more = len(v["accepted"]) - 4
        acc += f" (+{more})" if more > 0 else ""
        lines.append(
            f"| {name} | {v['applied']} | {v['rejected']} | {v['sample_pass']} | {acc or '-'} |"
        )
    still = [name for name, v in sorted(mut.items()) if v["accepted"]]
    if still:
        lines += ["", "Why the accepted ones are accepted:", ""]
        for name in still:
            why = EQUIVALENT.get(name, "**not explained: a weakness to look at**")
            lines.append(f"- {name}: {why}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
