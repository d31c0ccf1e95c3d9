"""The simulators agree with a general-purpose ODE solver, and the difficulty knob moves."""

import math
import random

import pytest
from scipy.integrate import solve_ivp

from referee.domains.lab.circuits import CIRCUITS
from referee.domains.lab.kinetics import KINETICS
from referee.domains.lab.pharmacology import PHARMACOLOGY
from referee.domains.lab.population import POPULATION
from referee.domains.lab.system import Settings, corner_conditions

R = 8.314462618e-3


def _ode(rhs, y0, times):
    solution = solve_ivp(rhs, (0, max(times)), y0, t_eval=times, rtol=1e-10, atol=1e-12)
    return solution.y


def _close(got, want, scale):
    assert max(abs(g - w) for g, w in zip(got, want, strict=True)) <= 1e-5 * scale, (got, want)


@pytest.mark.parametrize("n", [0.6, 1.0, 1.7, 2.5])
def test_the_power_law_closed_form_solves_its_equation(n):
    params, conditions = {"k_ref": 0.03, "n": n, "Ea_kJ": 60.0}, {"A0": 1.5, "T": 312.0}
    k = 0.03 * math.exp(-60.0 / R * (1 / 312.0 - 1 / 300.0))
    times = [1.0, 5.0, 20.0, 60.0]
    want = _ode(lambda t, y: [-k * max(y[0], 0.0) ** n], [1.5], times)[0]
    _close(KINETICS.simulate("power-law", params, conditions, times), want, 1.5)


def test_the_saturable_rate_law_solves_its_equation():
    params, conditions = {"vmax_ref": 0.04, "Km": 0.6, "Ea_kJ": 45.0}, {"A0": 1.8, "T": 295.0}
    v = 0.04 * math.exp(-45.0 / R * (1 / 295.0 - 1 / 300.0))
    times = [0.5, 10.0, 30.0, 60.0]
    want = _ode(lambda t, y: [-v * y[0] / (0.6 + y[0])], [1.8], times)[0]
    _close(KINETICS.simulate("saturable", params, conditions, times), want, 1.8)


@pytest.mark.parametrize(
    ("theta", "h"), [(1.0, 0.1), (0.3, 0.0), (2.5, 0.2), (1.4, 0.7), (0.8, 0.5)]
)
def test_the_theta_logistic_closed_form_solves_its_equation(theta, h):
    # h = 0.5 with r = 0.5: the growth exactly balanced; h = 0.7: driven out.
    r, k, n0 = 0.5, 900.0, 40.0
    law = "logistic" if theta == 1.0 else "theta-logistic"
    params = {"r": r, "K": k} | ({} if law == "logistic" else {"theta": theta})
    times = [1.0, 7.0, 25.0, 60.0]
    want = _ode(lambda t, y: [r * y[0] * (1 - (y[0] / k) ** theta) - h * y[0]], [n0], times)[0]
    _close(POPULATION.simulate(law, params, {"N0": n0, "h": h}, times), want, k)


@pytest.mark.parametrize("route", ["iv", "oral"])
def test_both_pharmacokinetic_laws_solve_their_equations(route):
    dose, v, ka, f = 150.0, 40.0, 1.3, 0.7
    times = [0.25, 2.0, 8.0, 24.0]
    start = [f * dose, 0.0] if route == "oral" else [0.0, dose]
    linear = {"V": v, "ke": 0.2, "ka": ka, "F": f}
    want = _ode(lambda t, y: [-ka * y[0], ka * y[0] - 0.2 * y[1]], start, times)[1] / v
    got = PHARMACOLOGY.simulate("linear", linear, {"dose": dose, "route": route}, times)
    _close(got, want, dose / v)
    saturable = {"V": v, "vmax": 12.0, "Km": 2.0, "ka": ka, "F": f}

    def rhs(t, y):
        c = y[1] / v
        return [-ka * y[0], ka * y[0] - 12.0 * c / (2.0 + c)]

    want = _ode(rhs, start, times)[1] / v
    got = PHARMACOLOGY.simulate("saturable", saturable, {"dose": dose, "route": route}, times)
    # Fixed-step Runge-Kutta (0.1 h): within 1e-4 of the peak, far below any noise or tolerance.
    assert max(abs(g - w) for g, w in zip(got, want, strict=True)) <= 1e-4 * dose / v


def test_absurd_parameters_give_numbers_or_nan_never_an_exception():
    for system in (KINETICS, POPULATION, PHARMACOLOGY, CIRCUITS):
        for law in system.laws.values():
            for pick in (lambda p: p.lo, lambda p: p.hi):
                params = {p.name: pick(p) for p in law.params}
                conditions = corner_conditions(system, 1, random.Random(0))[0]
                values = system.simulate(law.name, params, conditions, [0.0, 1.0, system.t_max])
                assert len(values) == 3 and all(isinstance(v, float) for v in values)


def test_the_difficulty_knob_shrinks_the_budget_raises_the_noise_and_hides_the_law():
    easy, hard = Settings.at(0.0), Settings.at(1.0)
    assert (easy.budget, easy.noise, easy.reach, easy.law_hidden) == (8, 0.03, 0.0, False)
    assert (hard.budget, hard.noise, hard.reach, hard.law_hidden) == (4, 0.1, 1.0, True)
    assert Settings.at(7.0) == hard and Settings.at(-1.0) == easy


def test_noise_is_relative_with_a_floor_never_negative():
    stream = random.Random(0)
    values = KINETICS.noisy([1.0] * 2000 + [0.0] * 2000, 0.1, stream)
    spread = math.sqrt(sum((v - 1.0) ** 2 for v in values[:2000]) / 2000)
    assert 0.09 < spread < 0.11
    assert min(values) >= 0.0 and max(values[2000:]) < 0.05


def test_the_power_law_is_continuous_through_first_order():
    conditions, times = {"A0": 1.5, "T": 300.0}, [5.0, 20.0, 60.0]

    def at(n):
        return KINETICS.simulate(
            "power-law", {"k_ref": 0.03, "n": n, "Ea_kJ": 50.0}, conditions, times
        )

    for near in (1 - 1e-12, 1 + 1e-12, 1 - 1e-7, 1 + 1e-7):
        _close(at(near), at(1.0), 1e-1)


@pytest.mark.parametrize("total", [25.0, 80.0, 2 * math.sqrt(20e-3 / 4e-6), 420.0])
def test_both_circuit_laws_solve_their_equations(total):
    # R = 20 ohm, L = 20 mH, C = 4 uF: ringing below R + Rs = 2 sqrt(L/C) = 141.4 ohm (the
    # third case, critically damped), over-damped above.
    r, l_h, c_f, vs = 20.0, 20e-3, 4e-6, 3.0
    times = [0.1, 0.7, 2.0, 9.0]  # ms
    conditions = {"Vs": vs, "Rs": total - r}

    def rhs(t, y):  # y = (V, dV/dt), t in ms
        v, dv = y
        return [dv, (vs - v - total * c_f * 1e3 * dv) / (l_h * c_f * 1e6)]

    want = _ode(rhs, [0.0, 0.0], times)[0]
    got = CIRCUITS.simulate("rlc", {"R": r, "L": 20.0, "C": 4.0}, conditions, times)
    _close(got, want, vs)
    rc = _ode(lambda t, y: [(vs - y[0]) / (total * c_f * 1e3)], [0.0], times)[0]
    _close(CIRCUITS.simulate("rc", {"R": r, "C": 4.0}, conditions, times), rc, vs)
