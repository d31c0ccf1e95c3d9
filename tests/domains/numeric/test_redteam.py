"""Exploits score no more than the empty answer and never pass; the tolerance policy lets
right answers by other methods through."""

from __future__ import annotations

import pytest

from referee.domains.numeric.alternatives import ALTERNATIVES
from referee.domains.numeric.redteam import EXPLOITS


@pytest.fixture(scope="module")
def corpus_task(tasks):
    from referee.tasks.model import Task

    t = tasks["num-simulate/pendulum"]
    return Task.create(
        name="redteam/numeric-pendulum-v1",
        prompt=t.prompt,
        domain=t.domain,
        kind=t.kind,
        payload={**t.payload, "time_limit_s": 0.25},  # the resource exploits cost ~1 s each
        hidden=t.hidden,
        answer_format=t.answer_format,
    )


def test_every_exploit_is_held(corpus_task, numeric_verifier):
    baseline = numeric_verifier.verify(corpus_task, "").reward
    assert baseline == 0.0
    for exploit in EXPLOITS:
        v = numeric_verifier.verify(corpus_task, exploit.make(corpus_task))
        assert v.infra_error is None, (exploit.name, v.infra_error)
        assert not v.passed and v.reward <= baseline, (exploit.name, v.tests)


def test_the_corpus_is_registered_for_the_domain():
    from referee.domains import corpus_names

    assert "numeric" in corpus_names()


@pytest.mark.parametrize(
    ("unit", "method"),
    [
        ("num-ode/lotka-volterra", "rk45"),
        ("num-ode/stiff-linear", "eigh"),
        ("num-linear/dense", "qr"),
        ("num-root/kepler", "newton"),
        ("num-root/contraction-system", "fixed-point"),
        ("num-optimize/logistic", "bfgs"),
        ("num-quadrature/oscillatory", "gauss-legendre"),
        ("num-fit/exp-decay", "curve-fit"),
        ("num-simulate/heat-periodic", "expm"),
        ("num-simulate/pendulum", "hand-rk4"),
        ("num-simulate/n-body", "rk45-loops"),
    ],
)
def test_a_right_answer_by_another_method_passes(tasks, numeric_verifier, unit, method):
    v = numeric_verifier.verify(tasks[unit], ALTERNATIVES[unit][method])
    assert v.passed, v.tests


def test_default_solver_tolerances_are_too_loose(tasks, numeric_verifier):
    task = tasks["num-simulate/pendulum"]
    loose = task.hidden["reference"].replace(
        'method="DOP853", t_eval=times, rtol=1e-12, atol=1e-12', "t_eval=times"
    )
    assert loose != task.hidden["reference"]
    assert numeric_verifier.verify(task, loose).reward == 0.0
