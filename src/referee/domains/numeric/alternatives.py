"""Right answers by other methods: what the tolerance policy must let through.

For each problem structure, programs that solve it correctly by a method other than the
reference's (RK45 or a hand-written RK4 instead of DOP853, QR instead of LU, Newton instead of
Brent, BFGS instead of Newton, Gauss-Legendre instead of QUADPACK, RK4 time stepping
instead of the FFT). The tests (``tests/domains/numeric/test_tolerance_policy.py``) and the
bench judge them: each must pass, or the tolerance is too tight for honest work.
"""

from __future__ import annotations

__all__ = ["ALTERNATIVES"]

_RK4 = """
def rk4(f, y, t0, t1, steps):
    import numpy as np
    h = (t1 - t0) / steps
    y = np.array(y, dtype=float)
    t = t0
    for _ in range(steps):
        k1 = f(t, y); k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2); k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return y
"""

#: ``unit -> {method name: program}``.
ALTERNATIVES: dict[str, dict[str, str]] = {
    "num-ode/lotka-volterra": {
        "rk45": """from scipy.integrate import solve_ivp
def solve(p):
    a, b, c, d = p["alpha"], p["beta"], p["gamma"], p["delta"]
    f = lambda t, z: [a*z[0] - b*z[0]*z[1], d*z[0]*z[1] - c*z[1]]
    s = solve_ivp(f, (0, p["times"][-1]), [p["x0"], p["y0"]], t_eval=p["times"],
                  rtol=1e-10, atol=1e-12)
    return {"x": list(s.y[0]), "y": list(s.y[1])}
""",
        "hand-rk4": _RK4
        + """
def solve(p):
    import numpy as np
    a, b, c, d = p["alpha"], p["beta"], p["gamma"], p["delta"]
    f = lambda t, z: np.array([a*z[0] - b*z[0]*z[1], d*z[0]*z[1] - c*z[1]])
    y, t, xs, ys = [p["x0"], p["y0"]], 0.0, [], []
    for t1 in p["times"]:
        y = rk4(f, y, t, t1, max(1, int((t1 - t) / 2e-3)))
        t = t1
        xs.append(y[0]); ys.append(y[1])
    return {"x": xs, "y": ys}
""",
    },
    "num-ode/stiff-linear": {
        "radau": """import numpy as np
from scipy.integrate import solve_ivp
def solve(p):
    a = np.array(p["A"])
    s = solve_ivp(lambda t, y: a @ y, (0, p["times"][-1]), p["y0"], method="Radau",
                  t_eval=p["times"], rtol=1e-11, atol=1e-13, jac=a)
    return {"y": s.y.T.tolist()}
""",
        "eigh": """import numpy as np
def solve(p):
    lam, q = np.linalg.eigh(np.array(p["A"]))
    c = q.T @ np.array(p["y0"])
    return {"y": [(q @ (np.exp(lam * t) * c)).tolist() for t in p["times"]]}
""",
    },
    "num-linear/dense": {
        "qr": """import numpy as np
from scipy.linalg import qr, solve_triangular
def solve(p):
    q, r = qr(np.array(p["A"]))
    return {"x": solve_triangular(r, q.T @ np.array(p["b"])).tolist()}
""",
        "lstsq": """import numpy as np
def solve(p):
    return {"x": np.linalg.lstsq(np.array(p["A"]), np.array(p["b"]), rcond=None)[0].tolist()}
""",
    },
    "num-root/kepler": {
        "newton": """import math
def solve(p):
    e, out = p["e"], []
    for m in p["M"]:
        x = m if e < 0.8 else math.pi * (1 if m >= 0 else -1)
        for _ in range(100):
            dx = (x - e*math.sin(x) - m) / (1 - e*math.cos(x))
            x -= dx
            if abs(dx) < 1e-15:
                break
        out.append(x)
    return {"E": out}
""",
    },
    "num-root/contraction-system": {
        "fixed-point": """import numpy as np
def solve(p):
    bm, c, b = np.array(p["B"]), p["c"], np.array(p["b"])
    x = b.copy()
    for _ in range(100000):
        nx = b - c * np.tanh(bm @ x)
        if np.abs(nx - x).max() < 1e-15:
            x = nx
            break
        x = nx
    return {"x": x.tolist()}
""",
        "scipy-root": """import numpy as np
from scipy.optimize import root
def solve(p):
    bm, c, b = np.array(p["B"]), p["c"], np.array(p["b"])
    r = root(lambda x: x + c*np.tanh(bm @ x) - b, b, tol=1e-14)
    return {"x": r.x.tolist()}
""",
    },
    "num-optimize/logistic": {
        "bfgs": """import numpy as np
from scipy.optimize import minimize
def solve(p):
    X, y, mu = np.array(p["X"]), np.array(p["y"]), p["mu"]
    f = lambda w: np.sum(np.logaddexp(0, -y * (X @ w))) + 0.5*mu*w @ w
    g = lambda w: -(X.T @ (y / (1 + np.exp(y * (X @ w))))) + mu*w
    r = minimize(f, np.zeros(X.shape[1]), jac=g, method="BFGS", options={"gtol": 1e-11})
    return {"w": r.x.tolist(), "f": float(f(r.x))}
""",
    },
    "num-quadrature/oscillatory": {
        "gauss-legendre": """import numpy as np
def solve(p):
    a, w, c, xs = p["a"], p["omega"], p["c"], p["breaks"]
    f = lambda x: np.exp(-a*x*x) * np.cos(w*x) + c / (1 + x*x)
    nodes, weights = np.polynomial.legendre.leggauss(200)
    def q(lo, hi):
        edges = np.linspace(lo, hi, 9)
        total = 0.0
        for l, h in zip(edges, edges[1:]):
            x = (h - l) / 2 * nodes + (h + l) / 2
            total += (h - l) / 2 * weights @ f(x)
        return float(total)
    parts = [q(l, h) for l, h in zip(xs, xs[1:])]
    return {"parts": parts, "total": q(xs[0], xs[-1])}
""",
    },
    "num-fit/exp-decay": {
        "curve-fit": """import numpy as np
from scipy.optimize import curve_fit
def solve(p):
    t, y = np.array(p["t"]), np.array(p["y"])
    model = lambda t, A, k, c: A*np.exp(-k*t) + c
    best = None
    for k0 in (0.3, 1.0, 3.0):
        try:
            q, _ = curve_fit(model, t, y, p0=[y[0] - y[-1], k0, y[-1]], xtol=1e-14,
                             ftol=1e-14, gtol=1e-14, maxfev=50000)
        except RuntimeError:
            continue
        s = np.sum((model(t, *q) - y) ** 2)
        if best is None or s < best[0]:
            best = (s, q)
    A, k, c = best[1]
    return {"A": A, "k": k, "c": c}
""",
    },
    "num-simulate/heat-periodic": {
        "expm": """import numpy as np
from scipy.linalg import expm
def solve(p):
    u0 = np.array(p["u0"]); n = len(u0); dx = p["length"] / n
    L = -2*np.eye(n) + np.eye(n, k=1) + np.eye(n, k=-1)
    L[0, -1] = L[-1, 0] = 1
    return {"u": (expm(p["T"] * p["D"] / dx**2 * L) @ u0).tolist()}
""",
        "rk4-method-of-lines": """import numpy as np
def solve(p):
    u = np.array(p["u0"], dtype=float); n = len(u); dx = p["length"] / n
    r = p["D"] / dx**2
    f = lambda u: r * (np.roll(u, 1) - 2*u + np.roll(u, -1))
    steps = int(np.ceil(p["T"] * r / 0.05))
    h = p["T"] / steps
    for _ in range(steps):
        k1 = f(u); k2 = f(u + h/2*k1); k3 = f(u + h/2*k2); k4 = f(u + h*k3)
        u = u + h/6*(k1 + 2*k2 + 2*k3 + k4)
    return {"u": u.tolist()}
""",
    },
    "num-simulate/pendulum": {
        "rk45": """import math
from scipy.integrate import solve_ivp
def solve(p):
    k = p["g"] / p["length"]
    s = solve_ivp(lambda t, z: [z[1], -k*math.sin(z[0])], (0, p["times"][-1]),
                  [p["theta0"], p["omega0"]], t_eval=p["times"], rtol=1e-10, atol=1e-12)
    return {"theta": s.y[0].tolist(), "omega": s.y[1].tolist()}
""",
        "hand-rk4": _RK4
        + """
def solve(p):
    import numpy as np
    k = p["g"] / p["length"]
    f = lambda t, z: np.array([z[1], -k*np.sin(z[0])])
    y, t, th, om = [p["theta0"], p["omega0"]], 0.0, [], []
    for t1 in p["times"]:
        y = rk4(f, y, t, t1, max(1, int((t1 - t) / 2e-3)))
        t = t1
        th.append(y[0]); om.append(y[1])
    return {"theta": th, "omega": om}
""",
    },
    "num-simulate/n-body": {
        "rk45-loops": """import numpy as np
from scipy.integrate import solve_ivp
def solve(params):
    m = np.array(params["masses"]); n = len(m)
    def f(t, z):
        r = z[:2*n].reshape(n, 2); v = z[2*n:]
        a = np.zeros((n, 2))
        for i in range(n):
            for j in range(n):
                if i != j:
                    d = r[j] - r[i]
                    a[i] += m[j] * d / np.linalg.norm(d)**3
        return np.concatenate([v, a.ravel()])
    z0 = np.concatenate([np.ravel(params["positions"]), np.ravel(params["velocities"])])
    s = solve_ivp(f, (0, params["times"][-1]), z0, t_eval=params["times"], rtol=1e-10,
                  atol=1e-12)
    return {"r": s.y[:2*n].T.tolist(), "v": s.y[2*n:].T.tolist()}
""",
    },
}
