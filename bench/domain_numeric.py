"""The numeric domain, measured: gold pass rate, exploits, verification time, mutants.

    PYTHONPATH=src python bench/domain_numeric.py [--seeds 2] [--repeats 3] [--quick]

For every problem structure (11, over 7 families) at difficulties 0, 0.5 and 1:

* gold: the reference judged on its own task (must be 100%);
* alternatives: right answers by other methods (RK45, a hand-written RK4, QR, Newton, BFGS,
  Gauss-Legendre, explicit Euler...) that the tolerance policy must let through;
* time: verifying the reference (median of ``--repeats``) against running the reference alone
  on the same hidden sets in the same sandbox (a bare program printing JSON; median too);
* mutants: small wrong variants of the references (wrong sign, forgotten term, too-loose solver
  tolerance, off-by-one step count, single precision, ...): the share rejected, and the ones
  still accepted, by name;
* exploits: the red-team corpus (``referee redteam --verifier numeric``).

Writes ``bench/out/domain_numeric.json`` and the markdown fragment ``bench/results/numeric.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import machine, save
from referee.domains.numeric.alternatives import ALTERNATIVES
from referee.domains.numeric.families import make_task
from referee.domains.numeric.problems import PROBLEMS
from referee.domains.numeric.redteam import run_corpus
from referee.domains.numeric.sandbox import numeric_sandbox
from referee.domains.numeric.verifier import NumericVerifier
from referee.sandbox import Limits
from referee.tasks.model import Task

RESULTS = Path(__file__).parent / "results" / "numeric.md"

_SINGLE = """

_referee_bench_solve = solve


def solve(params):
    import numpy as np

    def f32(x):
        if isinstance(x, dict):
            return {k: f32(v) for k, v in x.items()}
        return np.asarray(x, dtype=np.float32).tolist()

    return f32(_referee_bench_solve(params))
