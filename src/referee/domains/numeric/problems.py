"""The problem structures of the numeric families: statement, reference, parameters, tolerance.

A :class:`Problem` is one structure of one family (``num-ode/lotka-volterra``): the text that
states it, the reference program (trusted scipy with tight tolerances, or a closed form), how
seeded parameter sets are drawn for a difficulty in [0, 1], the tolerance the answer is held
to and the invariants checked on it (:mod:`.invariants`).

Tolerance policy: each tolerance sits two or more orders of magnitude above the reference
method's own error and below what a sloppy method gets, so a right answer by another method
(RK45 instead of Radau, a hand-written RK4 with enough steps, LU or QR, Brent or Newton) passes
and scipy's default tolerances (``solve_ivp``'s rtol=1e-3) or single precision do not. Where
conditioning forces a loose tolerance on the answer (ill-conditioned solves), an invariant
(the residual) is sharp instead. ``docs/domains/numeric.md`` has the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["PROBLEMS", "Problem", "problems_of"]

Params = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    family: str
    structure: str
    statement: str
    reference: str
    #: ``(rng, difficulty, visible) -> params``; the visible set may be smaller (prompt size).
    make_params: Callable[[np.random.Generator, float, bool], Params]
    #: ``difficulty -> (rtol, atol)``.
    tolerance: Callable[[float], tuple[float, float]]
    invariants: tuple[dict[str, Any], ...] = ()
    time_limit_s: float = 10.0
    features: Callable[[float], dict[str, float]] = field(default=lambda d: {})

    @property
    def unit(self) -> str:
        return f"{self.family}/{self.structure}"


def _r(x: Any, digits: int = 6) -> Any:
    """Plain floats rounded to ``digits`` significant digits (short prompts, exact inputs)."""
    a = np.asarray(x, dtype=float)
    return np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(a).tolist()


# ---- num-ode -----------------------------------------------------------------------------------
_LV_REF = """import numpy as np
from scipy.integrate import solve_ivp


def solve(params):
    a, b, c, d = (params[k] for k in ("alpha", "beta", "gamma", "delta"))
    times = params["times"]

    def f(t, z):
        x, y = z
        return [a * x - b * x * y, d * x * y - c * y]

    sol = solve_ivp(f, (0.0, times[-1]), [params["x0"], params["y0"]], method="DOP853",
                    t_eval=times, rtol=1e-12, atol=1e-12)
    return {"x": sol.y[0].tolist(), "y": sol.y[1].tolist()}
"""


def _lv_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    t_end = 5.0 + 25.0 * d
    n = 4 if visible else 6 + int(10 * d)
    return {
        "alpha": _r(rng.uniform(0.6, 1.4)),
        "beta": _r(rng.uniform(0.3, 0.8)),
        "gamma": _r(rng.uniform(0.6, 1.4)),
        "delta": _r(rng.uniform(0.3, 0.8)),
        "x0": _r(rng.uniform(0.5, 2.0)),
        "y0": _r(rng.uniform(0.5, 2.0)),
        "times": _r(np.linspace(t_end / n, t_end, n)),
    }


_STIFF_REF = """import numpy as np
from scipy.linalg import expm


def solve(params):
    a = np.array(params["A"])
    y0 = np.array(params["y0"])
    return {"y": [(expm(a * t) @ y0).tolist() for t in params["times"]]}
"""


def _stiff_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    n = 3 if visible else 3 + int(5 * d)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    lam = np.logspace(0, 1 + 4 * d, n)
    a = -(q * lam) @ q.T
    a = (a + a.T) / 2
    return {
        "A": _r(a, 10),
        "y0": _r(rng.uniform(-1, 1, n)),
        "times": [0.1, 0.5, 1.0, 2.0],
    }


# ---- num-linear --------------------------------------------------------------------------------
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
    a = np.asarray(_r((u * s) @ v.T, 12))
    # b from a solution of size one, so that x (the answer) is of order one too.
    b = a @ rng.uniform(-1, 1, n)
    return {"A": a.tolist(), "b": _r(b, 12)}


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
    return {"e": _r(min(e, 0.995)), "M": _r(rng.uniform(-np.pi, np.pi, n))}


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
    return {"B": _r(bm, 10), "c": _r(c), "b": _r(rng.uniform(-2, 2, n))}


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
    return {"X": _r(x, 5), "y": y.tolist(), "mu": _r(10 ** (-0.5 - 2.5 * d))}


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
        "a": _r(rng.uniform(0.2, 1.5)),
        "omega": _r(1 + 60 * d * rng.uniform(0.5, 1.0)),
        "c": _r(rng.uniform(-1, 1)),
        "breaks": _r(breaks),
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
    return {"t": _r(t), "y": _r(y)}


# ---- num-simulate ------------------------------------------------------------------------------
_HEAT_REF = """import numpy as np


