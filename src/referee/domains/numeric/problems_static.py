"""The numeric problems without time: linear and nonlinear systems, optima, integrals, fits
(``num-linear``, ``num-root``, ``num-optimize``, ``num-quadrature``, ``num-fit``); see
:mod:`.problem` for what a structure holds.
"""

from __future__ import annotations

import numpy as np

from referee.domains.numeric.problem import Params, Problem, fixed, rounded

__all__ = ["CONTRACTION_SYSTEM", "DENSE", "EXP_DECAY", "KEPLER", "LOGISTIC", "OSCILLATORY"]

_LINEAR_REF = """import numpy as np


def solve(params):
    x = np.linalg.solve(np.array(params["A"]), np.array(params["b"]))
    return {"x": x.tolist()}
"""


def _cond(d: float) -> float:
    return float(10 ** (1 + 9 * d))


def _linear_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    n = 3 if visible else 4 + int(36 * d)
    u, _ = np.linalg.qr(rng.normal(size=(n, n)))
    v, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = np.logspace(0, -np.log10(_cond(d)), n)
    a = np.asarray(rounded((u * s) @ v.T, 12))
    # b from a solution of size one, so that x (the answer) is of order one too.
    b = a @ rng.uniform(-1, 1, n)
    return {"A": a.tolist(), "b": rounded(b, 12)}


def _linear_tol(d: float) -> tuple[float, float]:
    # The forward error of a backward-stable solve is about cond * eps; allow 200 times that.
    tol = max(1e-9, 200 * _cond(d) * 2.2e-16)
    return tol, tol


# ---- num-root ----------------------------------------------------------------------------------
_KEPLER_REF = """import math
from scipy.optimize import brentq


def solve(params):
    e = params["e"]
    out = []
    for m in params["M"]:
        g = lambda x: x - e * math.sin(x) - m
        x = brentq(g, m - e - 1e-12, m + e + 1e-12, xtol=1e-15, rtol=8.9e-16, maxiter=500)
        for _ in range(3):  # polish with Newton
            x -= g(x) / (1 - e * math.cos(x))
        out.append(x)
    return {"E": out}
"""


def _kepler_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    n = 3 if visible else 5 + int(10 * d)
    e = rng.uniform(0.05, 0.3) + 0.69 * d
    return {"e": rounded(min(e, 0.995)), "M": rounded(rng.uniform(-np.pi, np.pi, n))}


_FIXED_REF = """import numpy as np
from scipy.optimize import fsolve


def solve(params):
    bm, c, b = np.array(params["B"]), params["c"], np.array(params["b"])
    f = lambda x: x + c * np.tanh(bm @ x) - b
    jac = lambda x: np.eye(len(b)) + c * (1 - np.tanh(bm @ x) ** 2)[:, None] * bm
    x = fsolve(f, b.copy(), fprime=jac, xtol=1e-14)
    for _ in range(3):  # polish with Newton
        x = x - np.linalg.solve(jac(x), f(x))
    return {"x": x.tolist()}
"""


def _fixed_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    n = 3 if visible else 3 + int(9 * d)
    bm = rng.normal(size=(n, n))
    bm /= np.linalg.norm(bm, 2)
    # c * ||B|| < 1 makes x -> b - c tanh(Bx) a contraction: one root. Near 1, fixed-point
    # iteration crawls and Newton is needed.
    c = 0.5 + 0.45 * d
    return {"B": rounded(bm, 10), "c": rounded(c), "b": rounded(rng.uniform(-2, 2, n))}


# ---- num-optimize ------------------------------------------------------------------------------
_LOGISTIC_REF = """import numpy as np


def solve(params):
    x, y, mu = np.array(params["X"]), np.array(params["y"]), params["mu"]

    def fgh(w):
        z = y * (x @ w)
        f = np.sum(np.logaddexp(0.0, -z)) + 0.5 * mu * w @ w
        s = 1.0 / (1.0 + np.exp(z))
        g = -(x.T @ (y * s)) + mu * w
        h = (x.T * (s * (1 - s))) @ x + mu * np.eye(len(w))
        return f, g, h

    w = np.zeros(x.shape[1])
    for _ in range(200):  # Newton with backtracking: the loss is strictly convex
        f, g, h = fgh(w)
        if np.abs(g).max() < 1e-13:
            break
        step = np.linalg.solve(h, g)
        t = 1.0
        while fgh(w - t * step)[0] > f - 1e-4 * t * g @ step and t > 1e-12:
            t /= 2
        w = w - t * step
    return {"w": w.tolist(), "f": float(fgh(w)[0])}
"""


def _logistic_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    m = 12 if visible else 20 + int(80 * d)
    n = 2 if visible else 2 + int(8 * d)
    x = rng.normal(size=(m, n))
    w = rng.normal(size=n) * 2
    y = np.where(x @ w + rng.normal(scale=0.5, size=m) > 0, 1.0, -1.0)
    return {"X": rounded(x, 5), "y": y.tolist(), "mu": rounded(10 ** (-0.5 - 2.5 * d))}


