"""Invariants checked on the host from the candidate's returned numbers.

Closeness to the reference is one test; these are the others, the properties a right answer
has whatever method produced it: a small residual ``||Ax - b||``, ``f(root) = 0``, a vanishing
gradient at an optimum, the energy of a pendulum (or the conserved quantity of a
Lotka-Volterra system) constant along the returned trajectory, the total heat of a periodic
rod conserved and the maximum principle kept, an integral additive over its pieces, a fit no
worse than the reference's. They are sharper than the tolerance where conditioning forces a
loose one (an ill-conditioned solve in single precision has a close enough ``x`` and a
residual a million times too big), and they are computed here, with the host's numpy, from the
task's parameters and the candidate's plain numbers only.

Each invariant is ``check(params, got, expected, **options) -> why`` ("" when it holds); a
task lists the ones it uses in ``hidden["invariants"]`` as ``{"name": ..., **options}``.
Malformed numbers (wrong shapes, strings) make the invariant fail, never the verifier crash.

>>> check_invariants([{"name": "kepler", "tol": 1e-9}], {"e": 0.5, "M": [1.0]},
...                  {"E": [1.4987011335178482]}, None)
[]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["INVARIANTS", "check_invariants", "describe_invariant"]

Check = Callable[..., str]


def _vec(x: Any) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError("non-finite numbers")
    return a


def residual(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """Linear system: ``||Ax - b|| <= tol * (||A|| ||x|| + ||b||)`` (a backward-stable solve
    gives about n * 1e-16; single precision about 1e-7)."""
    a, b, x = _vec(params["A"]), _vec(params["b"]), _vec(got["x"])
    r = np.linalg.norm(a @ x - b)
    scale = np.linalg.norm(a, 2) * np.linalg.norm(x) + np.linalg.norm(b)
    return "" if r <= tol * scale else f"relative residual {r / scale:.2e} exceeds {tol:g}"


def kepler(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """Kepler's equation: ``|E - e sin E - M| <= tol`` for every mean anomaly."""
    e, m, ecc = float(params["e"]), _vec(params["M"]), _vec(got["E"])
    r = np.abs(ecc - e * np.sin(ecc) - m)
    return "" if r.max(initial=0.0) <= tol else f"|E - e sin E - M| = {r.max():.2e} > {tol:g}"


