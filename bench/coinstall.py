"""Does referee install beside each trainer? pip's resolver answers, in a dry run.

    .venv/bin/python bench/coinstall.py [--only verl,trl] [--jobs 2]

Builds referee's wheel twice with ``pip wheel --no-deps``: *after* from this worktree (the light
core, each trainer's extra) and *before* from BEFORE (``git archive``: every dependency
an exact pin, no trainer extras). Then, for each trainer release below and each side, in a fresh
``python3.11 -m venv`` (so nothing installed there interferes), runs

    python -m pip install --dry-run --ignore-installed --report REPORT.json \\
        'referee-0.1.0-py3-none-any.whl[EXTRA]' 'TRAINER==VERSION'

and records whether it resolves, the versions it chose for torch, transformers and ray (from the
report), and the resolver's error on failure. Writes bench/results/install/coinstall.json and
coinstall.md. pip's own configuration applies (this machine: a constraint torch<=2.14.1, the
releases on its disk; a realistic cap).

Unbuildable requirements. A dry run still builds the metadata of every sdist it considers. A
trainer's requirement whose sdist cannot build its metadata here (no CUDA, no torch in the build
environment) is left out, named in EXCLUDE with the reason: for such a trainer the trainer line
is replaced by the trainer's own Requires-Dist (read from its wheel's metadata, markers evaluated
with no extras), minus the excluded names, so that everything else it asks is still resolved
together with referee. The trainer itself is then not in the resolution (its metadata is), and
the excluded package's own requirements are not (flash-attn asks torch and einops, which OpenRLHF
asks anyway). Both sides use the same substitution.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "install"
PY = "python3.11"

# name -> (pip name, version, referee extra); the releases the adapters are written against.
TRAINERS: dict[str, tuple[str, str, str]] = {
    "verl": ("verl", "0.9.1", "verl"),
    "openrlhf": ("openrlhf", "0.11.2", "openrlhf"),
    "areal": ("areal", "1.0.4", "areal"),
    "verifiers": ("verifiers", "0.4.0", "prime"),
    "skyrl-gym": ("skyrl-gym", "0.4.0", "skyrl"),
    "trl": ("trl", "1.16.0", "trl"),
}

# Requirements of a trainer left out of its resolution, and why (see the module's docstring).
EXCLUDE: dict[str, dict[str, str]] = {
    "openrlhf": {
        "flash-attn": (
            "flash-attn==2.8.3 is an sdist only; its setup.py imports torch and needs CUDA (nvcc) "
            "to build even its metadata, which pip's isolated build environment here does not have"
        ),
    },
}

WATCH = ("torch", "transformers", "ray")

# The anchor: main before issue 28 (f096a7e, where this branch started), every dependency an
# exact pin; main itself has since moved on to ranges.
BEFORE = "f096a7ebd4a3b9bc86c51d826b7e4565f6409744"

# What the runs taught, printed under the table (kept by hand: a rerun does not rediscover it).
NOTES = [
    "A first run of the light core with floors at requirements.lock's versions failed for AReaL "
    "(after: ResolutionImpossible): AReaL 1.0.4 pins swanlab[dashboard]==0.6.12, and swanlab "
    "0.6.12 (and swanboard) ask rich>=13.6,<14, where the core said rich>=15.0.0. AReaL alone "
    "resolved (rich 13.9.4): referee's floor was the cause, not AReaL. The core now says "
    "rich>=13.8 (typer's own floor); referee's CLI ran with rich 13.9.4 (--help, tasks export).",
    "torch 2.14.1 is this machine's cap (pip's global constraint torch<=2.14.1), not referee's: "
    "referee's trainer extras and core say nothing about torch but openrlhf's torch>=2.1. AReaL's "
    "own torch<2.11 gives 2.10.0.",
    "main's core as merged from h-core (rich>=15.0.0, packaging>=26.4) with these extras: AReaL "
    "ResolutionImpossible (rich), veRL backtracking for 797 s (pyvers 0.1.0, under tensordict "
    "0.10.0, asks packaging<26); with rich>=13.8 and packaging>=22 both resolve "
    "(coinstall-main-core.json).",
    "Dry runs resolve metadata only: nothing is built or imported. The contract suites "
    "(make test-trainers) install the wheel for real, beside each trainer's lock.",
]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build_wheels(work: Path) -> dict[str, Path]:
    """The after wheel (this worktree) and the before wheel (BEFORE's tree)."""
    wheels = {}
    src_before = work / "before-src"
    src_before.mkdir()
    arch = subprocess.run(
        ["git", "-C", str(ROOT), "archive", BEFORE], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(src_before)], input=arch.stdout, check=True)
    for side, src in (("after", ROOT), ("before", src_before)):
        dest = work / f"wheel-{side}"
        res = run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dest), str(src)]
        )
        if res.returncode:
            raise SystemExit(f"pip wheel ({side}) failed:\n{res.stderr}")
        (wheel,) = dest.glob("referee-*.whl")
        wheels[side] = wheel
    return wheels