"""

# unit -> [(mutant, kind, base program: "reference" or an alternative's name, old, new)];
# ``old`` and ``new`` may be tuples of several replacements.
MUTANTS: dict[str, list[tuple[str, str, str, Any, Any]]] = {
    "num-ode/lotka-volterra": [
        ("prey-sign", "wrong sign", "reference", "a * x - b * x * y", "a * x + b * x * y"),
        ("no-death-term", "forgotten term", "reference", "d * x * y - c * y", "d * x * y"),
        (
            "default-tolerances",
            "loose tolerance",
            "reference",
            'method="DOP853",\n                    t_eval=times, rtol=1e-12, atol=1e-12',
            "t_eval=times",
        ),
        ("rtol-1e-6", "loose tolerance", "rk45", "rtol=1e-10, atol=1e-12", "rtol=1e-6"),
        (
            "rk4-one-step-short",
            "off-by-one",
            "hand-rk4",
            "for _ in range(steps):",
            "for _ in range(steps - 1):",
        ),
        ("rk4-coarse", "loose tolerance", "hand-rk4", "/ 2e-3))", "/ 5e-2))"),
    ],
    "num-ode/stiff-linear": [
        ("sign-of-A", "wrong sign", "reference", "expm(a * t)", "expm(-a * t)"),
        ("transpose", "wrong formula", "reference", "@ y0).tolist()", "@ y0)[::-1].tolist()"),
        ("radau-loose", "loose tolerance", "radau", "rtol=1e-11, atol=1e-13", "rtol=1e-4"),
    ],
    "num-linear/dense": [
        (
            "transpose-A",
            "wrong formula",
            "reference",
            'np.array(params["A"])',
            'np.array(params["A"]).T',
        ),
        (
            "normal-equations",
            "unstable method",
            "reference",
            'np.linalg.solve(np.array(params["A"]), np.array(params["b"]))',
            'np.linalg.solve(np.array(params["A"]).T @ np.array(params["A"]), '
            'np.array(params["A"]).T @ np.array(params["b"]))',
        ),
        (
            "inverse",
            "unstable method",
            "reference",
            'np.linalg.solve(np.array(params["A"]), np.array(params["b"]))',
            'np.linalg.inv(np.array(params["A"])) @ np.array(params["b"])',
        ),
    ],
    "num-root/kepler": [
        ("sign-of-e", "wrong sign", "newton", "x - e*math.sin(x) - m", "x + e*math.sin(x) - m"),
        ("newton-2-steps", "off-by-one", "newton", "range(100)", "range(2)"),
        (
            "brent-loose-no-polish",
            "loose tolerance",
            "reference",
            ("xtol=1e-15, rtol=8.9e-16", "for _ in range(3):"),
            ("xtol=1e-6", "for _ in range(0):"),
        ),
    ],
    "num-root/contraction-system": [
        ("sign-of-c", "wrong sign", "fixed-point", "b - c * np.tanh", "b + c * np.tanh"),
        ("fixed-point-20", "off-by-one", "fixed-point", "range(100000)", "range(20)"),
    ],
    "num-optimize/logistic": [
        ("bfgs-default-gtol", "loose tolerance", "bfgs", 'options={"gtol": 1e-11}', "options={}"),
        ("no-regulariser", "forgotten term", "bfgs", "+ 0.5*mu*w @ w", ""),
        (
            "f-without-reg",
            "forgotten term",
            "reference",
            "float(fgh(w)[0])",
            "float(np.sum(np.logaddexp(0.0, -y * (x @ w))))",
        ),
    ],
    "num-quadrature/oscillatory": [
        ("cos-to-sin", "wrong formula", "reference", "math.cos(w * x)", "math.sin(w * x)"),
        ("no-c-term", "forgotten term", "reference", " + c / (1 + x * x)", ""),
        ("gauss-20", "loose tolerance", "gauss-legendre", "leggauss(200)", "leggauss(20)"),
        (
            "gauss-8-one-panel",
            "loose tolerance",
            "gauss-legendre",
            ("leggauss(200)", "np.linspace(lo, hi, 9)"),
            ("leggauss(8)", "np.linspace(lo, hi, 2)"),
        ),
        (
            "quad-default",
            "loose tolerance",
            "reference",
            "epsabs=1e-14, epsrel=1e-13, limit=2000",
            "epsabs=1e-6, epsrel=1e-6",
        ),
    ],
    "num-fit/exp-decay": [
        (
            "no-offset",
            "forgotten term",
            "reference",
            "p[0] * np.exp(-p[1] * t) + p[2] - y",
            "p[0] * np.exp(-p[1] * t) + 0 * p[2] - y",
        ),
        (
            "loose-lm",
            "loose tolerance",
            "reference",
            "xtol=1e-15, ftol=1e-15, gtol=1e-15",
            "xtol=1e-4, ftol=1e-4, gtol=1e-4",
        ),
        ("curve-fit-loose", "loose tolerance", "curve-fit", "xtol=1e-14,", "xtol=1e-3,"),
    ],
    "num-simulate/heat-periodic": [
        ("rk4-step-short", "off-by-one", "rk4-method-of-lines", "range(steps)", "range(steps - 1)"),
        ("rk4-unstable-step", "loose tolerance", "rk4-method-of-lines", "/ 0.05", "/ 0.8"),
        ("explicit-euler", "first-order method", "explicit-euler", "", ""),
        (
            "wrong-dx",
            "wrong formula",
            "reference",
            'params["length"] / n',
            'params["length"] / (n - 1)',
        ),
    ],
    "num-simulate/n-body": [
        ("inverse-distance", "wrong formula", "reference", "axis=2) ** 1.5", "axis=2)"),
        ("repulsive", "wrong sign", "reference", "a = np.sum(m[None", "a = -np.sum(m[None"),
        ("rk45-loose", "loose tolerance", "rk45-loops", "rtol=1e-10,", "rtol=1e-6,"),
        (
            "star-fixed",
            "forgotten term",
            "reference",
            "return np.concatenate([v.ravel(), a.ravel()])",
            "a[0] = 0\n        v = v.copy(); v[0] = 0\n"
            "        return np.concatenate([v.ravel(), a.ravel()])",
        ),
    ],
    "num-simulate/pendulum": [
        ("sign-of-gravity", "wrong sign", "reference", "-(g / length)", "(g / length)"),
        ("small-angle", "forgotten term", "reference", "np.sin(z[0])", "z[0]"),
        ("default-tolerances", "loose tolerance", "rk45", ", rtol=1e-10, atol=1e-12", ""),
        (
            "rk4-one-step-short",
            "off-by-one",
            "hand-rk4",
            "for _ in range(steps):",
            "for _ in range(steps - 1):",
        ),
    ],
}

# Programs that are not right answers but bases of mutants (first-order time stepping).
EXTRA_BASES = {
    "num-simulate/heat-periodic": {
        "explicit-euler": """import numpy as np
def solve(p):
    u = np.array(p["u0"], dtype=float); n = len(u); dx = p["length"] / n
    r = p["D"] / dx**2
    steps = int(np.ceil(p["T"] * r / 0.0005))
    dt = p["T"] / steps
    for _ in range(steps):
        u = u + dt * r * (np.roll(u, 1) - 2*u + np.roll(u, -1))
    return {"u": u.tolist()}
