"""A difficulty estimate from structural features, until measured solve rates refine it.

Features (stored on the task, so a later fit can reweigh them): lines changed, number of
FAIL_TO_PASS tests, complexity of the changed functions, number of combined bugs, and how far
the failing tests are from the bug (0 when a failing test names the function, 1 otherwise: the
bug must be traced through other code). The estimate is a logistic of a weighted sum; the
weights encode the priors of SWE-smith's ratings (combined and rewritten functions are hardest,
single operator changes easiest) and are meant to be replaced by a fit on solve rates.

>>> features = {"lines_changed": 2, "fail_to_pass": 3, "complexity": 6, "bugs": 1,
...             "distance": 0, "kind_implement": 0}
>>> 0 < estimate(features) < 0.5
True
"""

from __future__ import annotations

import difflib
import math

__all__ = ["estimate", "features"]

_WEIGHTS = {
    "lines_changed": 0.08,
    "fail_to_pass": -0.04,  # many failing tests: more clues
    "complexity": 0.06,
    "bugs": 0.7,
    "distance": 0.6,
    "kind_implement": 1.2,
}
_BIAS = -2.2


def features(
    original: str,
    broken: str,
    *,
    function_names: list[str],
    f2p: list[str],
    test_sources: dict[str, str],
    complexity: int,
    bugs: int,
    kind: str,
) -> dict[str, float]:
    changed = sum(
        1
        for ln in difflib.unified_diff(original.splitlines(), broken.splitlines(), n=0)
        if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    )
    short = [n.rsplit(".", 1)[-1] for n in function_names]
    named = any(
        any(name in test_sources.get(t.split("::", 1)[0], "") for name in short) for t in f2p
    )
    return {
        "lines_changed": float(changed),
        "fail_to_pass": float(len(f2p)),
        "complexity": float(complexity),
        "bugs": float(bugs),
        "distance": 0.0 if named else 1.0,
        "kind_implement": 1.0 if kind == "implement" else 0.0,
    }


def estimate(feats: dict[str, float]) -> float:
    z = _BIAS + sum(_WEIGHTS[k] * min(v, 30.0) for k, v in feats.items() if k in _WEIGHTS)
    return round(1.0 / (1.0 + math.exp(-z)), 4)