# ---- num-quadrature ----------------------------------------------------------------------------
_QUAD_REF = """import math
from scipy.integrate import quad


def solve(params):
    a, w, c = params["a"], params["omega"], params["c"]
    f = lambda x: math.exp(-a * x * x) * math.cos(w * x) + c / (1 + x * x)
    xs = params["breaks"]
    q = lambda lo, hi: quad(f, lo, hi, epsabs=1e-14, epsrel=1e-13, limit=2000)[0]
    parts = [q(lo, hi) for lo, hi in zip(xs, xs[1:])]
    return {"parts": parts, "total": q(xs[0], xs[-1])}
"""


def _quad_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    k = 3 if visible else 3 + int(4 * d)
    breaks = np.sort(rng.uniform(-3, 3, k + 1))
    return {
        "a": rounded(rng.uniform(0.2, 1.5)),
        "omega": rounded(1 + 60 * d * rng.uniform(0.5, 1.0)),
        "c": rounded(rng.uniform(-1, 1)),
        "breaks": rounded(breaks),
    }


# ---- num-fit -----------------------------------------------------------------------------------
_FIT_REF = """import numpy as np
from scipy.optimize import least_squares


def solve(params):
    t, y = np.array(params["t"]), np.array(params["y"])
    res = lambda p: p[0] * np.exp(-p[1] * t) + p[2] - y
    best = None
    for k0 in (0.1, 0.5, 1.0, 2.0, 5.0):
        p0 = [y[0] - y[-1], k0, y[-1]]
        r = least_squares(res, p0, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15,
                          max_nfev=20000)
        if best is None or r.cost < best.cost:
            best = r
    a, k, c = best.x
    return {"A": float(a), "k": float(k), "c": float(c)}
"""


def _fit_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    m = 10 if visible else 30 + int(70 * d)
    a, k, c = rng.uniform(1, 5), rng.uniform(0.3, 2.0), rng.uniform(-1, 1)
    t = np.linspace(0, 4.0 / k, m)
    y = a * np.exp(-k * t) + c + rng.normal(scale=0.01 + 0.15 * d, size=m)
    return {"t": rounded(t), "y": rounded(y)}


DENSE = Problem(
    "num-linear",
    "dense",
    'Solve the dense linear system A x = b (A may be ill-conditioned); return {"x": [...]}.',
    _LINEAR_REF,
    _linear_params,
    _linear_tol,
    ({"name": "residual", "tol": 1e-11},),
    features=lambda d: {"cond_log10": 1 + 9 * d, "n": 4 + int(36 * d)},
)

KEPLER = Problem(
    "num-root",
    "kepler",
    "Solve Kepler's equation E - e*sin(E) = M for the eccentric anomaly E, for each mean "
    'anomaly M of the list (0 <= e < 1); return {"E": [...]} in the same order.',
    _KEPLER_REF,
    _kepler_params,
    fixed(1e-10, 1e-10),
    ({"name": "kepler", "tol": 1e-10},),
    features=lambda d: {"eccentricity": 0.175 + 0.69 * d},
)

CONTRACTION_SYSTEM = Problem(
    "num-root",
    "contraction-system",
    "Find the root x (a vector) of F(x) = x + c*tanh(B x) - b, with B a matrix, b a "
    'vector and c a number (c*||B||_2 < 1, so the root is unique); return {"x": [...]}.',
    _FIXED_REF,
    _fixed_params,
    fixed(1e-9, 1e-10),
    ({"name": "fixed-point", "tol": 1e-10},),
    features=lambda d: {"contraction": 0.5 + 0.45 * d},
)

LOGISTIC = Problem(
    "num-optimize",
    "logistic",
    "Minimise the L2-regularised logistic loss f(w) = sum_i log(1 + exp(-y_i * X_i.w)) + "
    "mu/2 * ||w||^2 over w (X is a list of rows, y_i in {-1, 1}); return "
    '{"w": [...], "f": f(w)} with the gradient of f at w below 1e-7 in max norm.',
    _LOGISTIC_REF,
    _logistic_params,
    fixed(1e-5, 1e-6),
    ({"name": "stationary", "tol": 1e-7},),
    features=lambda d: {"mu_log10": -0.5 - 2.5 * d},
)

OSCILLATORY = Problem(
    "num-quadrature",
    "oscillatory",
    "Integrate f(x) = exp(-a*x^2) * cos(omega*x) + c/(1 + x^2) over each interval "
    "[breaks[i], breaks[i+1]] and over [breaks[0], breaks[-1]]; return "
    '{"parts": [one integral per interval], "total": ...}, each to 1e-10 relative.',
    _QUAD_REF,
    _quad_params,
    fixed(1e-9, 1e-10),
    ({"name": "additive", "tol": 1e-10},),
    features=lambda d: {"omega": 1 + 45 * d},
)

EXP_DECAY = Problem(
    "num-fit",
    "exp-decay",
    "Fit y = A*exp(-k*t) + c to the noisy samples (t, y) by least squares (minimise the sum "
    'of squared residuals over A, k, c); return {"A": ..., "k": ..., "c": ...}.',
    _FIT_REF,
    _fit_params,
    fixed(1e-5, 1e-7),
    ({"name": "fit-optimal", "tol": 1e-9},),
    features=lambda d: {"noise": 0.01 + 0.15 * d},
)
