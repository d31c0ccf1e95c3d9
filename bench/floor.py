"""Every kind of check beside its floor, for two trees in one run: ``make bench-floor``.

    .venv/bin/python bench/floor.py [--anchor REF | --anchor-path DIR] [--rounds 3]
        [--only PATTERN] [--quick]

Each ``bench/floor_*.py`` module (found by glob) defines ``rows(quick: bool) -> list[dict]``; a row
is one kind of check::

    {"kind": "function (HumanEval, at the margin)", "unit": "check",
     "cost_ms": 2.6, "floor_ms": 1.0, "note": "what the floor is"}

``cost_ms`` and ``floor_ms`` are per ``unit`` and measured by the module in the same run (the
same subprocess), so their ratio holds on a shared, noisy machine. A row may carry more keys
(``extra``: anything JSON, kept in the raw output; ``verdicts``: a digest of the verdicts, which
must be equal in both trees).

The runner runs every module's ``rows()`` in a fresh subprocess for each tree, the anchor (by
default the git ref ``814f674``, the tree before issue 32, checked out with ``git worktree add
--detach`` into a temporary folder and removed afterwards; ``--anchor-path`` names a checkout
instead) and the current tree (this file's), with ``PYTHONPATH=<tree>/src:<this bench folder>``:
the module's code is the same in both, only the tree it measures differs, so a module must use
only public APIs that exist in both trees. The trees alternate within each round and their order
turns every round; ``--rounds N`` takes the median. Ratios (cost / floor) are the medians of the
ratios each run measured; the share is floor / cost (the issue states the function check's
target as a share). A module that fails in a tree puts its error in that tree's cells.

Raw JSON and the markdown table go to ``bench/results/floor/``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "results" / "floor"
DEFAULT_ANCHOR = "814f674"
MARK = "@@floor-rows@@ "
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "kind": str,
    "unit": str,
    "cost_ms": (int, float),
    "floor_ms": (int, float),
    "note": str,
}

# The child: import the module from the bench folder, call rows(), print them after a marker so
# that whatever the module prints itself does not matter.
CHILD = f"""
import importlib, json, sys
mod = importlib.import_module(sys.argv[1])
rows = mod.rows(sys.argv[2] == "1")
print({MARK!r} + json.dumps(rows), flush=True)
"""


def modules(only: str | None) -> list[str]:
    names = sorted(p.stem for p in BENCH.glob("floor_*.py"))
    if only:
        names = [n for n in names if fnmatch.fnmatch(n, f"*{only}*")]
    return names


def validate(rows: Any) -> list[dict[str, Any]]:
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"rows() must return a non-empty list of dicts, got {type(rows).__name__}")
    for r in rows:
        if not isinstance(r, dict):
            raise ValueError(f"a row must be a dict, got {type(r).__name__}")
        for key, typ in REQUIRED.items():
            if not isinstance(r.get(key), typ):
                raise ValueError(f"row {r.get('kind')!r}: {key!r} missing or not {typ}")
    return rows


def tree_env(tree: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}:{BENCH}"}
    # As an installed package has it: bytecode cached (this machine's shells set
    # PYTHONDONTWRITEBYTECODE, which makes every start compile referee's source).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["REFEREE_FLOOR_TREE"] = str(tree)
    return env


def run_module(name: str, tree: Path, quick: bool, timeout: float) -> dict[str, Any]:
    t0 = time.time()
    load0 = os.getloadavg()
    try:
        p = subprocess.run(
            [sys.executable, "-c", CHILD, name, "1" if quick else "0"],
            env=tree_env(tree),
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return _failed(t0, load0, f"timed out after {timeout:.0f} s")
    rows = [line[len(MARK) :] for line in p.stdout.splitlines() if line.startswith(MARK)]
    if p.returncode != 0 or not rows:
        tail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}, no rows"])[-1]
        return _failed(t0, load0, tail[:300], p.stderr[-4000:])
    try:
        out = validate(json.loads(rows[-1]))
    except ValueError as e:
        return _failed(t0, load0, str(e))
    return {
        "ok": True,
        "rows": out,
        "wall_s": time.time() - t0,
        "loadavg": [load0, os.getloadavg()],
    }


def _failed(t0: float, load0: tuple[float, ...], error: str, stderr: str = "") -> dict[str, Any]:
    return {
        "ok": False,
        "error": error,
        "stderr_tail": stderr,
        "wall_s": time.time() - t0,
        "loadavg": [load0, os.getloadavg()],
    }


def _bad_input(message: str) -> NoReturn:
    print(f"floor.py: {message}", file=sys.stderr)
    sys.exit(2)


@contextmanager
def anchor_tree(ref: str, path: str | None) -> Iterator[Path]:
    if path:
        p = Path(path).resolve()
        if not (p / "src" / "referee").is_dir():
            _bad_input(f"--anchor-path {p}: no src/referee there; give a checkout of referee")
        yield p
        return
    tmp = Path(tempfile.mkdtemp(prefix="referee-floor-anchor-"))
    dest = tmp / "tree"
    r = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(dest), ref],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        _bad_input(
            f"--anchor {ref}: git worktree add failed: {r.stderr.strip()}; "
            "give a ref of this repository or --anchor-path DIR"
        )
    try:
        yield dest
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(dest)],
            capture_output=True,
        )
        shutil.rmtree(tmp, ignore_errors=True)


def _fmt_ms(v: float) -> str:
    return f"{v:.3g} ms" if v < 100 else f"{v:,.0f} ms"


def aggregate(runs: list[dict[str, Any]], trees: list[str]) -> list[dict[str, Any]]:
    """One entry per (module, kind): each tree's median cost and ratio, the floor, errors."""
    kinds: dict[tuple[str, str], dict[str, Any]] = {}
    errors: dict[tuple[str, str], str] = {}
    for run in runs:
        mod, tree = run["module"], run["tree"]
        if not run["ok"]:
            errors[(mod, tree)] = run["error"]
            continue
        for row in run["rows"]:
            k = kinds.setdefault(
                (mod, row["kind"]),
                {"module": mod, "kind": row["kind"], "unit": row["unit"], "note": row["note"]},
            )
            per = k.setdefault(tree, {"cost_ms": [], "floor_ms": [], "ratio": [], "verdicts": []})
            per["cost_ms"].append(row["cost_ms"])
            per["floor_ms"].append(row["floor_ms"])
            per["ratio"].append(row["cost_ms"] / row["floor_ms"] if row["floor_ms"] > 0 else None)
            if "verdicts" in row:
                per["verdicts"].append(row["verdicts"])
    failed_mods = {m for m, _ in errors}
    out = []
    for mod in sorted({m for m, _ in kinds} | failed_mods):
        entries = [v for (m, _), v in kinds.items() if m == mod]
        if not entries:  # failed in every tree
            entries = [{"module": mod, "kind": f"{mod} (no rows)", "unit": "", "note": ""}]
        for e in entries:
            floors: list[float] = []
            for t in trees:
                if (mod, t) in errors:
                    e[t] = {"error": errors[(mod, t)]}
                elif t not in e:
                    e[t] = {"error": "kind not returned by this tree's run"}
                else:
                    per = e[t]
                    ratios = [r for r in per["ratio"] if r is not None]
                    per["cost_med_ms"] = statistics.median(per["cost_ms"])
                    per["ratio_med"] = statistics.median(ratios) if ratios else None
                    floors += per["floor_ms"]
            e["floor_med_ms"] = statistics.median(floors) if floors else None
            digests = {d for t in trees for d in e.get(t, {}).get("verdicts", [])}
            e["verdicts_equal"] = None if not digests else len(digests) == 1
            out.append(e)
    return out