def wheel_requires(wheel: Path) -> list[str]:
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    return [
        ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Requires-Dist:")
    ]


def trainer_requires(venv_py: Path, pkg: str, version: str, work: Path) -> list[str]:
    """The trainer's Requires-Dist whose markers hold here with no extras (from its metadata)."""
    rep = work / f"meta-{pkg}.json"
    res = run(
        [
            str(venv_py),
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--no-deps",
            "--ignore-installed",
            "-q",
            "--report",
            str(rep),
            f"{pkg}=={version}",
        ]
    )
    if res.returncode:
        raise RuntimeError(f"metadata of {pkg}=={version}: {res.stderr[-2000:]}")
    (item,) = json.loads(rep.read_text())["install"]
    reqs = item["metadata"].get("requires_dist", [])
    code = (
        "import json,sys\nfrom pip._vendor.packaging.requirements import Requirement\n"
        "out=[]\nfor r in json.load(sys.stdin):\n"
        "    q=Requirement(r)\n"
        "    if q.marker is None or q.marker.evaluate({'extra': ''}):\n"
        "        q.marker=None; out.append(str(q))\n"
        "print(json.dumps(out))\n"
    )
    res = run([str(venv_py), "-c", code], input=json.dumps(reqs))
    return json.loads(res.stdout)


def _error_text(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if "is ignored: it is neither a file" not in ln]
    text = "\n".join(lines)
    i = text.find("ERROR:")
    j = text.find("The conflict is caused by:")
    i = min(k for k in (i, j) if k >= 0) if max(i, j) >= 0 else 0
    # the "Would install"/"Collecting" noise stays out; the causes and the final error stay in;
    # where a file came from (an index's address) is not recorded
    text = re.sub(r" ?\(from https?://[^()]*(\([^()]*\))?[^()]*\)", "", text[i:])
    return re.sub(r"https?://\S+", "<url>", text)[-4000:].strip()