"""
    }
}

_ALONE = """import json
{reference}

PARAMS = json.loads({params!r})
print(json.dumps([solve(p) for p in PARAMS]))
"""


def _median_s(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _mutants(task: Task, unit: str) -> list[tuple[str, str, str]]:
    """(name, kind, program) of ``task``'s mutants; a replacement that does not apply is an
    error of this bench, not a skipped mutant."""
    bases = {
        "reference": task.hidden["reference"],
        **ALTERNATIVES.get(unit, {}),
        **EXTRA_BASES.get(unit, {}),
    }
    out = [("single-precision", "single precision", bases["reference"] + _SINGLE)]
    for name, kind, base, old, new in MUTANTS.get(unit, []):
        source = bases[base]
        olds, news = (old, new) if isinstance(old, tuple) else ((old,), (new,))
        for o, n in zip(olds, news, strict=True):
            if o and o not in source:
                raise SystemExit(f"mutant {unit}:{name}: {o!r} is not in {base}")
            source = source.replace(o, n) if o else source
        out.append((name, kind, source))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="difficulty 0.5 only, no corpus")
    ap.add_argument(
        "--render", action="store_true", help="only rewrite the fragment from bench/out's JSON"
    )
    args = ap.parse_args()
    if args.render:
        from _common import OUT

        RESULTS.write_text(render(json.loads((OUT / "domain_numeric.json").read_text())))
        print(RESULTS.read_text())
        return
    difficulties = [0.5] if args.quick else [0.0, 0.5, 1.0]
    rows = []
    mutants = []
    alternatives = []
    with numeric_sandbox(python_workers=2) as box:
        verifier = NumericVerifier(box)
        for problem in PROBLEMS:
            for d in difficulties:
                for seed in range(args.seeds):
                    task = make_task(problem, difficulty=d, seed=100 + seed, sandbox=box)
                    gold = verifier.verify(task, task.hidden["reference"])
                    verify_s = _median_s(
                        lambda t=task: verifier.verify(t, t.hidden["reference"]), args.repeats
                    )
                    alone = _ALONE.format(
                        reference=task.hidden["reference"],
                        params=json.dumps(task.hidden["params"]),
                    )
                    alone_s = _median_s(
                        lambda a=alone: box.run_python(
                            a, limits=Limits(timeout_s=120, memory_mb=768)
                        ),
                        args.repeats,
                    )
                    empty = verifier.verify(task, "")
                    rows.append(
                        {
                            "unit": problem.unit,
                            "difficulty": d,
                            "seed": 100 + seed,
                            "gold": gold.passed,
                            "gold_detail": [t.detail for t in gold.tests if t.status != "passed"],
                            "empty_reward": empty.reward,
                            "verify_s": verify_s,
                            "alone_s": alone_s,
                        }
                    )
                    if seed == 0:
                        for name, program in ALTERNATIVES.get(problem.unit, {}).items():
                            v = verifier.verify(task, program)
                            alternatives.append(
                                {
                                    "unit": problem.unit,
                                    "difficulty": d,
                                    "method": name,
                                    "reward": v.reward,
                                    "why": [t.detail for t in v.tests if t.status != "passed"][:1],
                                }
                            )
                        for name, kind, program in _mutants(task, problem.unit):
                            v = verifier.verify(task, program)
                            mutants.append(
                                {
                                    "unit": problem.unit,
                                    "difficulty": d,
                                    "mutant": name,
                                    "kind": kind,
                                    "reward": v.reward,
                                    "accepted": v.passed,
                                }
                            )
                    print(
                        f"{problem.unit} d={d} seed={seed}: gold={gold.passed} "
                        f"verify={verify_s * 1000:.0f}ms alone={alone_s * 1000:.0f}ms",
                        file=sys.stderr,
                    )
    corpus = [] if args.quick else run_corpus()
    data = {
        "machine": machine(),
        "command": "PYTHONPATH=src python bench/domain_numeric.py " + " ".join(sys.argv[1:]),
        "rows": rows,
        "alternatives": alternatives,
        "mutants": mutants,
        "corpus": [
            {
                "name": o.name,
                "klass": o.klass,
                "reward": o.reward,
                "baseline": o.baseline,
                "held": o.held,
            }
            for o in corpus
        ],
    }
    save("domain_numeric", data)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(render(data))
    print(RESULTS.read_text())


def render(data: dict) -> str:
    rows, muts, alts, corpus = data["rows"], data["mutants"], data["alternatives"], data["corpus"]
    m = data["machine"]
    out = [
        "## numeric domain (bench/domain_numeric.py)",
        "",
        f"2026-12-02, {m['cpu']}, {m['cores']} cores (shared with other work), Python "
        f"{m['python']}. Command: `{data['command']}`.",
        "",
        "| structure | tasks | difficulty | gold passed | empty reward | verify (median) | "
        "reference alone (median) | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    units = list(dict.fromkeys(r["unit"] for r in rows))
    for unit in units:
        rs = [r for r in rows if r["unit"] == unit]
        v = statistics.median(r["verify_s"] for r in rs)
        a = statistics.median(r["alone_s"] for r in rs)
        ds = sorted({r["difficulty"] for r in rs})
        out.append(
            f"| {unit} | {len(rs)} | {ds[0]:g}..{ds[-1]:g} "
            f"| {sum(r['gold'] for r in rs)}/{len(rs)} "
            f"| {max(r['empty_reward'] for r in rs):g} | {v * 1000:.0f} ms | {a * 1000:.0f} ms "
            f"| {v / a:.2f} |"
        )
    gold = sum(r["gold"] for r in rows)
    out += ["", f"Gold: {gold}/{len(rows)} ({100 * gold / len(rows):.0f}%).", ""]
    ok = [a for a in alts if a["reward"] == 1.0]
    out.append(
        f"Right answers by other methods passing: {len(ok)}/{len(alts)}"
        + (
            "; not passing: "
            + ", ".join(
                f"{a['unit']}:{a['method']} at d={a['difficulty']:g} (reward {a['reward']:.2f}: "
                f"{(a['why'] or [''])[0][:80]})"
                for a in alts
                if a["reward"] < 1.0
            )
            if len(ok) < len(alts)
            else "."
        )
    )
    rejected = [x for x in muts if not x["accepted"]]
    out += [
        "",
        f"Mutants rejected: {len(rejected)}/{len(muts)} "
        f"({100 * len(rejected) / max(1, len(muts)):.0f}%).",
        "",
        "| kind | mutants | rejected |",
        "|---|---|---|",
    ]
    for kind in sorted({x["kind"] for x in muts}):
        ks = [x for x in muts if x["kind"] == kind]
        out.append(f"| {kind} | {len(ks)} | {sum(not x['accepted'] for x in ks)} |")
    accepted = [x for x in muts if x["accepted"]]
    out += [
        "",
        "Verification runs the candidate once on the 4 hidden sets in the numeric sandbox and "
        'judges on the host; "reference alone" runs the same reference on the same sets as a '
        "bare program in the same sandbox (both medians of the repeats, measured in the same "
        "run). The ratio is the verifier's whole overhead (harness, plain-data channel, "
        "comparison, invariants).",
        "",
        "Mutants still accepted (wrong programs the verifier lets through). Every one of them "
        "returned numbers within the task's stated tolerance of the reference on every hidden "
        "set, with every invariant holding: single-precision outputs (error ~6e-8 against "
        "tolerances of 1e-5..1e-6; flagged `single-precision-output`, not failed), methods "
        "asked for a looser tolerance that deliver a tighter one (QUADPACK at 1e-6, "
        "Levenberg-Marquardt at 1e-4, a coarse RK4 step), unstable methods on "
        "well-conditioned instances (normal equations at cond 10, `inv(A) @ b` up to cond "
        "10^5.5), a fixed-point iteration cut to 20 steps where it had converged, explicit "
        "Euler where its step was small enough (at difficulty 1 it needs about 6 s of the 10 s "
        "per call: under load it times out, so this one verdict depends on the machine's "
        "load):",
    ]
    out += [
        f"- {x['unit']} `{x['mutant']}` ({x['kind']}) at difficulty {x['difficulty']:g}"
        for x in accepted
    ] or ["- none"]
    if corpus:
        held = sum(o["held"] for o in corpus)
        out += [
            "",
            f"Exploits held: {held}/{len(corpus)} (reward no more than the empty answer's, never "
            "passed).",
            "",
            "| exploit class | exploits | held | max reward |",
            "|---|---|---|---|",
        ]
        for klass in sorted({o["klass"] for o in corpus}):
            ks = [o for o in corpus if o["klass"] == klass]
            out.append(
                f"| {klass} | {len(ks)} | {sum(o['held'] for o in ks)} | "
                f"{max(o['reward'] for o in ks):g} |"
            )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