def solve(params):
    u0 = np.array(params["u0"])
    n = len(u0)
    dx = params["length"] / n
    k = np.arange(n)
    lam = -4 * params["D"] / dx**2 * np.sin(np.pi * k / n) ** 2
    u = np.fft.ifft(np.fft.fft(u0) * np.exp(lam * params["T"])).real
    return {"u": u.tolist()}
"""


def _heat_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    n = 8 if visible else 16 + int(48 * d)
    x = np.arange(n) / n
    u0 = 1 + 0.5 * np.sin(2 * np.pi * x) + rng.uniform(-0.3, 0.3, n) * (0.2 + d)
    return {
        "u0": _r(u0),
        "D": _r(rng.uniform(0.1, 1.0)),
        "length": 1.0,
        "T": _r(rng.uniform(0.002, 0.02)),
    }


_PENDULUM_REF = """import numpy as np
from scipy.integrate import solve_ivp


def solve(params):
    g, length, times = params["g"], params["length"], params["times"]
    f = lambda t, z: [z[1], -(g / length) * np.sin(z[0])]
    sol = solve_ivp(f, (0.0, times[-1]), [params["theta0"], params["omega0"]],
                    method="DOP853", t_eval=times, rtol=1e-12, atol=1e-12)
    return {"theta": sol.y[0].tolist(), "omega": sol.y[1].tolist()}