def fixed_point(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """``x + c tanh(Bx) - b = 0``: the residual's max norm is at most ``tol``."""
    b_mat, c, b, x = _vec(params["B"]), float(params["c"]), _vec(params["b"]), _vec(got["x"])
    r = np.abs(x + c * np.tanh(b_mat @ x) - b).max(initial=0.0)
    return "" if r <= tol else f"residual {r:.2e} exceeds {tol:g}"


def stationary(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """Regularised logistic loss: the gradient's max norm at ``w`` is at most ``tol``, and the
    reported ``f`` is the loss at ``w``."""
    x, y, mu, w = _vec(params["X"]), _vec(params["y"]), float(params["mu"]), _vec(got["w"])
    z = y * (x @ w)
    f = float(np.sum(np.logaddexp(0.0, -z)) + 0.5 * mu * w @ w)
    g = -(x.T @ (y / (1.0 + np.exp(z)))) + mu * w
    gn = float(np.abs(g).max(initial=0.0))
    if gn > tol:
        return f"gradient norm {gn:.2e} exceeds {tol:g}"
    fr = float(got["f"])
    if abs(fr - f) > 1e-9 * (1.0 + abs(f)):
        return f"reported f={fr!r} is not the loss at w ({f!r})"
    return ""


def additive(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """Quadrature: the total equals the sum of the parts (relative to their sizes)."""
    parts, total = _vec(got["parts"]), float(got["total"])
    gap = abs(total - parts.sum())
    scale = 1.0 + np.abs(parts).sum()
    return "" if gap <= tol * scale else f"total differs from the sum of parts by {gap:.2e}"


def fit_optimal(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """Exponential decay fit: the candidate's sum of squares is no worse than the reference's
    (to ``tol`` relative): a fit that stopped early or fits another model is worse."""
    t, y = _vec(params["t"]), _vec(params["y"])

    def sse(p: Any) -> float:
        a, k, c = float(p["A"]), float(p["k"]), float(p["c"])
        with np.errstate(all="ignore"):
            r = a * np.exp(-k * t) + c - y
        return float(r @ r)

    mine, best = sse(got), sse(expected)
    if not np.isfinite(mine) or mine > best * (1.0 + tol) + 1e-14:
        return f"sum of squares {mine:.10g} is worse than the optimum {best:.10g}"
    return ""


def conserved(params: Any, got: Any, expected: Any, *, quantity: str, tol: float) -> str:
    """A conserved quantity stays at its initial value along the returned trajectory."""
    q0, q = _QUANTITIES[quantity](params, got)
    drift = float(np.abs(q - q0).max(initial=0.0))
    scale = 1.0 + abs(q0)
    return "" if drift <= tol * scale else f"{quantity} drifts by {drift:.2e} (allowed {tol:g})"


def _lotka_volterra(params: Any, got: Any) -> tuple[float, np.ndarray]:
    a, b, c, d = (float(params[k]) for k in ("alpha", "beta", "gamma", "delta"))

    def v(x: Any, y: Any) -> Any:
        return d * x - c * np.log(x) + b * y - a * np.log(y)

    x, y = _vec(got["x"]), _vec(got["y"])
    if x.shape != y.shape or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("populations must be positive and as many as the times")
    return float(v(float(params["x0"]), float(params["y0"]))), v(x, y)


def _pendulum(params: Any, got: Any) -> tuple[float, np.ndarray]:
    g, length = float(params["g"]), float(params["length"])

    def e(th: Any, om: Any) -> Any:
        return 0.5 * length**2 * om**2 - g * length * np.cos(th)

    th, om = _vec(got["theta"]), _vec(got["omega"])
    if th.shape != om.shape:
        raise ValueError("theta and omega differ in length")
    return float(e(float(params["theta0"]), float(params["omega0"]))), e(th, om)


def _heat(params: Any, got: Any) -> tuple[float, np.ndarray]:
    u0, u = _vec(params["u0"]), _vec(got["u"])
    if u.shape != u0.shape:
        raise ValueError("u must have one value per cell")
    return float(u0.sum()), np.array([u.sum()])


def _nbody_state(params: Any, got: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = _vec(params["masses"])
    r, v = _vec(got["r"]), _vec(got["v"])
    if r.ndim != 2 or r.shape != v.shape or r.shape[1] != 2 * m.shape[0]:
        raise ValueError("r and v need one list of 2*len(masses) numbers per time")
    return m, r.reshape(len(r), -1, 2), v.reshape(len(v), -1, 2)


def _nbody_energy_of(m: np.ndarray, r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Kinetic plus potential energy of states ``r``, ``v`` of shape (times, bodies, 2)."""
    kinetic = 0.5 * np.sum(m[None, :] * np.sum(v * v, axis=2), axis=1)
    d = np.linalg.norm(r[:, None, :, :] - r[:, :, None, :], axis=3)
    i, j = np.triu_indices(len(m), 1)
    return np.asarray(kinetic - np.sum(m[i] * m[j] / d[:, i, j], axis=1))


def _nbody_energy(params: Any, got: Any) -> tuple[float, np.ndarray]:
    m, r, v = _nbody_state(params, got)
    r0, v0 = _vec(params["positions"])[None], _vec(params["velocities"])[None]
    return float(_nbody_energy_of(m, r0, v0)[0]), _nbody_energy_of(m, r, v)


def _nbody_angular(params: Any, got: Any) -> tuple[float, np.ndarray]:
    m, r, v = _nbody_state(params, got)
    r0, v0 = _vec(params["positions"])[None], _vec(params["velocities"])[None]

    def lz(r: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.asarray(
            np.sum(m[None, :] * (r[..., 0] * v[..., 1] - r[..., 1] * v[..., 0]), axis=1)
        )

    return float(lz(r0, v0)[0]), lz(r, v)


_QUANTITIES: dict[str, Callable[[Any, Any], tuple[float, np.ndarray]]] = {
    "nbody-energy": _nbody_energy,
    "nbody-angular-momentum": _nbody_angular,
    "lotka-volterra": _lotka_volterra,
    "energy": _pendulum,
    "total-heat": _heat,
}


def max_principle(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """Heat equation: no temperature leaves ``[min u0, max u0]``."""
    u0, u = _vec(params["u0"]), _vec(got["u"])
    lo, hi = u0.min() - tol, u0.max() + tol
    return "" if u.min() >= lo and u.max() <= hi else "a temperature left [min u0, max u0]"


def norm_decreasing(params: Any, got: Any, expected: Any, *, tol: float) -> str:
    """``y' = Ay`` with A symmetric negative definite: ``||y(t)||`` never grows."""
    y0, ys = _vec(params["y0"]), _vec(got["y"])
    if ys.ndim != 2 or ys.shape[1] != y0.shape[0]:
        raise ValueError("y must hold one state per time")
    norms = np.concatenate([[np.linalg.norm(y0)], np.linalg.norm(ys, axis=1)])
    grow = float(np.max(np.diff(norms), initial=0.0))
    return "" if grow <= tol * (1.0 + norms[0]) else f"||y|| grows by {grow:.2e}"


#: The invariants by name, as tasks list them.
INVARIANTS: dict[str, Check] = {
    "residual": residual,
    "kepler": kepler,
    "fixed-point": fixed_point,
    "stationary": stationary,
    "additive": additive,
    "fit-optimal": fit_optimal,
    "conserved": conserved,
    "max-principle": max_principle,
    "norm-decreasing": norm_decreasing,
}


def describe_invariant(spec: dict[str, Any]) -> str:
    """One line for a prompt: the invariant's docstring summary and its options."""
    check = INVARIANTS.get(str(spec.get("name")))
    first = (check.__doc__ or "").strip().split("\n\n")[0] if check else "unknown"
    options = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name")
    return f"{' '.join(first.split())} ({options})"


def check_invariants(
    specs: list[dict[str, Any]], params: Any, got: Any, expected: Any
) -> list[str]:
    """Why each failing invariant of ``specs`` fails on ``got`` (empty: all hold)."""
    failures = []
    for spec in specs:
        options = {k: v for k, v in spec.items() if k != "name"}
        check = INVARIANTS.get(str(spec.get("name")))
        if check is None:
            failures.append(f"unknown invariant {spec.get('name')!r}")
            continue
        try:
            with np.errstate(all="ignore"):
                why = check(params, got, expected, **options)
        except Exception as e:  # the candidate's numbers must never crash the verifier
            why = f"cannot be checked on the answer ({type(e).__name__}: {str(e)[:80]})"
        if why:
            failures.append(f"{spec.get('name')}: {why}")
    return failures
