"""The numeric problems that evolve in time: ODE systems and simulations (``num-ode``,
``num-simulate``). Each reference is DOP853 at rtol 1e-12, a matrix exponential or an FFT
closed form; see :mod:`.problem` for what a structure holds.
"""

from __future__ import annotations

import numpy as np

from referee.domains.numeric.problem import Params, Problem, fixed, rounded

__all__ = ["HEAT_PERIODIC", "LOTKA_VOLTERRA", "NBODY", "PENDULUM", "STIFF_LINEAR"]

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
        "alpha": rounded(rng.uniform(0.6, 1.4)),
        "beta": rounded(rng.uniform(0.3, 0.8)),
        "gamma": rounded(rng.uniform(0.6, 1.4)),
        "delta": rounded(rng.uniform(0.3, 0.8)),
        "x0": rounded(rng.uniform(0.5, 2.0)),
        "y0": rounded(rng.uniform(0.5, 2.0)),
        "times": rounded(np.linspace(t_end / n, t_end, n)),
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
        "A": rounded(a, 10),
        "y0": rounded(rng.uniform(-1, 1, n)),
        "times": [0.1, 0.5, 1.0, 2.0],
    }


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
        "u0": rounded(u0),
        "D": rounded(rng.uniform(0.1, 1.0)),
        "length": 1.0,
        "T": rounded(rng.uniform(0.002, 0.02)),
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
        "length": rounded(rng.uniform(0.5, 2.0)),
        "theta0": rounded(rng.uniform(0.2, 0.5 + 2.1 * d)),
        "omega0": rounded(rng.uniform(-0.5, 0.5)),
        "times": rounded(np.linspace(t_end / n, t_end, n)),
    }


_ODE_TEXT = (
    "Integrate the Lotka-Volterra system x' = alpha*x - beta*x*y, y' = delta*x*y - gamma*y "
    "from x(0) = x0, y(0) = y0, and return the populations at the given times: "
    '{"x": [x(t) for t in times], "y": [y(t) for t in times]}.'
)

#: Every problem structure, by family.
LOTKA_VOLTERRA = Problem(
    "num-ode",
    "lotka-volterra",
    _ODE_TEXT,
    _LV_REF,
    _lv_params,
    fixed(1e-5, 1e-7),
    ({"name": "conserved", "quantity": "lotka-volterra", "tol": 1e-5},),
    features=lambda d: {"t_end": 5 + 25 * d},
)

STIFF_LINEAR = Problem(
    "num-ode",
    "stiff-linear",
    "Integrate the linear system y' = A y (A symmetric negative definite, stiff: its "
    'eigenvalues span several decades) from y(0) = y0; return {"y": [y(t) for t in '
    "times]}, each y(t) a list of len(y0) numbers.",
    _STIFF_REF,
    _stiff_params,
    fixed(1e-6, 1e-9),
    ({"name": "norm-decreasing", "tol": 1e-8},),
    features=lambda d: {"stiffness_log10": 1 + 4 * d},
)

HEAT_PERIODIC = Problem(
    "num-simulate",
    "heat-periodic",
    "A periodic rod of the given length is cut into n = len(u0) equal cells holding "
    "temperatures u0. Evolve the semi-discrete heat equation du_i/dt = D*(u_{i+1} - 2*u_i + "
    "u_{i-1})/dx^2 (dx = length/n, indices modulo n) to time T and return "
    '{"u": [...]} (total heat is conserved).',
    _HEAT_REF,
    _heat_params,
    fixed(1e-5, 1e-7),
    (
        {"name": "conserved", "quantity": "total-heat", "tol": 1e-9},
        {"name": "max-principle", "tol": 1e-9},
    ),
    features=lambda d: {"cells": 16 + int(48 * d)},
)

