"""Host-side comparison and invariants: plain numbers only, NaN never equal, malformed answers
fail instead of crashing the verifier."""

import math

import pytest

from referee.domains.numeric.compare import Tolerance, finite_numbers, within
from referee.domains.numeric.invariants import INVARIANTS, check_invariants


def test_within_is_numpy_isclose_one_sided_and_structural():
    assert within({"x": [1.0, 2.0]}, {"x": [1.0, 2.0 + 1e-7]}, rtol=1e-6, atol=0) == ""
    assert "differs" in within({"x": [1.0]}, {"x": [1.1]}, rtol=1e-6, atol=0)
    assert "expected keys" in within({"x": 1.0}, {"x": 1.0, "y": 2.0}, rtol=1, atol=1)
    assert "expected 2 values" in within([1.0, 2.0], [1.0], rtol=1, atol=1)
    assert "a bool" in within(1.0, True, rtol=1, atol=1)
    assert "a str" in within(1.0, "1.0", rtol=1, atol=1)
    assert within(3, 3.0 + 1e-12, rtol=1e-9, atol=0) == ""


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 10**400])
def test_non_finite_answers_never_equal(bad):
    assert within(1.0, bad, rtol=1e9, atol=1e9) != ""
    assert within(math.inf, bad, rtol=1e9, atol=1e9) != ""


def test_deeply_nested_answers_fail_cleanly():
    deep: list = [1.0]
    for _ in range(100):
        deep = [deep]
    assert "nested too deeply" in within(deep, deep, rtol=1, atol=1)
    assert "nested too deeply" in finite_numbers(deep)


def test_tolerance_is_checked():
    assert Tolerance(1e-6, 0) == {"rtol": 1e-6, "atol": 0.0}
    for rtol, atol in [(0, 0), (-1, 0), (math.nan, 1), (1, math.inf), ("1", 0), (True, 0)]:
        with pytest.raises(ValueError):
            Tolerance(rtol, atol)


def test_finite_numbers_names_the_place():
    assert finite_numbers({"a": [1.0, {"b": math.nan}]}) == "a[1].b: not a finite number"
    assert "not a number" in finite_numbers({"a": None})
    assert finite_numbers({"a": [1, 2.5]}) == ""


def test_residual_invariant_is_sharper_than_a_loose_tolerance():
    params = {"A": [[1.0, 0.0], [0.0, 1e-8]], "b": [1.0, 1e-8]}
    assert check_invariants([{"name": "residual", "tol": 1e-11}], params, {"x": [1, 1]}, None) == []
    broken = check_invariants(
        [{"name": "residual", "tol": 1e-11}], params, {"x": [1 + 1e-7, 1.0]}, None
    )
    assert broken and "relative residual" in broken[0]


@pytest.mark.parametrize(
    "got",
    [None, "x", [1, 2], {"x": "a"}, {"x": [[1], [2, 3]]}, {"x": [math.nan, 1.0]}, {"y": [1.0]}],
)
def test_every_invariant_fails_on_malformed_answers_without_raising(got):
    params = {
        "A": [[1.0, 0.0], [0.0, 1.0]],
        "b": [1.0, 1.0],
        "e": 0.5,
        "M": [1.0, 2.0],
        "B": [[1.0, 0.0], [0.0, 1.0]],
        "c": 0.5,
        "X": [[1.0, 0.0]],
        "y": [1.0],
        "mu": 0.1,
        "t": [0.0, 1.0],
        "alpha": 1,
        "beta": 1,
        "gamma": 1,
        "delta": 1,
        "x0": 1,
        "y0": [1, 1],
        "g": 9.81,
        "length": 1.0,
        "theta0": 0.1,
        "omega0": 0.0,
        "u0": [1.0, 2.0],
    }
    expected = {"A": 1.0, "k": 1.0, "c": 0.0}
    for name in INVARIANTS:
        specs = [{"name": name, "tol": 1e-9}]
        if name == "conserved":
            specs = [
                {"name": name, "quantity": q, "tol": 1e-9}
                for q in ("lotka-volterra", "energy", "total-heat")
            ]
        assert check_invariants(specs, params, got, expected), (name, got)


def test_unknown_invariant_fails():
    assert check_invariants([{"name": "nope"}], {}, {}, None) == ["unknown invariant 'nope'"]


def test_registering_the_domain_loads_neither_numpy_nor_scipy():
    import subprocess
    import sys

    code = (
        "import sys, referee.domains.numeric\n"
        "from referee.envs import env_names\n"
        "from referee.tasks.sources import source_names\n"
        "assert 'numeric' in env_names() and 'numeric-rows' in source_names()\n"
        "print('numpy' in sys.modules, 'scipy' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]