def table(entries: list[dict[str, Any]], trees: list[str]) -> str:
    lines = [
        "| kind | unit | anchor cost | current cost | floor | anchor ratio | current ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        cells = [e["kind"], e["unit"]]
        for t in trees:
            per = e[t]
            cells.append(
                f"error: {per['error']}" if "error" in per else _fmt_ms(per["cost_med_ms"])
            )
        cells.append(_fmt_ms(e["floor_med_ms"]) if e["floor_med_ms"] is not None else "-")
        for t in trees:
            per = e[t]
            r = per.get("ratio_med")
            cells.append("-" if r is None else f"{r:.2f}x ({100 / r:.1f} % of floor)")
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    notes = [f"* {e['kind']}: {e['note']}" for e in entries if e.get("note")]
    differ = [e["kind"] for e in entries if e.get("verdicts_equal") is False]
    if differ:
        notes.append("* **verdicts differ between the trees**: " + ", ".join(differ))
    return "\n".join(lines + (["", *notes] if notes else []))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--anchor", default=DEFAULT_ANCHOR, help="git ref of the anchor tree")
    ap.add_argument("--anchor-path", help="a checkout of the anchor tree (instead of --anchor)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="run only the modules whose name contains PATTERN (fnmatch)")
    ap.add_argument("--quick", action="store_true", help="smaller runs, for a first look")
    ap.add_argument("--timeout", type=float, default=3600, help="per module run, seconds")
    ap.add_argument("--name", help="output file stem (default floor-<UTC time>)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    mods = modules(args.only)
    if not mods:
        ap.error(f"no bench/floor_*.py module matches --only {args.only!r}; see bench/floor_*.py")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name = args.name or f"floor-{stamp}"
    OUT.mkdir(parents=True, exist_ok=True)
    trees_order = ["anchor", "current"]
    runs: list[dict[str, Any]] = []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with anchor_tree(args.anchor, args.anchor_path) as anchor:
        paths = {"anchor": anchor, "current": ROOT}
        for i in range(args.rounds):
            for mod in mods:
                order = trees_order[i % 2 :] + trees_order[: i % 2]
                for t in order:
                    r = run_module(mod, paths[t], args.quick, args.timeout)
                    r.update(module=mod, tree=t, round=i + 1)
                    runs.append(r)
                    status = "ok" if r["ok"] else f"error: {r['error']}"
                    print(
                        f"round {i + 1} {mod} {t}: {status} ({r['wall_s']:.1f} s, "
                        f"load {r['loadavg'][0][0]:.1f})",
                        file=sys.stderr,
                        flush=True,
                    )
                    (OUT / f"{name}.partial.json").write_text(json.dumps(runs, indent=1) + "\n")
    entries = aggregate(runs, trees_order)
    md = table(entries, trees_order)
    head = (
        f"`python bench/floor.py {' '.join(sys.argv[1:])}`, {started} to "
        f"{time.strftime('%H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load "
        f"{min(r['loadavg'][0][0] for r in runs):.1f}-{max(r['loadavg'][1][0] for r in runs):.1f}; "
        f"anchor {args.anchor_path or args.anchor}, current {ROOT}; medians of {args.rounds} rounds"
    )
    result = {
        "command": "python bench/floor.py " + " ".join(sys.argv[1:]),
        "started": started,
        "anchor": args.anchor_path or args.anchor,
        "current": str(ROOT),
        "cores": os.cpu_count(),
        "rounds": args.rounds,
        "quick": args.quick,
        "runs": runs,
        "table": entries,
    }
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    (OUT / f"{name}.md").write_text(head + "\n\n" + md + "\n")
    (OUT / f"{name}.partial.json").unlink(missing_ok=True)
    print(head + "\n\n" + md)
    print(f"\nsaved {OUT / name}.json and .md", file=sys.stderr)


if __name__ == "__main__":
    main()