PENDULUM = Problem(
    "num-simulate",
    "pendulum",
    "Simulate the frictionless pendulum theta'' = -(g/length)*sin(theta) from theta(0) = "
    'theta0, theta\'(0) = omega0; return {"theta": [...], "omega": [...]} at the given '
    "times (energy is conserved).",
    _PENDULUM_REF,
    _pendulum_params,
    fixed(1e-5, 1e-7),
    ({"name": "conserved", "quantity": "energy", "tol": 1e-6},),
    features=lambda d: {"amplitude": 0.35 + 1.05 * d, "t_end": 5 + 15 * d},
)

_NBODY_REF = """import numpy as np
from scipy.integrate import solve_ivp


def solve(params):
    m = np.array(params["masses"])
    n = len(m)

    def f(t, z):
        r, v = z[: 2 * n].reshape(n, 2), z[2 * n :].reshape(n, 2)
        d = r[None, :, :] - r[:, None, :]
        dist3 = np.sum(d * d, axis=2) ** 1.5
        np.fill_diagonal(dist3, np.inf)
        a = np.sum(m[None, :, None] * d / dist3[:, :, None], axis=1)
        return np.concatenate([v.ravel(), a.ravel()])

    z0 = np.concatenate([np.ravel(params["positions"]), np.ravel(params["velocities"])])
    sol = solve_ivp(f, (0.0, params["times"][-1]), z0, method="DOP853",
                    t_eval=params["times"], rtol=1e-12, atol=1e-12)
    return {"r": sol.y[: 2 * n].T.tolist(), "v": sol.y[2 * n :].T.tolist()}
"""


def _nbody_params(rng: np.random.Generator, d: float, visible: bool) -> Params:
    # A star of mass 1 and light planets on near-circular orbits at well-separated radii: the
    # planets perturb each other (and the star) weakly, so the system is not chaotic over the
    # few orbits asked for, and a right integrator reaches the tolerance.
    planets = 1 if visible else 1 + round(3 * d)
    radii = np.array([1.0, 1.7, 2.8, 4.5])[:planets] * rng.uniform(0.95, 1.05, planets)
    masses = [1.0, *rng.uniform(1e-4, 1e-3 + 4e-3 * d, planets)]
    angles = rng.uniform(0, 2 * np.pi, planets)
    ecc = rng.uniform(0, 0.05 + 0.25 * d, planets)
    speed = np.sqrt(1.0 / radii) * (1 + ecc)  # at perihelion: faster than circular
    pos = [[0.0, 0.0]] + [
        [r * np.cos(a), r * np.sin(a)] for r, a in zip(radii, angles, strict=True)
    ]
    vel = [[0.0, 0.0]] + [
        [-s * np.sin(a), s * np.cos(a)] for s, a in zip(speed, angles, strict=True)
    ]
    t_end = 4.0 + 16.0 * d
    n = 3 if visible else 4 + int(6 * d)
    return {
        "masses": rounded(masses),
        "positions": rounded(pos),
        "velocities": rounded(vel),
        "times": rounded(np.linspace(t_end / n, t_end, n)),
    }


NBODY = Problem(
    "num-simulate",
    "n-body",
    "Simulate the planar gravitational N-body problem with G = 1: body i has mass masses[i], "
    "position positions[i] = [x, y] and velocity velocities[i] at t = 0, and accelerates by "
    "sum_j m_j (r_j - r_i)/|r_j - r_i|^3. Return, at each of the given times, the positions "
    'and velocities flattened as [x0, y0, x1, y1, ...]: {"r": [one list per time], "v": '
    "[one list per time]} (energy and angular momentum are conserved).",
    _NBODY_REF,
    _nbody_params,
    fixed(1e-5, 1e-7),
    (
        {"name": "conserved", "quantity": "nbody-energy", "tol": 1e-6},
        {"name": "conserved", "quantity": "nbody-angular-momentum", "tol": 1e-8},
    ),
    features=lambda d: {"planets": 1 + round(3 * d), "t_end": 4 + 16 * d},
)