def one(name: str, side: str, wheel: Path, work: Path) -> dict[str, Any]:
    pkg, version, extra = TRAINERS[name]
    d = work / f"{name}-{side}"
    d.mkdir()
    venv = d / "venv"
    subprocess.run([PY, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    # BEFORE's pyproject has no trainer extras: the before side installs referee as it was. The
    # alone side resolves the trainer without referee: a failure there is the trainer's own.
    ref = {"after": f"{wheel}[{extra}]", "before": str(wheel), "alone": None}[side]
    excluded = EXCLUDE.get(name, {})
    if excluded:
        reqs = trainer_requires(py, pkg, version, d)
        dropped = [r for r in reqs if _norm(re.split(r"[ <>=!~\[;]", r, maxsplit=1)[0]) in excluded]
        trainer_args = [r for r in reqs if r not in dropped]
        mode = f"{pkg}=={version}'s Requires-Dist without {', '.join(excluded)}"
    else:
        dropped, trainer_args, mode = [], [f"{pkg}=={version}"], f"{pkg}=={version}"
    report = d / "report.json"
    cmd = [
        str(py),
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--report",
        str(report),
        *([ref] if ref else []),
        *trainer_args,
    ]
    t0 = time.monotonic()
    try:
        # pip prints the conflict's causes ("The conflict is caused by: ...") on stdout.
        res = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1500
        )
        rc, stderr = res.returncode, res.stdout
    except subprocess.TimeoutExpired as e:
        rc, stderr = -1, f"timed out after 1500 s\n{(e.stderr or b'')[-3000:]!r}"
    took = time.monotonic() - t0
    row: dict[str, Any] = {
        "trainer": f"{pkg}=={version}",
        "side": side,
        "referee": Path(ref).name if ref else None,
        "resolves": rc == 0,
        "seconds": round(took, 1),
        "trainer_line": mode,
        "excluded": {k: v for k, v in excluded.items()},
        "dropped_requirements": dropped,
    }
    if rc == 0:
        chosen = {
            _norm(i["metadata"]["name"]): i["metadata"]["version"]
            for i in json.loads(report.read_text())["install"]
        }
        row["chosen"] = {w: chosen.get(w) for w in WATCH}
        row["packages"] = len(chosen)
        row["install"] = dict(sorted(chosen.items()))
    else:
        row["error"] = _error_text(stderr)
    shutil.rmtree(venv, ignore_errors=True)
    print(
        f"coinstall: {name} {side}: {'resolves' if rc == 0 else 'FAILS'} ({took:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    return row


def _verdict(r: dict[str, Any]) -> str:
    if r["resolves"]:
        return "resolves"
    if r["error"].startswith("timed out"):
        return "timed out"
    return "ResolutionImpossible" if "ResolutionImpossible" in r["error"] else "fails"


def markdown(doc: dict[str, Any]) -> str:
    rows = doc["results"]
    by = {(r["trainer"], r["side"]): r for r in rows}
    out = [
        "# referee beside each trainer: pip's resolver, dry run",
        "",
        f"Date: {doc['date']}. Machine: {doc['machine']}. pip {doc['pip']} (a fresh "
        f"`{PY} -m venv` per run). pip configuration: {doc['pip_config']}.",
        "",
        "Command (per trainer and side):",
        "",
        "    python -m pip install --dry-run --ignore-installed --report REPORT.json \\",
        "        'referee-0.1.0-py3-none-any.whl[EXTRA]' 'TRAINER==VERSION'",
        "",
        f"*before*: referee built from main before issue 28 ({BEFORE[:7]}; every dependency "
        "pinned: torch==2.13.0, "
        "transformers==5.24.0, ray==2.60.0, ...; no extras). *after*: this branch (light core, "
        "the trainer's extra). *trainer alone*: the trainer without referee (where after fails: "
        "is it referee or the trainer?). Regenerate: `.venv/bin/python bench/coinstall.py`.",
        "torch, transformers, ray: the versions the resolver chose after (and before, where it "
        "resolved and chose another).",
        "",
        "| trainer | extra | before | after | trainer alone | torch | transformers | ray | "
        "packages (after) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for pkg, version, extra in TRAINERS.values():
        t = f"{pkg}=={version}"
        b, a, alone = by.get((t, "before")), by.get((t, "after")), by.get((t, "alone"))
        if not (a and b):
            continue
        ch, chb = a.get("chosen", {}), b.get("chosen", {})
        cells = []
        for w in WATCH:
            now, was = ch.get(w) or "-", chb.get(w)
            cells.append(f"{now} (before {was})" if was and was != now else now)
        star = " (*)" if a["excluded"] else ""
        out.append(
            f"| {t}{star} | `[{extra}]` | {_verdict(b)} | {_verdict(a)} | "
            f"{_verdict(alone) if alone else 'not run'} | {' | '.join(cells)} | "
            f"{a.get('packages', '-')} |"
        )
    out.append("")
    for name, why in EXCLUDE.items():
        for req, reason in why.items():
            out.append(
                f"(*) {name}: `{req}` left out of the resolution (the rest of its "
                f"Requires-Dist is resolved with referee): {reason}."
            )
    out += ["", "## Notes", ""] + [f"* {n}" for n in NOTES]
    out += ["", "## Resolver errors", ""]
    for r in rows:
        if not r["resolves"]:
            out += [f"### {r['trainer']}, {r['side']}", "", "```", r["error"], "```", ""]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated trainer names")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sides", default="before,after,alone")
    args = ap.parse_args()
    names = [n for n in TRAINERS if not args.only or n in args.only.split(",")]
    sides = args.sides.split(",")
    work = Path(tempfile.mkdtemp(prefix="coinstall-"))
    try:
        wheels = build_wheels(work)
        jobs = [(n, s) for n in names for s in sides]
        with ThreadPoolExecutor(args.jobs) as ex:
            rows = list(ex.map(lambda j: one(j[0], j[1], wheels.get(j[1], Path()), work), jobs))
        pip_v = run([sys.executable, "-m", "pip", "--version"]).stdout.split()[1]
        cfg = run([sys.executable, "-m", "pip", "config", "list"]).stdout
        constraint = ""
        m = re.search(r"global\.constraint='([^']+)'", cfg)
        if m and Path(m.group(1)).exists():
            constraint = " ".join(
                ln
                for ln in Path(m.group(1)).read_text().splitlines()
                if ln.strip() and not ln.startswith("#")
            )
        doc = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{platform.system()} {platform.release()} {platform.machine()}, "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}, no GPU",
            "pip": pip_v,
            "pip_config": f"global constraint ({constraint or 'none'}); a local index and "
            "find-links beside the public index",
            "before_ref": BEFORE,
            "wheel_requires": {s: wheel_requires(w) for s, w in wheels.items()},
            "exclude": EXCLUDE,
            "results": rows,
        }
        OUT.mkdir(parents=True, exist_ok=True)
        old = OUT / "coinstall.json"
        if args.only and old.exists():  # a partial run updates its rows only
            prev = json.loads(old.read_text())
            keep = [
                r
                for r in prev["results"]
                if not any(
                    r["trainer"].startswith(TRAINERS[n][0] + "==") and r["side"] in sides
                    for n in names
                )
            ]
            doc["results"] = keep + rows
        order = {f"{p}=={v}": i for i, (p, v, _) in enumerate(TRAINERS.values())}
        doc["results"].sort(key=lambda r: (order.get(r["trainer"], 99), r["side"] != "before"))
        old.write_text(json.dumps(doc, indent=1) + "\n")
        (OUT / "coinstall.md").write_text(markdown(doc))
        print(f"coinstall: wrote {OUT}/coinstall.json, coinstall.md", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