"""


def _pendulum_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    t_end = 5.0 + 15.0 * d
    n = 4 if visible else 6 + int(10 * d)
    return {
        "g": 9.81,
        "length": _r(rng.uniform(0.5, 2.0)),
        "theta0": _r(rng.uniform(0.2, 0.5 + 2.1 * d)),
        "omega0": _r(rng.uniform(-0.5, 0.5)),
        "times": _r(np.linspace(t_end / n, t_end, n)),
    }


def _fixed(rtol: float, atol: float) -> Callable[[float], tuple[float, float]]:
    return lambda d: (rtol, atol)


_ODE_TEXT = (
    "Integrate the Lotka-Volterra system x' = alpha*x - beta*x*y, y' = delta*x*y - gamma*y "
    "from x(0) = x0, y(0) = y0, and return the populations at the given times: "
    '{"x": [x(t) for t in times], "y": [y(t) for t in times]}.'
)

#: Every problem structure, by family.
PROBLEMS: tuple[Problem, ...] = (
    Problem(
        "num-ode",
        "lotka-volterra",
        _ODE_TEXT,
        _LV_REF,
        _lv_params,
        _fixed(1e-5, 1e-7),
        ({"name": "conserved", "quantity": "lotka-volterra", "tol": 1e-5},),
        features=lambda d: {"t_end": 5 + 25 * d},
    ),
    Problem(
        "num-ode",
        "stiff-linear",
        "Integrate the linear system y' = A y (A symmetric negative definite, stiff: its "
        'eigenvalues span several decades) from y(0) = y0; return {"y": [y(t) for t in '
        "times]}, each y(t) a list of len(y0) numbers.",
        _STIFF_REF,
        _stiff_params,
        _fixed(1e-6, 1e-9),
        ({"name": "norm-decreasing", "tol": 1e-8},),
        features=lambda d: {"stiffness_log10": 1 + 4 * d},
    ),
    Problem(
        "num-linear",
        "dense",
        'Solve the dense linear system A x = b (A may be ill-conditioned); return {"x": [...]}.',
        _LINEAR_REF,
        _linear_params,
        _linear_tol,
        ({"name": "residual", "tol": 1e-11},),
        features=lambda d: {"cond_log10": 1 + 9 * d, "n": 4 + int(36 * d)},
    ),
    Problem(
        "num-root",
        "kepler",
        "Solve Kepler's equation E - e*sin(E) = M for the eccentric anomaly E, for each mean "
        'anomaly M of the list (0 <= e < 1); return {"E": [...]} in the same order.',
        _KEPLER_REF,
        _kepler_params,
        _fixed(1e-10, 1e-10),
        ({"name": "kepler", "tol": 1e-10},),
        features=lambda d: {"eccentricity": 0.175 + 0.69 * d},
    ),
    Problem(
        "num-root",
        "contraction-system",
        "Find the root x (a vector) of F(x) = x + c*tanh(B x) - b, with B a matrix, b a "
        'vector and c a number (c*||B||_2 < 1, so the root is unique); return {"x": [...]}.',
        _FIXED_REF,
        _fixed_params,
        _fixed(1e-9, 1e-10),
        ({"name": "fixed-point", "tol": 1e-10},),
        features=lambda d: {"contraction": 0.5 + 0.45 * d},
    ),
    Problem(
        "num-optimize",
        "logistic",
        "Minimise the L2-regularised logistic loss f(w) = sum_i log(1 + exp(-y_i * X_i.w)) + "
        "mu/2 * ||w||^2 over w (X is a list of rows, y_i in {-1, 1}); return "
        '{"w": [...], "f": f(w)} with the gradient of f at w below 1e-7 in max norm.',
        _LOGISTIC_REF,
        _logistic_params,
        _fixed(1e-5, 1e-6),
        ({"name": "stationary", "tol": 1e-7},),
        features=lambda d: {"mu_log10": -0.5 - 2.5 * d},
    ),
    Problem(
        "num-quadrature",
        "oscillatory",
        "Integrate f(x) = exp(-a*x^2) * cos(omega*x) + c/(1 + x^2) over each interval "
        "[breaks[i], breaks[i+1]] and over [breaks[0], breaks[-1]]; return "
        '{"parts": [one integral per interval], "total": ...}, each to 1e-10 relative.',
        _QUAD_REF,
        _quad_params,
        _fixed(1e-9, 1e-10),
        ({"name": "additive", "tol": 1e-10},),
        features=lambda d: {"omega": 1 + 45 * d},
    ),
    Problem(
        "num-fit",
        "exp-decay",
        "Fit y = A*exp(-k*t) + c to the noisy samples (t, y) by least squares (minimise the sum "
        'of squared residuals over A, k, c); return {"A": ..., "k": ..., "c": ...}.',
        _FIT_REF,
        _fit_params,
        _fixed(1e-5, 1e-7),
        ({"name": "fit-optimal", "tol": 1e-9},),
        features=lambda d: {"noise": 0.01 + 0.15 * d},
    ),
    Problem(
        "num-simulate",
        "heat-periodic",
        "A periodic rod of the given length is cut into n = len(u0) equal cells holding "
        "temperatures u0. Evolve the semi-discrete heat equation du_i/dt = D*(u_{i+1} - 2*u_i + "
        "u_{i-1})/dx^2 (dx = length/n, indices modulo n) to time T and return "
        '{"u": [...]} (total heat is conserved).',
        _HEAT_REF,
        _heat_params,
        _fixed(1e-5, 1e-7),
        (
            {"name": "conserved", "quantity": "total-heat", "tol": 1e-9},
            {"name": "max-principle", "tol": 1e-9},
        ),
        features=lambda d: {"cells": 16 + int(48 * d)},
    ),
    Problem(
        "num-simulate",
        "pendulum",
        "Simulate the frictionless pendulum theta'' = -(g/length)*sin(theta) from theta(0) = "
        'theta0, theta\'(0) = omega0; return {"theta": [...], "omega": [...]} at the given '
        "times (energy is conserved).",
        _PENDULUM_REF,
        _pendulum_params,
        _fixed(1e-5, 1e-7),
        ({"name": "conserved", "quantity": "energy", "tol": 1e-6},),
        features=lambda d: {"amplitude": 0.35 + 1.05 * d, "t_end": 5 + 15 * d},
    ),
)


def problems_of(family: str) -> list[Problem]:
    """The structures of ``family`` (``num-ode``...), in a fixed order."""
    return [p for p in PROBLEMS if p.family == family]
